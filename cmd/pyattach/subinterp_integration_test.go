package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// subinterpThreadApp's thread "subrunner" runs sub_outer and sub_inner
// in a subinterpreter (concurrent.interpreters from 3.14, _interpreters
// in 3.13), which imports threading there too: sub_inner sleeps in
// interpreter 1 while the thread's frames in interpreter 0 (exec,
// run_sub, runner and threading's run, _bootstrap_inner, _bootstrap)
// wait in the call. The main thread joins it.
const subinterpThreadApp = `import threading
try:
    from concurrent import interpreters
    def run_sub(code):
        interpreters.create().exec(code)
except ImportError:
    import _interpreters
    def run_sub(code):
        _interpreters.exec(_interpreters.create(), code)

SUB = """
import threading, time

def sub_inner():
    print("ready", flush=True)
    time.sleep(1000)

def sub_outer():
    sub_inner()

sub_outer()
"""

def runner():
    run_sub(SUB)

t = threading.Thread(target=runner, name="subrunner", daemon=True)
t.start()
t.join()
`

// interpFrame is a frame's function and the interpreter it runs in.
type interpFrame struct {
	function string
	interp   int64
}

// subinterpThreadStack is subrunner's stack, innermost first, each frame
// with the interpreter that runs it, as pystack labels them: 3.14's
// concurrent.interpreters adds its exec frame.
func subinterpThreadStack(minor string) []interpFrame {
	out := []interpFrame{{"sub_inner", 1}, {"sub_outer", 1}, {"<module>", 1}}
	if minor != "3.13" {
		out = append(out, interpFrame{"exec", 0})
	}
	return append(out, []interpFrame{{"run_sub", 0}, {"runner", 0}, {"run", 0}, {"_bootstrap_inner", 0}, {"_bootstrap", 0}}...)
}

// textFrameRe matches dump's "In interpreter N:" lines and the File
// lines of its stacks.
var textFrameRe = regexp.MustCompile(`(?m)^  (?:In interpreter (\d+):|File "[^"]*", line \d+, in (\S+))$`)

// textThreadStack reads one thread's stack from dump's or py-bt's text:
// the line holding header (the thread's header) and the functions of the
// File lines of the traceback after it, each with the interpreter of the
// In interpreter line above it (-1 when none is).
func textThreadStack(text, header string) (string, []interpFrame) {
	i := strings.Index(text, header)
	if i < 0 {
		return "", nil
	}
	i = strings.LastIndex(text[:i], "\n") + 1
	block := text[i:]
	const tb = "Traceback (most recent call first):"
	if first := strings.Index(block, tb); first >= 0 {
		if next := strings.Index(block[first+len(tb):], tb); next >= 0 {
			block = block[:first+len(tb)+next]
		}
	}
	head, _, _ := strings.Cut(block, "\n")
	var out []interpFrame
	cur := int64(-1)
	for _, m := range textFrameRe.FindAllStringSubmatch(block, -1) {
		if m[1] != "" {
			cur, _ = strconv.ParseInt(m[1], 10, 64)
			continue
		}
		out = append(out, interpFrame{m[2], cur})
	}
	return head, out
}

