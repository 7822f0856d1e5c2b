package pywalk

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// gilGCPy: "held" blocks on a lock that is never released and "joiner"
// joins it (threading's join calls get_ident before it blocks: a stale
// built-in on the eval loop's stack); once both block for good, "busy"
// spins in Python; once it runs, "collector" waits until the main thread
// reads a pipe that is never written (os.read, in the read system call,
// without the GIL), then collects a cycle whose __del__ prints the ready
// line and calls pause() through ctypes.PyDLL, which keeps the GIL:
// collector is then inside a garbage collection for good, busy waits for
// the GIL (take_gil) for good. Automatic collection is off, so that only
// collector's gc.collect() runs __del__.
const gilGCPy = `import ctypes, gc, os, platform, sys, threading, time

# The numbers of futex(2) and read(2), which differ per architecture.
FUTEX, READ = {"x86_64": ("202", "0"), "aarch64": ("98", "63")}[platform.machine()]
gc.disable()
spinning = threading.Event()
r, w = os.pipe()
lk = threading.Lock()
lk.acquire()

def syscall(tid):
    with open("/proc/self/task/%d/syscall" % tid) as f:
        return f.read().split()

def blocked(t):
    # In futex(2) with no timeout: a lock's wait, not the GIL's.
    s = syscall(t.native_id)
    return s[0] == FUTEX and s[4] == "0x0"

def held_fn():
    lk.acquire()

def joiner():
    held.join()

def busy():
    spinning.set()
    while True:
        pass

class Held:
    def __del__(self):
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        ctypes.PyDLL(None).pause()

def collector():
    while syscall(main_id)[0] != READ:
        time.sleep(0.01)
    h = Held()
    h.me = h
    del h
    gc.collect()

main_id = threading.get_native_id()
held = threading.Thread(target=held_fn, name="held", daemon=True)
held.start()
j = threading.Thread(target=joiner, name="joiner", daemon=True)
j.start()
while not (blocked(held) and blocked(j)):
    time.sleep(0.01)
b = threading.Thread(target=busy, name="busy", daemon=True)
b.start()
spinning.wait()
c = threading.Thread(target=collector, name="collector", daemon=True)
c.start()
os.read(r, 1)
`

var (
	appPathRe = regexp.MustCompile(`"[^"]*/app\.py"`)
	hexRe     = regexp.MustCompile(`0x[0-9a-f]+`)
	inFuncRe  = regexp.MustCompile(`^  File "app\.py", line \d+, in (.*)$`)
)

// threadStacks splits "thread apply all py-bt" output by thread: each
// thread's lines, keyed by the innermost function of app.py it runs,
// paths to app.py and addresses made the same across processes.
func threadStacks(t *testing.T, what string, lines []string) map[string][]string {
	t.Helper()
	var blocks [][]string
	for _, l := range lines {
		if gdbThreadRe.MatchString(l) {
			blocks = append(blocks, nil)
			continue
		}
		if len(blocks) > 0 && l != "" {
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], appPathRe.ReplaceAllString(hexRe.ReplaceAllString(l, "0x"), `"app.py"`))
		}
	}
	res := map[string][]string{}
	for _, b := range blocks {
		key := ""
		for _, l := range b {
			if m := inFuncRe.FindStringSubmatch(l); m != nil {
				key = m[1]
				break
			}
		}
		if _, dup := res[key]; dup {
			t.Errorf("%s: two threads run %q:\n%s", what, key, strings.Join(lines, "\n"))
		}
		res[key] = b
	}
	return res
}

