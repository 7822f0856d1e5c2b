package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// dapApp's thread "worker" sleeps in hold (line 15), inside an except
// block, with a list, a dict and an instance in its locals; the main
// thread waits for it in join (line 23).
const dapApp = `import threading, time

class Widget:
    def __init__(self, name, size):
        self.name = name
        self.size = size

def hold(n):
    items = [1, "two", (3, 4)]
    table = {"k": 1, "nested": [5]}
    w = Widget("gizmo", n)
    try:
        raise ValueError("bad value")
    except ValueError:
        time.sleep(1000)

def work():
    hold(12)

t = threading.Thread(target=work, name="worker")
t.start()
print("ready", t.native_id, flush=True)
t.join()
`

// The answers of pyattach-dap (DAP-PROTOCOL.md).
type dapPy struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Line  int    `json:"line"`
	Frame uint64 `json:"frame"`
}

type dapStack struct {
	Native []struct {
		PC     uint64  `json:"pc"`
		Kind   string  `json:"kind"`
		Python []dapPy `json:"python"`
	} `json:"native"`
	Merged    bool   `json:"merged"`
	Why       string `json:"why"`
	Exception *struct {
		Type  string `json:"type"`
		Value string `json:"value"`
		Ref   uint64 `json:"ref"`
	} `json:"exception"`
	Error string `json:"error"`
}

type dapVars struct {
	Vars []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
		Type  string `json:"type"`
		Ref   uint64 `json:"ref"`
	} `json:"vars"`
	More  int    `json:"more"`
	Error string `json:"error"`
}

type dapThread struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type dapThreads struct {
	Threads []dapThread `json:"threads"`
	Error   string      `json:"error"`
}

// dapLines are the JSON texts of the "pyattach-dap: " lines of a
// debugger's output, in order.
func dapLines(out string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "pyattach-dap: {"); i >= 0 {
			got = append(got, l[i+len("pyattach-dap: "):])
		}
	}
	return got
}

// dapAnswers runs the pyattach-dap commands in a debugger (args: pyattach's
// arguments before them, opt the debugger's option that runs a command)
// and decodes each answer into the value of the same index of into.
func dapAnswers(t *testing.T, what string, args []string, opt string, cmds []string, into ...any) string {
	t.Helper()
	for _, c := range cmds {
		args = append(args, opt, "pyattach-dap "+c)
	}
	out := mustRunIn(t, what, "", homeEnv(t), pyattachBin(t), args...)
	lines := dapLines(out)
	if len(lines) != len(cmds) {
		t.Fatalf("%s: %d pyattach-dap lines for %d commands:\n%s", what, len(lines), len(cmds), out)
	}
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), into[i]); err != nil {
			t.Fatalf("%s: pyattach-dap %s: %v\n%s", what, cmds[i], err, l)
		}
	}
	return out
}

// pythonFrames are the Python frames of a stack's eval loop frames, in
// order, as "name file:line" (file the base name).
func pythonFrames(s dapStack) []string {
	var out []string
	for _, n := range s.Native {
		if n.Kind != "eval" && len(n.Python) > 0 {
			out = append(out, "Python frames under a "+n.Kind+" frame")
		}
		for _, p := range n.Python {
			out = append(out, p.Name+" "+filepath.Base(p.File)+":"+strconv.Itoa(p.Line))
		}
	}
	return out
}

func frameOf(s dapStack, name string) dapPy {
	for _, n := range s.Native {
		for _, p := range n.Python {
			if p.Name == name {
				return p
			}
		}
	}
	return dapPy{}
}

