//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pyattach/pyattach/detect/testenv"
)

// factsApp is the acceptance program: threads named by
// threading, "busy" spinning in Python, "locker" blocked on a lock,
// "handler" asleep in leaf (one local of every kind localsWant lists)
// inside an except ValueError block (check raised it at line 5, called
// at line 9, as excApp). Once locker and handler sleep in the kernel, the
// main thread calls pause() through ctypes.PyDLL, keeping the GIL: busy
// then waits for the GIL. A free-threaded build has no GIL to keep (and
// 3.13t no _ctypes here): it calls signal.pause, and busy runs.
const factsApp = `import sys, threading, time

def check(v):
    if v < 0:
        raise ValueError("bad value")

def handler():
    try:
        check(-1)
    except ValueError:
        leaf()
` + localsDefs + `
lock = threading.Lock()
lock.acquire()
def busy():
    while True:
        pass
def locker():
    lock.acquire()
ts = [threading.Thread(target=f, name=f.__name__, daemon=True) for f in (busy, locker, handler)]
for t in ts:
    t.start()
def asleep(t):
    with open("/proc/self/task/%d/stat" % t.native_id) as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "S"
while not (asleep(ts[1]) and asleep(ts[2])):
    time.sleep(0.01)
if getattr(sys, "_is_gil_enabled", lambda: True)():
    import ctypes
    pause = ctypes.PyDLL(None).pause
else:
    import signal
    pause = signal.pause
sys.stdout.write("ready\n")
sys.stdout.flush()
pause()
`

// factWant is one thread's GIL and state; gil nil: no GIL (free-threaded).
type factWant struct {
	gil   *bool
	state string
}

func factsWant(freeThreaded bool) map[string]factWant {
	if freeThreaded {
		return map[string]factWant{
			"MainThread": {nil, "idle"},
			"busy":       {nil, "running"},
			"locker":     {nil, "idle"},
			"handler":    {nil, "idle"},
		}
	}
	yes, no := true, false
	return map[string]factWant{
		"MainThread": {&yes, "idle"},
		"busy":       {&no, "waiting-for-gil"},
		"locker":     {&no, "idle"},
		"handler":    {&no, "idle"},
	}
}

// factsThread is a thread in dump --json and in the walker's own JSON
// (pyattach-dump, the dump function): locals are an object in the
// first, a list of [name, repr] in the second.
type factsThread struct {
	TID         int     `json:"tid"`
	Name        *string `json:"name"`
	OSName      *string `json:"os_name"`
	Interpreter *int    `json:"interpreter"`
	HoldsGIL    *bool   `json:"holds_gil"`
	State       *string `json:"state"`
	Frames      []struct {
		Function string          `json:"function"`
		Locals   json.RawMessage `json:"locals"`
	} `json:"frames"`
}

// localsPairs reads a frame's locals in either form, in order.
func localsPairs(raw json.RawMessage) [][2]string {
	var list [][2]string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, _ := dec.Token()
		v, _ := dec.Token()
		ks, _ := k.(string)
		vs, _ := v.(string)
		list = append(list, [2]string{ks, vs})
	}
	return list
}