// TestSubinterpreterThread: a thread (not the main one) of Debian's
// 3.13, 3.14 and 3.15, each chrooted in its root, runs a subinterpreter
// that sleeps in nested functions. pyattach dump (text and JSON) labels
// the subinterpreter's frames with interpreter 1 and the thread's outer
// frames (exec, runner, run, _bootstrap_inner, _bootstrap) with
// interpreter 0, in stack order; the thread keeps the name threading
// gave it in the main interpreter. gdb's and lldb's py-bt show the same
// split.
func TestSubinterpreterThread(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	testenv.Need(t, "unshare")
	chroot := testenv.Need(t, "chroot")
	roots := pivotRoots(t, " with Python 3.13 or later", func(r pivotRoot) bool {
		return regexp.MustCompile(`^/usr/bin/python3\.(1[3-9]|[2-9]\d)$`).MatchString(r.exe)
	})
	for _, r := range roots {
		r := r
		minor := strings.TrimPrefix(r.exe, "/usr/bin/python")
		t.Run(minor, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			app := t.TempDir()
			testenv.WriteFile(t, filepath.Join(app, "app.py"), []byte(subinterpThreadApp), 0o644)
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
			want := subinterpThreadStack(minor)

			stdout, _ := pyattachOK(t, "pyattach dump --json", pyattachBin(t), env, "dump", "--json", pid)
			var d struct {
				Threads []struct {
					Tid         int64   `json:"tid"`
					Name        *string `json:"name"`
					Interpreter *int64  `json:"interpreter"`
					Partial     bool    `json:"partial"`
					Frames      []struct {
						Function    string `json:"function"`
						Interpreter *int64 `json:"interpreter"`
					} `json:"frames"`
				} `json:"threads"`
				Truncated string `json:"truncated"`
			}
			if err := json.Unmarshal([]byte(stdout), &d); err != nil {
				t.Fatalf("dump --json: %v\n%s", err, stdout)
			}
			if len(d.Threads) != 2 || d.Truncated != "" {
				t.Fatalf("dump --json: want 2 threads, read whole:\n%s", stdout)
			}
			mainTh, sub := d.Threads[0], d.Threads[1]
			if ptrStr(sub.Name) != "subrunner" || sub.Interpreter == nil || *sub.Interpreter != 1 || sub.Partial {
				t.Errorf("dump --json: second thread is not subrunner in interpreter 1 (read whole):\n%s", stdout)
			}
			var got []interpFrame
			for _, f := range sub.Frames {
				in := int64(-1)
				if f.Interpreter != nil {
					in = *f.Interpreter
				}
				got = append(got, interpFrame{f.Function, in})
			}
			if !slices.Equal(got, want) {
				t.Errorf("dump --json: subrunner's frames and their interpreters\n got %v\nwant %v", got, want)
			}
			if mainTh.Interpreter == nil || *mainTh.Interpreter != 0 || len(mainTh.Frames) == 0 ||
				mainTh.Frames[len(mainTh.Frames)-1].Interpreter == nil || *mainTh.Frames[len(mainTh.Frames)-1].Interpreter != 0 {
				t.Errorf("dump --json: the main thread is not in interpreter 0:\n%s", stdout)
			}

			text, _ := pyattachOK(t, "pyattach dump", pyattachBin(t), env, "dump", pid)
			head, tgot := textThreadStack(text, `"subrunner"`)
			if !strings.Contains(head, ", interpreter 1, ") {
				t.Errorf("dump: subrunner's header does not name interpreter 1: %q\n%s", head, text)
			}
			if !slices.Equal(tgot, want) {
				t.Errorf("dump: subrunner's frames and their interpreters\n got %v\nwant %v\n%s", tgot, want, text)
			}
			if strings.Count(text, "In interpreter") != 2 {
				t.Errorf("dump: want one In interpreter 1 and one In interpreter 0 line:\n%s", text)
			}

			// py-bt shows the same split (gdb's with a <built-in method
			// exec> line, which is no File line), under gdb's header
			// (LWP TID "OS name") and lldb's py-threads line.
			tid := strconv.FormatInt(sub.Tid, 10)
			out := mustRunIn(t, "pyattach gdb py-bt", "", env, pyattachBin(t), "gdb", "-nx", "-batch", "-p", pid, "-ex", "thread apply all py-bt")
			if _, g := textThreadStack(out, "(LWP "+tid+" "); !slices.Equal(g, want) {
				t.Errorf("gdb py-bt: subrunner's frames and their interpreters\n got %v\nwant %v\n%s", g, want, out)
			}
			lout, _ := pyattachOK(t, "pyattach lldb py-bt", pyattachBin(t), env, "lldb", "-b", "-p", pid, "-o", "py-bt all")
			if _, g := textThreadStack(lout, "Thread "+tid+" "); !slices.Equal(g, want) {
				t.Errorf("lldb py-bt: subrunner's frames and their interpreters\n got %v\nwant %v\n%s", g, want, lout)
			}
		})
	}
}