var (
	workerFrames = []string{"hold app.py:15", "work app.py:18", "Thread.run threading.py:\\d+",
		"Thread._bootstrap_inner threading.py:\\d+", "Thread._bootstrap threading.py:\\d+"}
	mainFrames = []string{"Thread._wait_for_tstate_lock threading.py:\\d+", "Thread.join threading.py:\\d+",
		"<module> app.py:23"}
	holdLocals = [][3]string{{"n", "12", "int"}, {"items", "[1, 'two', (3, 4)]", "list"},
		{"table", "{'k': 1, 'nested': [5]}", "dict"}, {"w", "<Widget(name='gizmo', size=12) at ADDR>", "Widget"}}
	itemsChildren = [][3]string{{"[0]", "1", "int"}, {"[1]", "'two'", "str"}, {"[2]", "(3, 4)", "tuple"}}
)

func matchFrames(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if !regexp.MustCompile("^" + want[i] + "$").MatchString(got[i]) {
			return false
		}
	}
	return true
}

// checkDAPStack: a merged stack whose Python frames are want, in order,
// below C frames; frames of app.py name its path.
func checkDAPStack(t *testing.T, what string, s dapStack, app string, want []string) {
	t.Helper()
	if s.Error != "" || !s.Merged || len(s.Native) == 0 || s.Native[0].Kind != "c" {
		t.Errorf("%s: not a merged stack under a C frame: %+v", what, s)
	}
	if got := pythonFrames(s); !matchFrames(got, want) {
		t.Errorf("%s: Python frames\n got %q\nwant %q", what, got, want)
	}
	kinds := map[string]bool{}
	for _, n := range s.Native {
		kinds[n.Kind] = true
	}
	if !kinds["helper"] {
		t.Errorf("%s: no helper frame (the interpreter's calling machinery): %+v", what, s.Native)
	}
	for _, n := range s.Native {
		for _, p := range n.Python {
			if filepath.Base(p.File) == "app.py" && p.File != app || p.Frame == 0 {
				t.Errorf("%s: frame %+v: want file %s and a frame address", what, p, app)
			}
		}
	}
}

func checkVars(t *testing.T, what string, got dapVars, want [][3]string) {
	t.Helper()
	ok := got.Error == "" && got.More == 0 && len(got.Vars) == len(want)
	for i := 0; ok && i < len(want); i++ {
		v := got.Vars[i]
		expandable := v.Type != "int" && v.Type != "str"
		ok = v.Name == want[i][0] && addrPattern(want[i][1]).MatchString(v.Value) && v.Type == want[i][2] && (v.Ref != 0) == expandable
	}
	if !ok {
		t.Errorf("%s:\n got %+v\nwant %q (ref for all but int and str)", what, got, want)
	}
}

// startDAPApp runs dapApp under py and returns once its worker sleeps
// and its main thread waits: the process's id, the worker's, app.py.
func startDAPApp(t *testing.T, py string) (pid, worker int, app string) {
	t.Helper()
	app = filepath.Join(t.TempDir(), "app.py")
	testenv.WriteFile(t, app, []byte(dapApp), 0o644)
	cmd := exec.Command(py, app)
	ready := strings.Fields(testenv.Start(t, cmd))
	if len(ready) != 2 || ready[0] != "ready" {
		t.Fatalf("app printed %q", ready)
	}
	pid = cmd.Process.Pid
	worker, _ = strconv.Atoi(ready[1])
	testenv.WaitSyscall(t, pid, testenv.ThreadIDs(worker), testenv.TimeSleep...)
	testenv.WaitSyscall(t, pid, testenv.ThreadIDs(pid), "futex")
	return pid, worker, app
}