// checkFacts checks every thread of factsApp in a JSON dump: the names,
// interpreter 0, the GIL holder (one, or none and null everywhere on a
// free-threaded build), the states (live: exactly; a core: unknown or
// the live one, never another), the OS names of a live process (tasks),
// leaf's locals and the exception the handler handles.
func checkFacts(t *testing.T, what, stdout string, want map[string]factWant, tasks map[int]string) {
	t.Helper()
	var d struct {
		Threads []factsThread `json:"threads"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, stdout)
	}
	live := tasks != nil
	seen := map[string]bool{}
	holders := 0
	var leaf json.RawMessage
	for _, th := range d.Threads {
		if th.Name == nil {
			t.Errorf("%s: thread %d has no name", what, th.TID)
			continue
		}
		name := *th.Name
		w, ok := want[name]
		if !ok || seen[name] {
			t.Errorf("%s: thread %d: unexpected name %q (or twice)", what, th.TID, name)
			continue
		}
		seen[name] = true
		if live && (th.OSName == nil || *th.OSName != tasks[th.TID]) {
			t.Errorf("%s: %s: os_name %v, /proc says %q", what, name, ptrStr(th.OSName), tasks[th.TID])
		}
		if th.Interpreter == nil || *th.Interpreter != 0 {
			t.Errorf("%s: %s: interpreter %v, want 0", what, name, ptrStr(th.Interpreter))
		}
		if th.HoldsGIL != nil && *th.HoldsGIL {
			holders++
		}
		if (w.gil == nil) != (th.HoldsGIL == nil) || w.gil != nil && *w.gil != *th.HoldsGIL {
			t.Errorf("%s: %s: holds_gil %s, want %s", what, name, ptrStr(th.HoldsGIL), ptrStr(w.gil))
		}
		if live && ptrStr(th.State) != w.state || !live && th.State != nil && *th.State != w.state {
			t.Errorf("%s: %s: state %s, want %s", what, name, ptrStr(th.State), w.state)
		}
		for _, f := range th.Frames {
			if f.Function == "leaf" && name == "handler" {
				leaf = f.Locals
			}
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%s: threads named %v, want %d names", what, seen, len(want))
	}
	if wantHolders := map[bool]int{true: 0, false: 1}[want["MainThread"].gil == nil]; holders != wantHolders {
		t.Errorf("%s: %d threads hold the GIL, want %d", what, holders, wantHolders)
	}
	got, lw := localsPairs(leaf), localsWant()
	ok := len(got) == len(lw)
	for i := 0; ok && i < len(lw); i++ {
		ok = got[i][0] == lw[i][0] && addrPattern(lw[i][1]).MatchString(got[i][1])
	}
	if !ok {
		t.Errorf("%s: handler's leaf locals\n got %q\nwant %q", what, got, lw)
	}
	checkExcJSON(t, what, stdout)
}

// factsHeaderRe is a thread's header line, as dump's text (suffix ":")
// and py-threads (prefix "[ *] N ") print it.
func factsHeaderRe(prefix, name string, w factWant, suffix string) *regexp.Regexp {
	gil := ""
	switch {
	case w.gil == nil:
		gil = `, \[no GIL \(free-threaded\)\]`
	case *w.gil:
		gil = `, \[Has the GIL\]`
	}
	return regexp.MustCompile(fmt.Sprintf(`(?m)^%sThread \d+ "%s"( \(os name "[^"]*"\))?, interpreter 0%s, %s%s$`, prefix, name, gil, w.state, suffix))
}

// factsRoot is a Python to run factsApp on: one of the roots (exe as the
// process sees it), possibly with a stripped copy of its interpreter
// laid over the original in the container's overlay.
type factsRoot struct {
	name, dir, exe string
	freeThreaded   bool
	strip          bool
}

func factsRoots(t *testing.T) []factsRoot {
	t.Helper()
	testenv.NeedRoot(t, "unshare, overlay mounts and pivot_root")
	var out []factsRoot
	for _, r := range testenv.Roots(t) {
		out = append(out, factsRoot{name: r.Suite + "-python" + r.Minor, dir: r.Dir, exe: r.Exe(), freeThreaded: strings.HasSuffix(r.Minor, "t")})
	}
	if len(out) == 0 {
		testenv.Missing(t, "no complete root in %s", testenv.RootsDir())
	}
	// A stripped copy of the first of Debian's own interpreters.
	for _, r := range out {
		if !r.freeThreaded {
			r.name += "-stripped"
			r.strip = true
			out = append(out, r)
			break
		}
	}
	return out
}

// startFactsRoot runs app in a pivot_root container of the root and
// returns the interpreter's PID (once its main thread is in pause()
// when waitPause) and app.py's directory, the container's /mnt and
// working directory, where a kernel core lands. With r.strip, the
// overlay's upper layer holds a strip --strip-all copy of the
// interpreter at its own path; program is the interpreter the host
// reads a core's program from.
func startFactsRoot(t *testing.T, r factsRoot, app string, waitPause bool) (pid int, appDir, program string) {
	t.Helper()
	upper := t.TempDir()
	program = filepath.Join(r.dir, r.exe)
	if r.strip {
		strip := testenv.Need(t, "strip")
		program = filepath.Join(upper, r.exe)
		if err := os.MkdirAll(filepath.Dir(program), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(strip, "--strip-all", "-o", program, filepath.Join(r.dir, r.exe)).CombinedOutput(); err != nil {
			t.Fatalf("strip: %v\n%s", err, out)
		}
	}
	appDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(appDir, "app.py"), []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	pid = startPivotedChild(t, r.dir, upper, appDir, r.exe)
	if waitPause {
		testenv.WaitSyscall(t, pid, testenv.ThreadIDs(pid), "pause")
	}
	return pid, appDir, program
}

// startPivotedChild is startPivotedApp with the interpreter run as a
// child of the container's shell, not its init: a process's signals
// from outside its PID namespace reach it (SIGABRT for a kernel core).
func startPivotedChild(t *testing.T, lower, upper, appDir, exe string) int {
	t.Helper()
	d := t.TempDir()
	for _, sub := range []string{"work", "merged"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := `mount -t overlay overlay -o lowerdir="$1",upperdir="$2",workdir="$3/work" "$3/merged" &&
mount --bind "$5" "$3/merged/mnt" && cd "$3/merged" && pivot_root . . &&
mount -t proc proc /proc && umount -l . && cd /mnt && "$4" /mnt/app.py; :`
	cmd := exec.Command("unshare", "--pid", "--mount", "--fork", "--kill-child", "sh", "-c", script, "sh", lower, upper, d, exe, appDir)
	cmd.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "PYTHONDONTWRITEBYTECODE=1"}
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("app.py after pivot_root did not start: stdout %q", line)
	}
	pid := cmd.Process.Pid
	for depth := 0; depth < 2; depth++ {
		kids, err := childPIDs(pid)
		if err != nil || len(kids) != 1 {
			t.Fatalf("children of pid %d: %v %v", pid, kids, err)
		}
		pid = kids[0]
	}
	return pid
}

// rootCoreJSON reads a core of a root's process through pyattach gdb
// (the host has no such program: gdb gets it and the root as sysroot,
// as dump's hint says): py-threads' output and the walker's JSON with
// locals.
func rootCoreJSON(t *testing.T, env []string, root, program, core string) (threads, js string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dump.json")
	threads = mustRunIn(t, "pyattach gdb core", "", env, pyattachBin(t), "gdb", "-nx", "-batch",
		"-iex", "set sysroot "+root, program, core,
		"-ex", "py-threads", "-ex", fmt.Sprintf("python pyattach_gdb.dump(%q, locals=True)", out))
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the walker wrote no JSON: %v\n%s", err, threads)
	}
	return threads, string(b)
}

// kernelCore aborts pid (its core size limit raised first) and returns
// the core the kernel wrote in dir, its working directory. When
// kernel.core_pattern sends cores elsewhere, Missing decides.
func kernelCore(t *testing.T, pid int, dir string) string {
	t.Helper()
	if pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); strings.TrimSpace(string(pat)) != "core" {
		testenv.Missing(t, "kernel.core_pattern is %q, not core: the kernel writes no core in the process's directory (sysctl kernel.core_pattern=core)", strings.TrimSpace(string(pat)))
	}
	lim := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	if err := unix.Prlimit(pid, unix.RLIMIT_CORE, &lim, nil); err != nil {
		t.Fatalf("prlimit %d: %v", pid, err)
	}
	if err := syscall.Kill(pid, syscall.SIGABRT); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6000; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	core := filepath.Join(dir, "core")
	if _, err := os.Stat(core); err != nil {
		t.Fatalf("the kernel wrote no core: %v", err)
	}
	return core
}

