package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// pyattachBin builds the pyattach binary once for tests that must run it
// as its own process (gdb and lldb replace it with exec).
func pyattachBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pyattach-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "pyattach")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			t.Logf("%s", out)
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

// runIn runs a command with env additions and returns its combined output.
func runIn(t testing.TB, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// pyBtFrames is what py-bt prints for testenv.WaitingApp: its three functions, with
// their line numbers, innermost first.
var pyBtFrames = []*regexp.Regexp{
	regexp.MustCompile(`File ".*app\.py", line 5, in inner`),
	regexp.MustCompile(`File ".*app\.py", line 7, in middle`),
	regexp.MustCompile(`File ".*app\.py", line 9, in outer`),
}

// mustRunIn is runIn for a command that must succeed: its failure stops
// the test, named by what.
func mustRunIn(t testing.TB, what, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runIn(t, dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	return out
}

// pyattachPyBt runs pyattach with args (in dir, with env added), which
// must succeed and print the py-bt of testenv.WaitingApp; what names the
// run in failures.
func pyattachPyBt(t *testing.T, what, dir string, env []string, args ...string) string {
	t.Helper()
	out := mustRunIn(t, what, dir, env, pyattachBin(t), args...)
	checkPyBt(t, what, out)
	return out
}

// gdbPyBt are the arguments of pyattach that attach gdb to pid and run
// py-bt, after pyattach's own flags.
func gdbPyBt(pid int, flags ...string) []string {
	return append(flags[:len(flags):len(flags)], "gdb", "-nx", "-batch", "-p", strconv.Itoa(pid), "-ex", "py-bt")
}

// checkPlainGDBLacksPyBt: gdb on its own, attached to pid, has no py-bt
// (the case pyattach exists for), so that the test can fail.
func checkPlainGDBLacksPyBt(t *testing.T, gdb string, pid int) {
	t.Helper()
	out, _ := runIn(t, "", nil, gdb, "-nx", "-batch", "-p", strconv.Itoa(pid), "-ex", "py-bt")
	if !strings.Contains(out, `Undefined command: "py-bt"`) {
		t.Errorf("plain gdb was expected to lack py-bt here:\n%s", out)
	}
}

// startVenvCopies runs testenv.WaitingApp with the python of a new
// --copies venv of py and returns its PID.
func startVenvCopies(t *testing.T, py string) int {
	t.Helper()
	venv := makeVenv(t, py, true)
	return testenv.StartPython(t, filepath.Join(venv, "bin", "python"), "")
}

func checkPyBt(t *testing.T, what, out string) {
	t.Helper()
	last := -1
	for _, re := range pyBtFrames {
		loc := re.FindStringIndex(out)
		if loc == nil {
			t.Errorf("%s: py-bt output lacks %q:\n%s", what, re, out)
			return
		}
		if loc[0] < last {
			t.Errorf("%s: frames out of order:\n%s", what, out)
		}
		last = loc[0]
	}
}

// The case this tool exists for: Debian's python3.11 in a --copies venv.
// Plain gdb has no py-bt; pyattach gdb does.
func TestGDBPyBtDebianVenvCopies(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	pid := startVenvCopies(t, testenv.Debian(t).Exe)
	checkPlainGDBLacksPyBt(t, gdb, pid)
	pyattachPyBt(t, "pyattach gdb -p", "", nil, gdbPyBt(pid)...)
}

// Debian's debug build.
func TestGDBPyBtDebugBuild(t *testing.T) {
	testenv.Need(t, "gdb")
	py := testenv.DebianDebug(t).Exe
	pid := testenv.StartPython(t, py, "")
	pyattachPyBt(t, "python3.11d", "", nil, gdbPyBt(pid)...)
}

// Every pyenv version, in a --copies venv (a virtualenv for 2.7).
func TestGDBPyBtPyenvVersions(t *testing.T) {
	testenv.Need(t, "gdb")
	versions := testenv.PyenvAll(t)
	for _, p := range versions {
		if strings.ContainsAny(p.ABIFlags, "dt") {
			continue
		}
		prefix, full, mm := p.Prefix, p.Version, p.Minor()
		t.Run(full, func(t *testing.T) {
			var venv string
			if strings.HasPrefix(full, "2.") {
				venv = makePy2Virtualenv(t, prefix, mm)
			} else {
				venv = makeVenv(t, filepath.Join(prefix, "bin", "python"+mm), true)
			}
			pid := testenv.StartPython(t, filepath.Join(venv, "bin", "python"), "")
			pyattachPyBt(t, full, "", nil, gdbPyBt(pid)...)
		})
	}
}

// The launch form keeps the venv's own python as the program.
func TestGDBPyBtLaunch(t *testing.T) {
	testenv.Need(t, "gdb")
	py := testenv.Debian(t).Exe
	venv := makeVenv(t, py, true)
	dir := t.TempDir()
	app := filepath.Join(dir, "app.py")
	// The program stops itself inside inner() with SIGTRAP.
	src := strings.Replace(testenv.WaitingApp, `    time.sleep(600)`, `    import os, signal; os.kill(os.getpid(), signal.SIGTRAP)`, 1)
	if err := os.WriteFile(app, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pyattachPyBt(t, "launch: pyattach gdb --args", dir, nil, "gdb", "-nx", "-batch", "-ex", "run", "-ex", "py-bt", "--args", filepath.Join(venv, "bin", "python"), app)
}

// The core form: a core written by gcore, opened without naming the
// program; pyattach finds it from the core's notes.
func TestGDBPyBtCore(t *testing.T) {
	testenv.Need(t, "gdb")
	gcore := testenv.Need(t, "gcore")
	pid := startVenvCopies(t, testenv.Debian(t).Exe)
	dir := t.TempDir()
	mustRunIn(t, "gcore", dir, nil, gcore, "-o", filepath.Join(dir, "core"), strconv.Itoa(pid))
	core := filepath.Join(dir, "core."+strconv.Itoa(pid))
	pyattachPyBt(t, "core: pyattach gdb -c", dir, nil, "gdb", "-nx", "-batch", "-c", core, "-ex", "py-bt")
}

// A project .gdbinit from `pyattach init --gdb --trust`, used by a plain
// gdb -p started in the project, with HOME in a temporary directory.
func TestInitTrustPlainGDB(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	py := testenv.Debian(t).Exe
	project := t.TempDir()
	home := t.TempDir()
	testenv.Venv(t, py, filepath.Join(project, ".venv"), "--copies")
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}
	mustRunIn(t, "pyattach init", project, env, pyattachBin(t), "init", "--gdb", "--trust")
	// Running it twice adds nothing.
	if out, err := runIn(t, project, env, pyattachBin(t), "init", "--gdb", "--trust"); err != nil || !strings.Contains(out, "already trusts") {
		t.Errorf("second init: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(filepath.Join(home, ".config", "gdb", "gdbinit"))
	if n := strings.Count(string(data), "add-auto-load-safe-path "+filepath.Join(project, ".gdbinit")); n != 1 {
		t.Errorf("user gdbinit has the trust line %d times:\n%s", n, data)
	}
	pid := testenv.StartPython(t, filepath.Join(project, ".venv", "bin", "python"), "")
	out, _ := runIn(t, project, env, gdb, "-batch", "-p", strconv.Itoa(pid), "-ex", "py-bt")
	checkPyBt(t, "plain gdb with the project's .gdbinit", out)
}

// A Python process in its own root and mount namespace (unshare --mount
// --fork chroot): gdb reads its libraries under /proc/PID/root.
func TestGDBPyBtContainer(t *testing.T) {
	testenv.Need(t, "gdb")
	py := containerPrereqs(t)
	root := filepath.Join(t.TempDir(), "root")
	buildContainerRoot(t, root, py)
	// A copy of a pyenv prefix includes its gdb extension.
	ext := testenv.NeedFile(t, py.Exe+"-gdb.py", "pyenv installs it beside the interpreter")
	exe, _ := inContainer(py)
	testenv.CopyFile(t, ext, filepath.Join(root, exe+"-gdb.py"), 0)
	pid := startInContainer(t, root, py)
	pyattachPyBt(t, "container: pyattach gdb", "", nil, gdbPyBt(pid)...)
}

// lldb attached to the Debian venv-copy process: native frames with
// function, file and line (time_sleep in timemodule.c), and lldb's
// Python (`script`) works despite Debian's wrong `lldb -P`.
func TestLLDBDebianVenvCopies(t *testing.T) {
	testenv.Need(t, "lldb")
	pid := startVenvCopies(t, testenv.Debian(t).Exe)
	out := mustRunIn(t, "pyattach lldb", "", nil, pyattachBin(t), "lldb", "-b", "-p", strconv.Itoa(pid), "-o", "bt", "-o", "script print(6*7)")
	if !regexp.MustCompile(`time_sleep.* at timemodule\.c:\d+`).MatchString(out) {
		t.Errorf("no symbolized time_sleep frame with file and line:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^42$`).MatchString(out) {
		t.Errorf("lldb's script command did not work:\n%s", out)
	}
}