// TestDAPWalker: the walker's side of the DAP proxy in real gdb and real
// lldb attached to Debian's python3.11: pyattach-dap threads names the
// Python threads by the adapter's ids (gdb's thread numbers, lldb's OS
// thread ids); stack merges each thread's C frames with the Python
// frames each eval loop frame runs (file, line, the frame to ask locals
// of) and gives the exception the worker handles; locals of hold and
// children of its list and of the exception; nothing stays selected in
// gdb.
func TestDAPWalker(t *testing.T) {
	testenv.Need(t, "gdb")
	pid, worker, app := startDAPApp(t, testenv.Debian(t).Exe)
	p := strconv.Itoa(pid)

	// gdb: the main thread is 1, the worker 2.
	gdbArgs := []string{"--offline", "gdb", "-nx", "-batch", "-p", p}
	var threads dapThreads
	var mainStack, workerStack dapStack
	out := dapAnswers(t, "gdb", gdbArgs, "-ex", []string{"threads", "stack 1", "stack 2"}, &threads, &mainStack, &workerStack)
	if wantThreads := (dapThreads{Threads: []dapThread{{1, "MainThread"}, {2, "worker"}}}); !reflect.DeepEqual(threads, wantThreads) {
		t.Errorf("gdb threads: %+v, want %+v", threads, wantThreads)
	}
	checkDAPStack(t, "gdb stack of the main thread", mainStack, app, mainFrames)
	checkDAPStack(t, "gdb stack of the worker", workerStack, app, workerFrames)
	if e := workerStack.Exception; e == nil || e.Type != "ValueError" || e.Value != "bad value" || e.Ref == 0 {
		t.Errorf("gdb stack of the worker: exception %+v, want ValueError: bad value", e)
	}
	hold := frameOf(workerStack, "hold")
	if hold.Frame == 0 || t.Failed() {
		t.Fatalf("no frame of hold in gdb's stack of the worker:\n%s", out)
	}

	// A frame and objects the walker returned, asked in another gdb
	// session (the process has not run: the same addresses).
	var locals dapVars
	dapAnswers(t, "gdb locals", gdbArgs, "-ex", []string{"locals " + strconv.FormatUint(hold.Frame, 10)}, &locals)
	checkVars(t, "gdb locals of hold", locals, holdLocals)
	if len(locals.Vars) != len(holdLocals) {
		t.FailNow()
	}
	items, widget := locals.Vars[1].Ref, locals.Vars[3].Ref
	var itemsKids, widgetKids, excKids dapVars
	exc := strconv.FormatUint(workerStack.Exception.Ref, 10)
	dapAnswers(t, "gdb children", gdbArgs, "-ex",
		[]string{"children " + strconv.FormatUint(items, 10), "children " + strconv.FormatUint(widget, 10), "children " + exc},
		&itemsKids, &widgetKids, &excKids)
	checkVars(t, "gdb children of items", itemsKids, itemsChildren)
	checkVars(t, "gdb children of w", widgetKids, [][3]string{{"name", "'gizmo'", "str"}, {"size", "12", "int"}})
	checkVars(t, "gdb children of the exception", excKids, [][3]string{{"args", "('bad value',)", "tuple"}})

	// gdb selects nothing for good: the thread and frame selected before
	// stack are selected after it.
	out = mustRunIn(t, "gdb selection", "", homeEnv(t), pyattachBin(t), append(gdbArgs, "-ex", "thread 2", "-ex", "frame 1",
		"-ex", "pyattach-dap stack 1", "-ex", "thread", "-ex", "frame")...)
	if !regexp.MustCompile(`(?m)^\[Current thread is 2 .*\n#1 `).MatchString(out) {
		t.Errorf("gdb: pyattach-dap stack 1 changed the selected thread or frame:\n%s", out)
	}

	// lldb: threads by OS thread id; the same locals and children.
	t.Run("lldb", func(t *testing.T) { checkDAPLLDB(t, p, worker, hold.Frame, locals, itemsKids) })
}