// TestThreadFactsRoots: the acceptance program on Debian's own
// 3.13, 3.14, 3.15 and the free-threaded 3.13t in their roots, each in a
// pivot_root container, and a stripped copy of one: pyattach dump
// (--json --locals, text) and gdb's py-threads of the live process, then
// a gcore core and the kernel's core read through pyattach gdb with the
// root as sysroot: the threading names, the GIL holder (none on 3.13t,
// where every header says no GIL), the states (a core's: unknown or the
// live one), leaf's locals of every kind, the exception in the except
// ValueError block.
func TestThreadFactsRoots(t *testing.T) {
	testenv.Need(t, "gdb")
	gcore := testenv.Need(t, "gcore")
	for _, r := range factsRoots(t) {
		t.Run(r.name, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			want := factsWant(r.freeThreaded)
			pid, dir, program := startFactsRoot(t, r, factsApp, true)
			ps := strconv.Itoa(pid)
			tasks := taskIDs(t, pid)

			stdout, _ := pyattachOK(t, "pyattach dump --json --locals", pyattachBin(t), env, "dump", "--json", "--locals", ps)
			checkFacts(t, "live dump --json", stdout, want, tasks)
			text, _ := pyattachOK(t, "pyattach dump", pyattachBin(t), env, "dump", ps)
			out := mustRunIn(t, "pyattach gdb py-threads", "", env, pyattachBin(t), "gdb", "-nx", "-batch", "-p", ps, "-ex", "py-threads")
			for name, w := range want {
				if re := factsHeaderRe("", name, w, ":"); !re.MatchString(text) {
					t.Errorf("dump text: no line matching %s:\n%s", re, text)
				}
				if re := factsHeaderRe(`[ *] \d+ `, name, w, ""); !re.MatchString(out) {
					t.Errorf("py-threads: no line matching %s:\n%s", re, out)
				}
			}

			core := filepath.Join(t.TempDir(), "core")
			if out, err := exec.Command(gcore, "-o", core, ps).CombinedOutput(); err != nil {
				t.Fatalf("gcore: %v\n%s", err, out)
			}
			threads, js := rootCoreJSON(t, env, r.dir, program, core+"."+ps)
			checkFacts(t, "gcore core", js, want, nil)
			checkCoreThreads(t, "gcore core py-threads", threads, want)

			t.Run("kernel_core", func(t *testing.T) {
				kcore := kernelCore(t, pid, dir)
				threads, js := rootCoreJSON(t, env, r.dir, program, kcore)
				checkFacts(t, "kernel core", js, want, nil)
				checkCoreThreads(t, "kernel core py-threads", threads, want)
			})
		})
	}
}

