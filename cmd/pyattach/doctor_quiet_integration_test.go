package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// nobodyDir is a new directory that uid 65534 (nobody) can enter and
// read, holding a copy of pyattach; removed when the test ends.
func nobodyDir(t *testing.T) (dir, bin string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "pyattach-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "pyattach")
	testenv.CopyFile(t, pyattachBin(t), bin, 0o755)
	return dir, bin
}

// asNobody runs pyattach as uid and gid 65534 in dir, with HOME there,
// and returns what it printed on stdout.
func asNobody(t *testing.T, dir, bin string, args ...string) string {
	t.Helper()
	setpriv := testenv.Need(t, "setpriv")
	cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "XDG_CACHE_HOME=", "XDG_CONFIG_HOME=", "XDG_DATA_HOME=", "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	if stderr.Len() > 0 {
		t.Logf("stderr of %v:\n%s", cmd.Args, stderr.String())
	}
	return string(out)
}

// statusLines returns doctor's check lines (not their details or
// fixes), in order.
func statusLines(out string) []string {
	return regexp.MustCompile(`(?m)^(ok  |WARN|FAIL|skip|note)  .*$`).FindAllString(out, -1)
}

// TestDoctorQuietOnWorkingSetup: a non-root user's --copies venv of
// Debian's Python 3.11, where py-bt works through pyattach, gets one
// warning from doctor, that plain gdb -p has no py-bt there (the venv's
// python is a copy); the facts that change nothing (-O3 and LTO,
// CPython's C sources not here, lldb 14's -P) are notes printed with
// --verbose. A stripped copy with no debug file anywhere still warns,
// first. A PID that does not exist says so, and nothing about lldb.
func TestDoctorQuietOnWorkingSetup(t *testing.T) {
	testenv.NeedRoot(t, "to run doctor as uid 65534")
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	strip := testenv.Need(t, "strip")
	py := testenv.Debian(t)
	dir, bin := nobodyDir(t)
	testenv.Venv(t, py.Exe, filepath.Join(dir, "venv"), "--copies")
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	}); err != nil {
		t.Fatal(err)
	}

	quiet := asNobody(t, dir, bin, "--offline", "doctor", "venv")
	for _, l := range statusLines(quiet) {
		copyWarning := regexp.MustCompile(`^WARN  venv +plain gdb -p has no py-bt here: \S+/venv/bin/python is a copy of ` + regexp.QuoteMeta(py.Exe)).MatchString(l)
		if !copyWarning && (strings.HasPrefix(l, "WARN") || strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "note")) {
			t.Errorf("doctor on a working --copies venv: %q\n%s", l, quiet)
		}
	}
	if !regexp.MustCompile(`(?m)^WARN  venv +plain gdb -p has no py-bt here`).MatchString(quiet) {
		t.Errorf("doctor on a working --copies venv does not say plain gdb -p has no py-bt:\n%s", quiet)
	}
	if !regexp.MustCompile(`(?m)^ok    pybt +py-bt: CPython's extension \S+ answers`).MatchString(quiet) {
		t.Errorf("doctor on a working --copies venv: no ok pybt line:\n%s", quiet)
	}
	verbose := asNobody(t, dir, bin, "--offline", "doctor", "--verbose", "venv")
	for _, want := range []string{
		`(?m)^note  debug\.python +.*optimised with -O3 and LTO: .* in plain gdb \(pyattach's walker reads them\)$`,
		`(?m)^note  sources +\d+ source files under /build/\S+ are not on this machine: list in those native frames`,
	} {
		if !regexp.MustCompile(want).MatchString(verbose) {
			t.Errorf("doctor --verbose lacks %s:\n%s", want, verbose)
		}
	}
	if ls := statusLines(verbose); len(ls) == 0 || !strings.HasPrefix(ls[len(ls)-1], "note") {
		t.Errorf("doctor --verbose: notes come last:\n%s", verbose)
	}

	// No debug information and no build-id to find it by: native frames
	// show as ??, a warning, before everything else.
	stripped := filepath.Join(dir, "stripped", "python3.11")
	os.MkdirAll(filepath.Dir(stripped), 0o755)
	mustRunIn(t, "strip", "", nil, strip, "--strip-all", "--remove-section=.note.gnu.build-id", "-o", stripped, py.Exe)
	os.Chmod(stripped, 0o755)
	out := asNobody(t, dir, bin, "--offline", "doctor", stripped)
	ls := statusLines(out)
	if len(ls) == 0 || !regexp.MustCompile(`^WARN  debug\.python3\.11 +\S+ has no debug information`).MatchString(ls[0]) {
		t.Errorf("doctor on a stripped interpreter: the missing debug information does not come first:\n%s", out)
	}
	if strings.Contains(out, "the sources of 0 modules are found") || regexp.MustCompile(`(?m)^ok    sources`).MatchString(out) {
		t.Errorf("doctor on a stripped interpreter: sources found in no module:\n%s", out)
	}

	out = asNobody(t, dir, bin, "--offline", "doctor", "999999")
	if ls := statusLines(out); len(ls) == 0 || !strings.HasPrefix(ls[0], "FAIL  target") || strings.Contains(out, "lldb") {
		t.Errorf("doctor 999999:\n%s", out)
	}
}