// checkDAPLLDB: pyattach-dap in lldb, whose thread ids are the OS's,
// gives the threads, the frame's locals and the list's children gdb
// gave; its stacks hold the C frames lldb unwinds, merged with the
// Python frames where lldb unwinds every eval loop frame.
func checkDAPLLDB(t *testing.T, pid string, worker int, frame uint64, locals, itemsKids dapVars) {
	testenv.Need(t, "lldb")
	main, _ := strconv.Atoi(pid)
	var threads dapThreads
	var mainStack, workerStack dapStack
	var gotLocals, gotKids dapVars
	out := dapAnswers(t, "lldb", []string{"--offline", "lldb", "-b", "-p", pid}, "-o",
		[]string{"threads", "stack " + pid, "stack " + strconv.Itoa(worker), "locals " + strconv.FormatUint(frame, 10),
			"children " + strconv.FormatUint(locals.Vars[1].Ref, 10)},
		&threads, &mainStack, &workerStack, &gotLocals, &gotKids)
	if len(threads.Threads) != 2 || threads.Threads[0].ID != main || threads.Threads[0].Name != "MainThread" ||
		threads.Threads[1].ID != worker || threads.Threads[1].Name != "worker" {
		t.Errorf("lldb threads: %+v, want MainThread %d and worker %d", threads, main, worker)
	}
	if !reflect.DeepEqual(gotLocals, locals) || !reflect.DeepEqual(gotKids, itemsKids) {
		t.Errorf("lldb locals and children differ from gdb's:\n%+v\n%+v", gotLocals, gotKids)
	}
	for _, c := range []struct {
		what string
		s    dapStack
		want []string
	}{{"main thread", mainStack, mainFrames}, {"worker", workerStack, workerFrames}} {
		if c.s.Error != "" || len(c.s.Native) == 0 || c.s.Native[0].Kind != "c" {
			t.Errorf("lldb stack of the %s: no C frames: %+v", c.what, c.s)
			continue
		}
		got := pythonFrames(c.s)
		if c.s.Merged {
			if !matchFrames(got, c.want) {
				t.Errorf("lldb stack of the %s: Python frames\n got %q\nwant %q", c.what, got, c.want)
			}
			continue
		}
		// lldb did not unwind every eval loop frame (lldb 19 stops at the
		// first of Debian's python3.11): those it did run the innermost
		// Python frames.
		if c.s.Why == "" || !matchFrames(got, c.want[:min(len(got), len(c.want))]) {
			t.Errorf("lldb stack of the %s: not merged, why %q, Python frames %q", c.what, c.s.Why, got)
		}
		t.Logf("lldb stack of the %s not merged: %s", c.what, c.s.Why)
	}
	if t.Failed() {
		t.Logf("lldb output:\n%s", out)
	}
}

// TestDAPWalkerLLDBMerged: in lldb, whose thread ids are the OS's,
// pyattach-dap's stacks merge every eval loop frame with its Python
// frames where lldb unwinds them all (pyenv's 3.11: lldb 19 stops at the
// first eval loop frame of Debian's), and locals and children of what
// they return read hold's list.
func TestDAPWalkerLLDBMerged(t *testing.T) {
	testenv.Need(t, "lldb")
	pid, worker, app := startDAPApp(t, testenv.Pyenv(t, "3.11").Exe)
	p := strconv.Itoa(pid)
	lldbArgs := []string{"--offline", "lldb", "-b", "-p", p}
	var mainStack, workerStack dapStack
	dapAnswers(t, "lldb", lldbArgs, "-o", []string{"stack " + p, "stack " + strconv.Itoa(worker)}, &mainStack, &workerStack)
	checkDAPStack(t, "lldb stack of the main thread", mainStack, app, mainFrames)
	checkDAPStack(t, "lldb stack of the worker", workerStack, app, workerFrames)
	hold := frameOf(workerStack, "hold")
	if hold.Frame == 0 {
		t.FailNow()
	}
	var locals dapVars
	dapAnswers(t, "lldb locals", lldbArgs, "-o", []string{"locals " + strconv.FormatUint(hold.Frame, 10)}, &locals)
	checkVars(t, "lldb locals of hold", locals, holdLocals)
	if len(locals.Vars) != len(holdLocals) {
		t.FailNow()
	}
	var kids dapVars
	dapAnswers(t, "lldb children", lldbArgs, "-o", []string{"children " + strconv.FormatUint(locals.Vars[1].Ref, 10)}, &kids)
	checkVars(t, "lldb children of items", kids, itemsChildren)
}
