//go:build linux

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/gcore"
	"github.com/pyattach/pyattach/detect/testenv"
)

// coreStateApp is a pystack-style program: one thread sleeps, one waits
// on a lock, one runs a pure-Python loop (the only thread that wants the
// GIL), one sleeps while it handles an exception, and the main thread
// joins. Each worker gives its OS thread its own name.
const coreStateApp = `import threading, time
def named(n):
    with open("/proc/self/task/%d/comm" % threading.get_native_id(), "w") as f:
        f.write(n)
held = threading.Lock()
held.acquire()
def sleeper():
    named("sleeper")
    time.sleep(1000)
def locker():
    named("locker")
    held.acquire()
def busy():
    named("busy")
    n = 0
    while True:
        n += 1
def handler():
    named("handler")
    try:
        raise ValueError("bad")
    except ValueError:
        time.sleep(1000)
ts = [threading.Thread(target=f, name=f.__name__, daemon=True) for f in (sleeper, locker, busy, handler)]
for t in ts:
    t.start()
print("ready", flush=True)
ts[0].join()
`

// TestCoreThreadState: the state of every thread of a gcore core of
// coreStateApp (dump --json and text) is what a live dump of the same
// process said just before the core was taken, derived from the core's
// registers: idle for the sleeping, lock-waiting, exception-handling
// and joining threads, running (with the GIL) for the busy one; the
// same of a core written by pyattach's own gcore (gcore.Take, what
// bundle takes of a live process). Debian's python3.11 and a pyenv
// build.
func TestCoreThreadState(t *testing.T) {
	testenv.Need(t, "gdb")
	gdbGcore := testenv.Need(t, "gcore")
	testenv.NeedRoot(t, "gcore.Take stops the process with ptrace")
	pys := []testenv.Python{testenv.Debian(t), testenv.Pyenv(t, "3.11+")}
	for _, py := range pys {
		t.Run(filepath.Base(py.Prefix)+"-"+py.Version, func(t *testing.T) {
			env := scriptEnv(t.TempDir())
			pid := testenv.StartPython(t, py.Exe, coreStateApp)
			testenv.WaitSyscall(t, pid, testenv.ThreadsNamed("sleeper", "handler"), testenv.TimeSleep...)
			testenv.WaitSyscall(t, pid, testenv.ThreadsNamed("locker"), "futex")
			testenv.WaitSyscall(t, pid, testenv.ThreadIDs(pid), "futex")
			ps := strconv.Itoa(pid)

			live := dumpJSON(t, env, ps)
			core := filepath.Join(t.TempDir(), "core")
			if out, err := exec.Command(gdbGcore, "-o", core, ps).CombinedOutput(); err != nil {
				t.Fatalf("gcore: %v\n%s", err, out)
			}
			dead := dumpJSON(t, env, core+"."+ps)
			mine := filepath.Join(t.TempDir(), "core.mine")
			if _, err := gcore.Take(context.Background(), pid, mine, gcore.Options{}); err != nil {
				t.Fatalf("gcore.Take: %v", err)
			}
			taken := dumpJSON(t, env, mine)

			want := map[string]string{"MainThread": "idle", "sleeper": "idle", "locker": "idle", "busy": "running", "handler": "idle"}
			states := func(what string, d dumpOutput) map[string]string {
				got := map[string]string{}
				for _, th := range d.Threads {
					name, state := ptrStr(th.Name), ptrStr(th.State)
					if th.State == nil {
						t.Errorf("%s: thread %d %q has no state", what, th.TID, name)
					}
					got[name] = state
					if name == "busy" && (th.HoldsGIL == nil || !*th.HoldsGIL) {
						t.Errorf("%s: the busy thread does not hold the GIL", what)
					}
				}
				return got
			}
			ls, cs, ms := states("live", live), states("core", dead), states("gcore.Take core", taken)
			if len(cs) != len(want) {
				t.Errorf("core: threads %v, want %v", cs, want)
			}
			for name, w := range want {
				if ls[name] != w {
					t.Errorf("live: thread %s is %q, want %q", name, ls[name], w)
				}
				if cs[name] != ls[name] {
					t.Errorf("core: thread %s is %q, the live dump said %q", name, cs[name], ls[name])
				}
				if ms[name] != ls[name] {
					t.Errorf("gcore.Take core: thread %s is %q, the live dump said %q", name, ms[name], ls[name])
				}
			}

			text, _ := pyattachOK(t, "pyattach dump core", pyattachBin(t), env, "dump", core+"."+ps)
			for name, w := range want {
				re := regexp.MustCompile(`(?m)^Thread \d+ "` + name + `", interpreter 0, (\[Has the GIL\], )?` + w + `:$`)
				if !re.MatchString(text) {
					t.Errorf("dump core (text): no line matching %s:\n%s", re, text)
				}
			}
		})
	}
}
