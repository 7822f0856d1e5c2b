package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// subinterpApp's main thread runs sub_outer and sub_inner in a
// subinterpreter (concurrent.interpreters, 3.14+): sub_inner sleeps
// there while the main interpreter's thread state waits in exec. A
// second thread, "sleeper", stays in the main interpreter.
const subinterpApp = `import threading, time
from concurrent import interpreters

SUB = """
def sub_inner():
    print("ready", flush=True)
    time.sleep(1000)

def sub_outer():
    sub_inner()

import time
sub_outer()
"""

def sleeper():
    time.sleep(1000)

def run_in_sub():
    interpreters.create().exec(SUB)

threading.Thread(target=sleeper, name="sleeper", daemon=True).start()
run_in_sub()
`

// subinterpStack is the main thread's stack, innermost first, and the
// interpreter each frame runs in.
var subinterpStack = []struct {
	function string
	interp   int64
}{{"sub_inner", 1}, {"sub_outer", 1}, {"<module>", 1}, {"exec", 0}, {"run_in_sub", 0}, {"<module>", 0}}

// subinterpText matches the main thread's stack in py-bt's text (and
// dump's): the subinterpreter's frames under "In interpreter 1", the
// main interpreter's from exec on under "In interpreter 0". gdb's py-bt
// also shows the C function a frame called (<built-in method exec ...>).
var subinterpText = regexp.MustCompile(`(?m)^Traceback \(most recent call first\):
  In interpreter 1:
(  <built-in .*\n)?  File "[^"]+", line 4, in sub_inner
(    .*\n)?  File "[^"]+", line 7, in sub_outer
(    .*\n)?  File "[^"]+", line 10, in <module>
(    .*\n)?  In interpreter 0:
(  <built-in method exec .*\n)?  File "[^"]*/concurrent/interpreters/__init__\.py", line \d+, in exec
(    .*\n)?  File "/mnt/app\.py", line 20, in run_in_sub
(    .*\n)?  File "/mnt/app\.py", line 23, in <module>
`)