// TestParityGILAndGC: on Debian's 3.11 and 3.11d, with DWARF, the
// walker's py-bt shows "Waiting for the GIL" above the Python frame of a
// thread waiting for the GIL and "Garbage-collecting" (then the
// gc.collect built-in) between the __del__ a collection runs and the
// frame that called gc.collect(), and every thread's py-bt is CPython's,
// line for line. On a stripped copy with no symbol table (and no debug
// file), where no C frame can be named take_gil or gc_collect_main, the
// walker shows neither line and every thread's stack is otherwise the
// same: no built-in is named that the thread does not run (joiner's
// stale get_ident is not taken for the lock's acquire it runs).
func TestParityGILAndGC(t *testing.T) {
	dir := walkerDebuggers(t)
	eachCPythonOracle(t, func(t *testing.T, in interp) {
		cmd := startSource(t, in.exe, nil, gilGCPy)
		defer cmd.Process.Signal(syscall.SIGKILL)
		testenv.WaitSyscall(t, cmd.Process.Pid, testenv.AnyThread(), "pause")
		out := run(t, nil, "gdb", gdbArgs(dir, in, "-p", strconv.Itoa(cmd.Process.Pid), "-ex", "source "+in.oracle,
			"-ex", `echo @@c\n`, "-ex", "thread apply all py-bt",
			"-ex", `echo @@w\n`, "-ex", "thread apply all pyattach-bt",
			"-ex", `echo @@end\n`)...)
		got := sections(out)
		ours, theirs := threadStacks(t, "walker", got["w"]), threadStacks(t, "CPython's", got["c"])
		del, call := lineOf(t, gilGCPy, "ctypes.PyDLL(None).pause()"), lineOf(t, gilGCPy, "gc.collect()")
		want := map[string][]string{
			"busy": {"Traceback (most recent call first):", "  Waiting for the GIL",
				`  File "app.py", line ANY, in busy`, "    ANY"},
			"__del__": {"Traceback (most recent call first):",
				fmt.Sprintf(`  File "app.py", line %d, in __del__`, del), "    ctypes.PyDLL(None).pause()",
				"  Garbage-collecting", "  <built-in method collect of module object at remote 0x>",
				fmt.Sprintf(`  File "app.py", line %d, in collector`, call), "    gc.collect()"},
		}
		for key, w := range want {
			if len(ours[key]) < len(w) {
				t.Errorf("gdb walker: thread %s: %q, want it to start with %q", key, ours[key], w)
				continue
			}
			matchLines(t, "gdb walker: thread "+key, ours[key][:len(w)], w)
		}
		if len(theirs) != 5 || len(ours) != 5 {
			t.Errorf("gdb: the walker's threads %q, CPython's %q, want 5 each", ours, theirs)
		}
		for key, c := range theirs {
			if strings.Join(ours[key], "\n") != strings.Join(c, "\n") {
				t.Errorf("gdb: thread %s: the walker's py-bt\n%s\nCPython's\n%s", key, strings.Join(ours[key], "\n"), strings.Join(c, "\n"))
			}
		}
		if t.Failed() {
			t.Logf("gdb:\n%s", out)
		}

		exe, env := testenv.Stripped(t, in.exe)
		scmd := startSource(t, exe, env, gilGCPy)
		defer scmd.Process.Signal(syscall.SIGKILL)
		testenv.WaitSyscall(t, scmd.Process.Pid, testenv.AnyThread(), "pause")
		sout := run(t, nil, "gdb", gdbArgs(dir, in, "-iex", "set debug-file-directory "+t.TempDir(), "-p", strconv.Itoa(scmd.Process.Pid),
			"-ex", `echo @@w\n`, "-ex", "thread apply all pyattach-bt", "-ex", `echo @@end\n`)...)
		stripped := threadStacks(t, "walker stripped", sections(sout)["w"])
		for key, lines := range ours {
			var named []string
			for _, l := range lines {
				if l != "  Waiting for the GIL" && l != "  Garbage-collecting" {
					named = append(named, l)
				}
			}
			if strings.Join(stripped[key], "\n") != strings.Join(named, "\n") {
				t.Errorf("gdb stripped: thread %s: the walker's py-bt\n%s\nwith DWARF (less the lines of named C frames)\n%s", key, strings.Join(stripped[key], "\n"), strings.Join(named, "\n"))
			}
		}
		if len(stripped) != len(ours) {
			t.Errorf("gdb stripped: threads %q, with DWARF %q", stripped, ours)
		}
		if t.Failed() {
			t.Logf("gdb stripped:\n%s", sout)
		}
	})
}
