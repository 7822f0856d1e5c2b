//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pyattach/pyattach/cmd/internal/gcore"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/testenv"
)

// gcoreApp blocks three named worker threads on an event and its main
// thread in time.sleep, each a few calls deep, so that every thread's
// stack is the same whenever a core is taken. SIGUSR1 makes it append
// "alive" to $GCORE_ALIVE (and go back to sleep where it was).
const gcoreApp = `import os, signal, sys, threading, time
ev = threading.Event()
def wait_here(n):
    ev.wait()
def worker(n):
    wait_here(n)
def on_usr1(sig, frame):
    with open(os.environ["GCORE_ALIVE"], "a") as f:
        f.write("alive\n")
signal.signal(signal.SIGUSR1, on_usr1)
ts = [threading.Thread(target=worker, args=(i,), name="worker-%d" % i, daemon=True) for i in range(3)]
for t in ts:
    t.start()
def asleep(t):
    with open("/proc/self/task/%d/stat" % t.native_id) as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "S"
while not all(asleep(t) for t in ts):
    time.sleep(0.01)
def main_sleep():
    while True:
        time.sleep(1000)
sys.stdout.write("ready\n")
sys.stdout.flush()
main_sleep()
`

// TestGcoreReadEverywhere: a core written by gcore.Take of a
// multi-threaded Python process (Debian's python3.11 with its -dbg
// files, and a pyenv build) is read by gdb (every thread, native frames
// through the eval loop), by lldb (--core, every thread), by
// detect/core (pid, command line, executable and its build-id) and by
// pyattach dump, whose Python stacks equal those it reads from gdb's own
// gcore of the same process. The process runs on afterwards, untraced.
func TestGcoreReadEverywhere(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	lldb := testenv.Need(t, "lldb")
	testenv.NeedRoot(t, "gcore stops the process with ptrace")
	pys := []testenv.Python{testenv.Debian(t), testenv.Pyenv(t, "3.11+")}
	bin := pyattachBin(t)
	for _, py := range pys {
		t.Run(filepath.Base(py.Prefix)+"-"+py.Version, func(t *testing.T) {
			dir := t.TempDir()
			alive := filepath.Join(dir, "alive")
			pid := testenv.StartPython(t, py.Exe, gcoreApp, "GCORE_ALIVE="+alive)
			tids := taskIDs(t, pid)

			mine := filepath.Join(dir, "core.mine")
			st, err := gcore.Take(context.Background(), pid, mine, gcore.Options{})
			if err != nil {
				t.Fatalf("gcore.Take: %v", err)
			}
			t.Logf("%s: %v", py.Exe, st)
			if st.Threads != len(tids) {
				t.Errorf("Stats.Threads = %d, the process has %d", st.Threads, len(tids))
			}
			checkStillRunning(t, pid, alive, 1)
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".pyattach-tmp-") {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}

			theirs := filepath.Join(dir, "core.gdb")
			if out, err := exec.Command(gdb, "-nx", "-batch", "-p", fmt.Sprint(pid), "-ex", "gcore "+theirs).CombinedOutput(); err != nil {
				t.Fatalf("gdb gcore: %v\n%s", err, out)
			}

			// gdb: every thread, with the same native frames as in gdb's core.
			bt := func(c string) (string, map[int][]string) {
				out, err := exec.Command(gdb, "-nx", "-batch", "-ex", "info threads", "-ex", "thread apply all bt", py.Exe, c).CombinedOutput()
				if err != nil {
					t.Fatalf("gdb %s: %v\n%s", c, err, out)
				}
				return string(out), gcoreFrames(string(out))
			}
			outMine, framesMine := bt(mine)
			_, framesTheirs := bt(theirs)
			for _, l := range strings.Split(outMine, "\n") {
				if strings.Contains(l, "warning:") && !strings.Contains(l, "auto-load") {
					t.Errorf("gdb warns about the core: %s", l)
				}
			}
			for tid := range tids {
				fs := framesMine[tid]
				if !hasString(fs, "_PyEval_EvalFrameDefault") {
					t.Errorf("gdb: thread %d has no _PyEval_EvalFrameDefault frame: %v\n%s", tid, fs, outMine)
				}
				if strings.Join(fs, " ") != strings.Join(framesTheirs[tid], " ") {
					t.Errorf("gdb: thread %d's frames differ from those in gdb's own core:\n mine:  %v\n gdb's: %v", tid, fs, framesTheirs[tid])
				}
			}
			if len(framesMine) != len(tids) {
				t.Errorf("gdb sees threads %v, the process has %v", tidKeys(framesMine), tids)
			}

			// lldb: every thread, each through the eval loop.
			cmd := exec.Command(lldb, "--batch", "--core", mine, py.Exe, "-o", "thread list", "-o", "bt all")
			cmd.Env = append(os.Environ(), testenv.LLDBEnv()...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("lldb: %v\n%s", err, out)
			}
			for tid := range tids {
				if !strings.Contains(string(out), fmt.Sprintf("tid = %d,", tid)) {
					t.Errorf("lldb does not list thread %d:\n%s", tid, out)
				}
			}
			if n := strings.Count(string(out), "_PyEval_EvalFrameDefault"); n < len(tids) {
				t.Errorf("lldb: %d _PyEval_EvalFrameDefault frames for %d threads:\n%s", n, len(tids), out)
			}

			// detect/core: the notes pyattach reads.
			info, err := core.Open(mine)
			if err != nil {
				t.Fatalf("core.Open: %v", err)
			}
			exe, _ := filepath.EvalSymlinks(py.Exe)
			if info.PID != pid || info.Exe != exe || !strings.HasPrefix(info.Args, py.Exe+" ") || info.Comm == "" {
				t.Errorf("core says pid %d, exe %q, args %q, comm %q; want %d, %q, %q and the script", info.PID, info.Exe, info.Args, info.Comm, pid, exe, py.Exe)
			}
			if want := testenv.ReadelfBuildID(t, exe); info.ExeBuildID != want {
				t.Errorf("core: executable build-id %q, want %q", info.ExeBuildID, want)
			}

			// pyattach dump: the same Python stacks as from gdb's core.
			dump := func(c string) string {
				stdout, _ := pyattachOK(t, "pyattach dump "+c, bin, os.Environ(), "dump", c)
				_, rest, _ := strings.Cut(stdout, "\n")
				return rest
			}
			dMine, dTheirs := dump(mine), dump(theirs)
			if dMine != dTheirs {
				t.Errorf("pyattach dump differs between the cores:\n mine:\n%s\n gdb's:\n%s", dMine, dTheirs)
			}
			if strings.Count(dMine, "in wait_here") != 3 || !strings.Contains(dMine, "in main_sleep") {
				t.Errorf("pyattach dump of the core lacks the app's frames:\n%s", dMine)
			}
			checkStillRunning(t, pid, alive, 2)
		})
	}
}

