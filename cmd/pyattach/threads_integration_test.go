package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// threadsApp names three threads: "busy" spins in a Python loop,
// "locker" blocks on a lock, "sleeper" sleeps. Once the last two sleep
// in the kernel, the main thread calls pause() through ctypes.PyDLL,
// which keeps the GIL: the main thread then holds the GIL (idle in
// pause), busy waits for the GIL, the others are idle. Deterministic.
const threadsApp = `import ctypes, sys, threading, time
lock = threading.Lock()
lock.acquire()
def busy():
    while True:
        pass
def locker():
    lock.acquire()
def sleeper():
    while True:
        time.sleep(1000)
ts = [threading.Thread(target=f, name=f.__name__, daemon=True) for f in (busy, locker, sleeper)]
for t in ts:
    t.start()
def asleep(t):
    with open("/proc/self/task/%d/stat" % t.native_id) as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "S"
while not (asleep(ts[1]) and asleep(ts[2])):
    time.sleep(0.01)
sys.stdout.write("ready\n")
sys.stdout.flush()
ctypes.PyDLL(None).pause()
`

// startThreadsApp runs threadsApp and returns once its main thread is in
// pause(), holding the GIL.
func startThreadsApp(t *testing.T, exe string) int {
	t.Helper()
	pid := testenv.StartPython(t, exe, threadsApp)
	testenv.WaitSyscall(t, pid, testenv.ThreadIDs(pid), "pause")
	return pid
}

// threadsWant is each thread's facts by Python name.
var threadsWant = map[string]struct {
	gil   bool
	state string
}{
	"MainThread": {true, "idle"},
	"busy":       {false, "waiting-for-gil"},
	"locker":     {false, "idle"},
	"sleeper":    {false, "idle"},
}

// TestThreadStates: pyattach dump (JSON and text), gdb's and lldb's
// py-threads and lldb's py-bt all name each thread as threading does,
// say which holds the GIL and what each does, on Debian's 3.11 and
// every pyenv 3.8+ found.
func TestThreadStates(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	for _, in := range dumpInterpreters(t) {
		if strings.HasPrefix(in.name, "pyenv-3.7.") {
			continue // 3.7's threads have no native_id for the app to wait on
		}
		t.Run(in.name, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			pid := startThreadsApp(t, in.exe)
			tasks := taskIDs(t, pid)
			d := dumpJSON(t, env, strconv.Itoa(pid))
			holders := 0
			seen := map[string]bool{}
			for _, th := range d.Threads {
				if th.Name == nil {
					t.Errorf("thread %d has no name", th.TID)
					continue
				}
				name := *th.Name
				if th.OSName == nil || *th.OSName != tasks[th.TID] {
					t.Errorf("thread %d (%s): os_name %v, /proc says %q", th.TID, name, th.OSName, tasks[th.TID])
				}
				if th.HoldsGIL != nil && *th.HoldsGIL {
					holders++
				}
				w, ok := threadsWant[name]
				if !ok {
					t.Errorf("thread %d: unexpected name %q", th.TID, name)
					continue
				}
				seen[name] = true
				if th.Interpreter == nil || *th.Interpreter != 0 {
					t.Errorf("%s: interpreter %v, want 0", name, th.Interpreter)
				}
				if th.HoldsGIL == nil || *th.HoldsGIL != w.gil {
					t.Errorf("%s: holds_gil %v, want %v", name, ptrStr(th.HoldsGIL), w.gil)
				}
				if th.State == nil || *th.State != w.state {
					t.Errorf("%s: state %v, want %s", name, ptrStr(th.State), w.state)
				}
			}
			if len(seen) != len(threadsWant) {
				t.Errorf("threads named %v, want %d names", seen, len(threadsWant))
			}
			if holders != 1 {
				t.Errorf("%d threads hold the GIL, want 1", holders)
			}

			text, _ := pyattachOK(t, "pyattach dump", pyattachBin(t), env, "dump", strconv.Itoa(pid))
			for name, w := range threadsWant {
				gil := ""
				if w.gil {
					gil = `, \[Has the GIL\]`
				}
				re := fmt.Sprintf(`(?m)^Thread \d+ "%s" \(os name "[^"]*"\), interpreter 0%s, %s:$`, name, gil, w.state)
				if !regexp.MustCompile(re).MatchString(text) {
					t.Errorf("dump text: no line matching %s:\n%s", re, text)
				}
			}

			out := mustRunIn(t, "pyattach gdb py-threads", "", env, pyattachBin(t), "gdb", "-nx", "-batch", "-p", strconv.Itoa(pid), "-ex", "py-threads")
			checkPyThreads(t, "gdb py-threads", out, "")

			// lldb: py-threads, and py-bt all with the same line over each
			// thread's stack.
			out = mustRunIn(t, "pyattach lldb py-threads", "", env, pyattachBin(t), "lldb", "-b", "-p", strconv.Itoa(pid),
				"-o", "script print('@@threads')", "-o", "py-threads", "-o", "script print('@@all')", "-o", "py-bt all")
			s := sections(out)
			checkPyThreads(t, "lldb py-threads", strings.Join(s["threads"], "\n"), "")
			checkPyThreads(t, "lldb py-bt all", strings.Join(s["all"], "\n"), `\nTraceback \(most recent call first\):`)
		})
	}
}

// checkPyThreads: out has threadsWant's line for each thread, as gdb's
// and lldb's py-threads print it ("*" or " ", the debugger's thread
// number, the header), followed by a match of after.
func checkPyThreads(t *testing.T, what, out, after string) {
	t.Helper()
	for name, w := range threadsWant {
		gil := ""
		if w.gil {
			gil = `, \[Has the GIL\]`
		}
		re := fmt.Sprintf(`(?m)^[ *] \d+ Thread \d+ "%s" \(os name "[^"]*"\), interpreter 0%s, %s$`, name, gil, w.state) + after
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("%s: no line matching %s:\n%s", what, re, out)
		}
	}
}

func ptrStr[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
