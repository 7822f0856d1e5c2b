package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/detect/testenv"
)

// Bytes that are not UTF-8 in file names given on the command line reach
// every consumer exactly (kong's mappers used to turn them into U+FFFD),
// or are refused with the bytes escaped where the consumer cannot carry
// them (JSON, gdb and lldb scripts); text output shows them escaped as
// \xNN (safetext.Escape: a stray byte may be half of a terminal escape).
func TestSecurityNonUTF8Args(t *testing.T) {
	dir := t.TempDir()
	py := fakePython(t, dir)
	exe := filepath.Join(dir, "py\xff")
	data, err := os.ReadFile(py)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	dd := filepath.Join(dir, "dd\xfe")
	if err := os.Mkdir(dd, 0o755); err != nil {
		t.Fatal(err)
	}
	env := lldbEnv(dir, filepath.Join(dir, "cache"))
	bin := pyattachBin(t)
	run := func(args ...string) (string, error) {
		t.Helper()
		out, err := runIn(t, dir, env, bin, args...)
		if strings.Contains(out, "\uFFFD") {
			t.Errorf("pyattach %q printed U+FFFD:\n%s", args, out)
		}
		return out, err
	}

	shown := safetext.Escape(exe) // dir/py\xff, as text
	if shown != filepath.Join(dir, `py\xff`) {
		t.Fatalf("safetext.Escape(%q) = %q", exe, shown)
	}
	exeLine := regexp.MustCompile(`(?m)^exe +` + regexp.QuoteMeta(shown) + `$`)
	out, err := run("--offline", "resolve", exe)
	if err != nil || !exeLine.MatchString(out) {
		t.Errorf("resolve %q: %v\n%s", exe, err, out)
	}
	out, err = run("--offline", "--debug-dir", dd, "debuginfo", exe)
	if err != nil || !strings.Contains(out, shown+"  ") {
		t.Errorf("debuginfo %q: %v\n%s", exe, err, out)
	}
	// The --debug-dir=DIR form and a relative target (made absolute).
	out, err = run("--offline", "--debug-dir="+dd, "resolve", "py\xff")
	if err != nil || !exeLine.MatchString(out) {
		t.Errorf("resolve py\\xff: %v\n%s", err, out)
	}

	for _, args := range [][]string{
		{"--offline", "resolve", "--json", exe},
		{"--offline", "--debug-dir", dd, "debuginfo", "--json", py},
	} {
		out, err = run(args...)
		if err == nil || !strings.Contains(out, `\x`) || !strings.Contains(out, "is not valid UTF-8, which JSON cannot carry") || !strings.Contains(out, "hint: ") {
			t.Errorf("pyattach %q: %v\n%s", args, err, out)
		}
	}

	testenv.Need(t, "gdb")
	out, err = run("--offline", "--debug-dir", dd, "--print", "gdb", "--args", py)
	if err == nil || !strings.Contains(out, `debug dir "`+dir+`/dd\xfe": not valid UTF-8`) {
		t.Errorf("--print gdb with --debug-dir %q: %v\n%s", dd, err, out)
	}
	// A program argument reaches the program exactly, through gdb and lldb.
	out, err = run("--offline", "gdb", "-batch", "-ex", "run", "--args", py, "a\xffb")
	if err != nil || !strings.Contains(crlf(out), "arg:61ff62\n") {
		t.Errorf("gdb --args %q a\\xffb: %v\n%s", py, err, out)
	}
	testenv.Need(t, "lldb")
	out, err = run("--offline", "lldb", "-b", "-o", "run", "--", py, "a\xffb")
	if err != nil || !strings.Contains(crlf(out), "arg:61ff62\n") {
		t.Errorf("lldb -- %q a\\xffb: %v\n%s", py, err, out)
	}
}

// A real venv whose path holds a newline (its pyvenv.cfg "command" line
// is broken in two, which CPython ignores) resolves through the CLI,
// in text and JSON.
func TestSecurityResolveVenvNewline(t *testing.T) {
	py := testenv.Debian(t).Exe
	v := filepath.Join(t.TempDir(), "x\ny", "venv")
	mustRunIn(t, "python3.11 -m venv", "", nil, py, "-m", "venv", "--without-pip", "--copies", v)
	r := runJSON(t, v)
	if r.Interpreter != py || r.Venv.Kind != "copies" {
		t.Errorf("resolve --json %q: interpreter %s, venv %+v", v, r.Interpreter, r.Venv)
	}
	out, err := runIn(t, "", nil, pyattachBin(t), "--offline", "resolve", v)
	if err != nil || !strings.Contains(out, py) {
		t.Errorf("resolve %q: %v\n%s", v, err, out)
	}
}

// init --vscode refuses an interpreter path that JSON cannot carry
// instead of writing another path (U+FFFD) into launch.json.
func TestSecurityInitVSCodeNonUTF8(t *testing.T) {
	py := testenv.Debian(t).Exe
	dir := t.TempDir()
	project := filepath.Join(dir, "proj")
	os.MkdirAll(project, 0o755)
	bad := filepath.Join(dir, "py\xff")
	if err := os.Symlink(py, bad); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "c"), "XDG_CACHE_HOME=" + filepath.Join(home, "k"), "XDG_DATA_HOME=" + filepath.Join(home, "d")}
	out, err := runIn(t, project, env, pyattachBin(t), "--offline", "init", "--vscode", "--python", bad, project)
	if err == nil || !strings.Contains(out, "not valid UTF-8, which launch.json cannot carry") {
		t.Fatalf("init --vscode with a non-UTF-8 interpreter path: %v\n%s", err, out)
	}
	for _, f := range []string{".vscode/launch.json", ".gdbinit", ".lldbinit"} {
		if _, err := os.Stat(filepath.Join(project, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}