// TestGcoreCancelled: a Take cancelled while the process is stopped (as
// SIGINT or SIGTERM do) lets the process go and leaves no file.
func TestGcoreCancelled(t *testing.T) {
	testenv.NeedRoot(t, "gcore stops the process with ptrace")
	py := testenv.Debian(t)
	dir := t.TempDir()
	alive := filepath.Join(dir, "alive")
	pid := testenv.StartPython(t, py.Exe, gcoreApp, "GCORE_ALIVE="+alive)
	ctx, cancel := context.WithCancel(context.Background())
	traced := 0
	restore := gcore.SetStoppedHook(func() {
		traced = gcoreTracer(t, pid)
		cancel()
	})
	defer restore()
	out := filepath.Join(dir, "core")
	_, err := gcore.Take(ctx, pid, out, gcore.Options{})
	if err != context.Canceled {
		t.Fatalf("Take cancelled: err = %v, want context.Canceled", err)
	}
	if traced == 0 {
		t.Errorf("the process was not stopped when the hook ran")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left after cancel: %v", ents)
	}
	checkStillRunning(t, pid, alive, 1)
}

// checkRunning checks that pid is traced by nobody, is not stopped, and
// answers SIGUSR1 sent to its main thread (its n-th "alive" line).
func checkStillRunning(t *testing.T, pid int, alive string, n int) {
	t.Helper()
	if tp := gcoreTracer(t, pid); tp != 0 {
		t.Errorf("process %d is still traced by %d", pid, tp)
	}
	// To the main thread: one that another thread took would not wake
	// its sleep, and Python runs handlers on the main thread only.
	if err := unix.Tgkill(pid, pid, unix.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		b, _ := os.ReadFile(alive)
		if strings.Count(string(b), "alive") >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	t.Errorf("process %d does not answer SIGUSR1 after the core\n%s", pid, b)
}

func gcoreTracer(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	st, err := proc.ParseStatus(b)
	if err != nil {
		t.Fatal(err)
	}
	return st.TracerPID
}

var (
	gcoreThreadRe = regexp.MustCompile(`^Thread \d+ \(.*LWP (\d+)\)`)
	gcoreFrameRe  = regexp.MustCompile(`^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+)`)
)

// gdbFrames are the function names of each thread's frames in gdb's
// `thread apply all bt` output, by LWP.
func gcoreFrames(out string) map[int][]string {
	m := map[int][]string{}
	cur := 0
	for _, l := range strings.Split(out, "\n") {
		if g := gcoreThreadRe.FindStringSubmatch(l); g != nil {
			fmt.Sscan(g[1], &cur)
			m[cur] = nil
			continue
		}
		if g := gcoreFrameRe.FindStringSubmatch(l); g != nil && cur != 0 {
			m[cur] = append(m[cur], g[1])
		}
	}
	return m
}

func hasString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func tidKeys(m map[int][]string) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