// checkCoreThreads checks py-threads of a core: each name once, the GIL
// (or no GIL) as live, the state unknown or the live one.
func checkCoreThreads(t *testing.T, what, out string, want map[string]factWant) {
	t.Helper()
	for name, w := range want {
		st := w
		st.state = "(?:" + regexp.QuoteMeta(w.state) + "|state unknown)"
		if re := factsHeaderRe(`[ *] \d+ `, name, st, ""); !re.MatchString(out) {
			t.Errorf("%s: no line matching %s:\n%s", what, re, out)
		}
	}
}

// gcApp's thread "collector" runs gc.collect(); the collector's "start"
// callback says ready and calls pause() through ctypes.PyDLL, keeping
// the GIL: the thread then sits inside a collection, holding the GIL,
// with its interpreter's collecting flag set, for as long as the test
// needs.
const gcApp = `import ctypes, gc, sys, threading, time
def hold(phase, info):
    if phase == "start" and threading.current_thread().name == "collector":
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        ctypes.PyDLL(None).pause()
gc.callbacks.append(hold)
def collector():
    gc.collect()
threading.Thread(target=collector, name="collector", daemon=True).start()
time.sleep(1000)
`

// checkGCLive checks the collector's state in a live process's dump
// --json and gdb's py-threads, then takes a core with gcore and returns
// its path without the ".PID" gcore adds.
func checkGCLive(t *testing.T, env []string, gcore, ps string) string {
	t.Helper()
	stdout, _ := pyattachOK(t, "pyattach dump --json", pyattachBin(t), env, "dump", "--json", ps)
	checkGCJSON(t, "live dump --json", stdout)
	out := mustRunIn(t, "pyattach gdb py-threads", "", env, pyattachBin(t), "gdb", "-nx", "-batch", "-p", ps, "-ex", "py-threads")
	if !gcThreadsRe.MatchString(out) {
		t.Errorf("py-threads: no line matching %s:\n%s", gcThreadsRe, out)
	}
	core := filepath.Join(t.TempDir(), "core")
	if out, err := exec.Command(gcore, "-o", core, ps).CombinedOutput(); err != nil {
		t.Fatalf("gcore: %v\n%s", err, out)
	}
	return core
}