// subinterpNestApp's main thread creates interpreters 1 and 2, runs
// in_b in interpreter 2, which runs in_a in interpreter 1, the older one:
// the thread's stack is interpreter 1's frames, then 2's, then 0's,
// which the interpreters' own order (newest first) does not give.
const subinterpNestApp = `try:
    import _interpreters as I
    run = I.exec
except ImportError:
    import _xxsubinterpreters as I
    run = I.run_string

a = I.create()
b = I.create()
INNER = """
import time
def in_a():
    print("ready", flush=True)
    time.sleep(1000)
in_a()
"""
OUTER = """
try:
    import _interpreters as I
    run = I.exec
except ImportError:
    import _xxsubinterpreters as I
    run = I.run_string
def in_b():
    run(%d, %r)
in_b()
""" % (a, INNER)

def main_side():
    run(b, OUTER)

main_side()
`

// TestSubinterpreterNesting: on each pyenv build from 3.10 on, a thread
// in interpreter 2 calls into interpreter 1: dump --json orders its
// frames as the calls nest (1, 2, 0), read from where each interpreter's
// eval loop runs on the thread's C stack (3.10, 3.11: the thread
// state's cframe; 3.12+: the eval loop's entry frame), each frame
// labelled with its interpreter.
func TestSubinterpreterNesting(t *testing.T) {
	testenv.Need(t, "gdb")
	var pys []testenv.Python
	for _, p := range testenv.PyenvVersions() {
		if !strings.ContainsAny(p.ABIFlags, "dt") && regexp.MustCompile(`^3\.(1\d|[2-9]\d)$`).MatchString(p.Minor()) {
			pys = append(pys, p)
		}
	}
	if len(pys) == 0 {
		testenv.Missing(t, "no pyenv build of Python 3.10 or later under %s", testenv.PyenvRoot())
	}
	want := []interpFrame{{"in_a", 1}, {"<module>", 1}, {"in_b", 2}, {"<module>", 2}, {"main_side", 0}, {"<module>", 0}}
	for _, p := range pys {
		p := p
		t.Run(p.Version, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			script := filepath.Join(t.TempDir(), "nest.py")
			testenv.WriteFile(t, script, []byte(subinterpNestApp), 0o644)
			cmd := exec.Command(p.Exe, script)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"}
			if line := testenv.Start(t, cmd); line != "ready\n" {
				t.Fatalf("nest.py did not start: stdout %q", line)
			}
			stdout, _ := pyattachOK(t, "pyattach dump --json", pyattachBin(t), env, "dump", "--json", strconv.Itoa(cmd.Process.Pid))
			var d struct {
				Threads []struct {
					Interpreter *int64 `json:"interpreter"`
					Frames      []struct {
						Function    string `json:"function"`
						Interpreter *int64 `json:"interpreter"`
					} `json:"frames"`
				} `json:"threads"`
			}
			if err := json.Unmarshal([]byte(stdout), &d); err != nil || len(d.Threads) != 1 {
				t.Fatalf("dump --json: want one thread (%v):\n%s", err, stdout)
			}
			th := d.Threads[0]
			var got []interpFrame
			for _, f := range th.Frames {
				in := int64(-1)
				if f.Interpreter != nil {
					in = *f.Interpreter
				}
				got = append(got, interpFrame{f.Function, in})
			}
			in := int64(-1)
			if th.Interpreter != nil {
				in = *th.Interpreter
			}
			if !slices.Equal(got, want) || in != 1 {
				t.Errorf("dump --json: the thread's frames and their interpreters\n got %v (thread in %d)\nwant %v (thread in 1)", got, in, want)
			}
		})
	}
}