// checkSubinterpJSON checks dump --json: the main thread is in
// interpreter 1 and runs subinterpStack; sleeper is in interpreter 0.
// It returns whether the walk says it is partial ("truncated"), which
// only the sleeper's stack may be, and only where the memory it leads
// to is missing (see TestSubinterpreters).
func checkSubinterpJSON(t *testing.T, what, stdout string) bool {
	t.Helper()
	var d struct {
		Threads []struct {
			Name        *string `json:"name"`
			Interpreter *int64  `json:"interpreter"`
			Partial     bool    `json:"partial"`
			Error       string  `json:"error"`
			Frames      []struct {
				Function    string `json:"function"`
				Interpreter *int64 `json:"interpreter"`
			} `json:"frames"`
		} `json:"threads"`
		Truncated string `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, stdout)
	}
	if len(d.Threads) != 2 {
		t.Fatalf("%s: want 2 threads:\n%s", what, stdout)
	}
	main, sleeper := d.Threads[0], d.Threads[1]
	if (d.Truncated != "") != sleeper.Partial || sleeper.Partial && !strings.Contains(sleeper.Error, "reads as zeros") {
		t.Errorf("%s: truncated %q, sleeper partial %v (%q): only a sleeper's stack missing from memory may cut the walk", what, d.Truncated, sleeper.Partial, sleeper.Error)
	}
	if main.Interpreter == nil || *main.Interpreter != 1 || main.Partial {
		t.Errorf("%s: main thread's interpreter %v (partial %v), want 1:\n%s", what, main.Interpreter, main.Partial, stdout)
	}
	if len(main.Frames) != len(subinterpStack) {
		t.Fatalf("%s: main thread has %d frames, want %d:\n%s", what, len(main.Frames), len(subinterpStack), stdout)
	}
	for i, want := range subinterpStack {
		f := main.Frames[i]
		if f.Function != want.function || f.Interpreter == nil || *f.Interpreter != want.interp {
			t.Errorf("%s: main thread's frame %d is %s in interpreter %v, want %s in %d", what, i, f.Function, f.Interpreter, want.function, want.interp)
		}
	}
	if ptrStr(sleeper.Name) != "sleeper" || sleeper.Interpreter == nil || *sleeper.Interpreter != 0 ||
		len(sleeper.Frames) == 0 || sleeper.Frames[0].Function != "sleeper" {
		t.Errorf("%s: second thread is not sleeper in interpreter 0:\n%s", what, stdout)
	}
	return d.Truncated != ""
}

// TestSubinterpreters: Debian's 3.14 (chrooted in its root)
// runs a function in a subinterpreter on its main thread. pyattach dump
// (text and JSON), gdb's and lldb's py-bt show that function's frames,
// labelled with the subinterpreter's id, above the main interpreter's
// exec frame; live and from a gcore core.
func TestSubinterpreters(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	testenv.Need(t, "unshare")
	testenv.Need(t, "pivot_root")
	gcore := testenv.Need(t, "gcore")
	chroot := testenv.Need(t, "chroot")
	roots := pivotRoots(t, " with Python 3.14", func(r pivotRoot) bool { return r.exe == "/usr/bin/python3.14" })
	r := roots[0]
	env := scriptEnv(t.TempDir())
	// Chrooted in its own mount namespace, app.py bind-mounted on the
	// root's /mnt: the core names the interpreter by its path on this
	// machine, under the root.
	app := t.TempDir()
	testenv.WriteFile(t, filepath.Join(app, "app.py"), []byte(subinterpApp), 0o644)
	cmd := exec.Command("unshare", "--mount", "--fork", "--kill-child", "sh", "-c",
		`mount --bind "$2" "$1/mnt" && exec "$4" "$1" "$3" /mnt/app.py`, "sh", r.root, app, r.exe, chroot)
	cmd.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "PYTHONDONTWRITEBYTECODE=1"}
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("app.py in the chroot did not start: stdout %q", line)
	}
	kids, err := childPIDs(cmd.Process.Pid)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of unshare (pid %d): %v %v", cmd.Process.Pid, kids, err)
	}
	pid := strconv.Itoa(kids[0])

	stdout, _ := pyattachOK(t, "pyattach dump --json", pyattachBin(t), env, "dump", "--json", pid)
	if checkSubinterpJSON(t, "dump --json", stdout) {
		t.Errorf("dump --json of the live process is partial:\n%s", stdout)
	}
	text, _ := pyattachOK(t, "pyattach dump", pyattachBin(t), env, "dump", pid)
	if !subinterpText.MatchString(text) || strings.Count(text, "In interpreter") != 2 {
		t.Errorf("dump: want the main thread's stack labelled by interpreter, matching\n%s\n%s", subinterpText, text)
	}
	if !regexp.MustCompile(`(?m)^Thread ` + pid + ` "MainThread".*, interpreter 1, `).MatchString(text) {
		t.Errorf("dump: the main thread's header does not name interpreter 1:\n%s", text)
	}

	out := mustRunIn(t, "pyattach gdb py-bt", "", env, pyattachBin(t), "gdb", "-nx", "-batch", "-p", pid, "-ex", "thread apply all py-bt")
	if !subinterpText.MatchString(out) || strings.Count(out, "In interpreter") != 2 {
		t.Errorf("gdb py-bt: want the main thread's stack labelled by interpreter, matching\n%s\n%s", subinterpText, out)
	}
	lout, _ := pyattachOK(t, "pyattach lldb py-bt", pyattachBin(t), env, "lldb", "-b", "-p", pid, "-o", "py-bt all")
	if !subinterpText.MatchString(lout) || strings.Count(lout, "In interpreter") != 2 {
		t.Errorf("lldb py-bt: want the main thread's stack labelled by interpreter, matching\n%s\n%s", subinterpText, lout)
	}

	dir := t.TempDir()
	core := filepath.Join(dir, "core")
	if out, err := exec.Command(gcore, "-o", core, pid).CombinedOutput(); err != nil {
		t.Fatalf("gcore: %v\n%s", err, out)
	}
	defer os.Remove(core + "." + pid)
	// gdb 13 leaves out of a core the stack of a thread whose mapping
	// holds glibc 2.42's guard pages (the roots test says more): the
	// sleeper's frames past its C stack are then missing, which dump must
	// say (exit 3). The main thread's stack is in the core.
	code, stdout, errOut := runPyattach(t, pyattachBin(t), env, "dump", "--json", core+"."+pid)
	partial := checkSubinterpJSON(t, "core", stdout)
	if want := map[bool]int{false: 0, true: 3}[partial]; code != want {
		t.Errorf("dump of the core: exit code %d, want %d\n%s", code, want, errOut)
	}
	if partial {
		t.Logf("the core lacks the sleeper's C stack: %s", strings.TrimSpace(errOut))
	}
}