// checkGCJSON checks a JSON dump of gcApp: the thread "collector" holds
// the GIL and is in state gc, no other thread is.
func checkGCJSON(t *testing.T, what, stdout string) {
	t.Helper()
	var d struct {
		Threads []factsThread `json:"threads"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, stdout)
	}
	found := false
	for _, th := range d.Threads {
		if ptrStr(th.Name) == "collector" {
			found = true
			if ptrStr(th.State) != "gc" || ptrStr(th.HoldsGIL) != "true" {
				t.Errorf("%s: collector: state %s, holds_gil %s; want gc, true", what, ptrStr(th.State), ptrStr(th.HoldsGIL))
			}
		} else if ptrStr(th.State) == "gc" {
			t.Errorf("%s: thread %s is in state gc, not the collector", what, ptrStr(th.Name))
		}
	}
	if !found {
		t.Errorf("%s: no thread named collector:\n%s", what, stdout)
	}
}

var gcThreadsRe = regexp.MustCompile(`(?m)^[ *] \d+ Thread \d+ "collector"( \(os name "[^"]*"\))?, interpreter 0, \[Has the GIL\], gc$`)

// TestThreadStateGC: a thread inside a garbage collection (gc.collect()
// in a named thread, held there by a gc callback) is in state gc, with
// the GIL, in dump --json and gdb's py-threads, live and from a gcore
// core (the collector's flag is in memory), on Debian's 3.11 and on
// Debian's 3.13, 3.14 and 3.15 in their roots. The free-threaded 3.13t
// is left out: it has no GIL to tell the collecting thread by (nor
// _ctypes here).
func TestThreadStateGC(t *testing.T) {
	testenv.Need(t, "gdb")
	gcore := testenv.Need(t, "gcore")
	env := scriptEnv(t.TempDir())
	t.Run("debian-3.11", func(t *testing.T) {
		pid := testenv.StartPython(t, testenv.Debian(t).Exe, gcApp)
		testenv.WaitSyscall(t, pid, testenv.AnyThread(), "pause")
		ps := strconv.Itoa(pid)
		core := checkGCLive(t, env, gcore, ps)
		stdout, _ := pyattachOK(t, "pyattach dump --json core", pyattachBin(t), env, "dump", "--json", core+"."+ps)
		checkGCJSON(t, "gcore core", stdout)
	})
	for _, r := range factsRoots(t) {
		if r.freeThreaded || r.strip {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			pid, _, program := startFactsRoot(t, r, gcApp, false)
			testenv.WaitSyscall(t, pid, testenv.AnyThread(), "pause")
			ps := strconv.Itoa(pid)
			core := checkGCLive(t, env, gcore, ps)
			threads, js := rootCoreJSON(t, env, r.dir, program, core+"."+ps)
			checkGCJSON(t, "gcore core", js)
			if !gcThreadsRe.MatchString(threads) {
				t.Errorf("gcore core py-threads: no line matching %s:\n%s", gcThreadsRe, threads)
			}
		})
	}
}
