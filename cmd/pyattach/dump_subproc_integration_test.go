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
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/dump"
	"github.com/pyattach/pyattach/detect/testenv"
)

// poolApp runs a multiprocessing Pool of two workers with the start
// method given as its argument; task 0 sleeps in child_zero, task 1 in
// child_one (each task sleeps for good, so each worker takes one). Each
// worker says so on a queue; then the parent prints "ready" and sleeps
// in parent_waits.
const poolApp = `import multiprocessing as mp, sys, time
def init(q):
    global queue
    queue = q
def child_zero():
    queue.put(0)
    time.sleep(1000)
def child_one():
    queue.put(1)
    time.sleep(1000)
def task(n):
    (child_zero, child_one)[n]()
def parent_waits():
    time.sleep(1000)
if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    q = ctx.Queue()
    pool = ctx.Pool(2, initializer=init, initargs=(q,))
    pool.map_async(task, [0, 1], chunksize=1)
    got = sorted([q.get(), q.get()])
    print("ready", got, flush=True)
    parent_waits()
`

// Lines of poolApp.
const (
	poolChildZeroLine = 7
	poolChildOneLine  = 10
	poolParentLine    = 14
)

// subprocInterp is the interpreter these tests run: Debian's python3.11,
// else the first pyenv 3.7+ found.
func subprocInterp(t *testing.T) dumpInterp {
	t.Helper()
	return dumpInterpreters(t)[0]
}

// treeJSON runs pyattach dump --subprocesses --json and decodes its
// array.
func treeJSON(t *testing.T, env []string, pid int) []dump.TreeOutput {
	t.Helper()
	stdout, _ := pyattachOK(t, "pyattach dump --subprocesses --json", pyattachBin(t), env, "dump", "--subprocesses", "--json", strconv.Itoa(pid))
	var out []dump.TreeOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("pyattach dump --subprocesses --json: %v\n%s", err, stdout)
	}
	return out
}

// threadFrames is the app.py frames of the thread tid of o.
func threadFrames(o dump.TreeOutput, tid int) []dumpFrame {
	for _, th := range o.Threads {
		if th.TID == tid {
			return appFrames(th.Frames)
		}
	}
	return nil
}

// TestDumpSubprocessesPool: a Pool of two workers started with fork,
// spawn and forkserver (whose workers are the fork server's children,
// the parent's grandchildren): the parent and each worker under its own
// header, with their own frames, in tree order; in JSON one object per
// process with its parent and command line.
func TestDumpSubprocessesPool(t *testing.T) {
	in := subprocInterp(t)
	for _, method := range []string{"fork", "spawn", "forkserver"} {
		t.Run(method, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			app := filepath.Join(t.TempDir(), "app.py")
			if err := os.WriteFile(app, []byte(poolApp), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(in.exe, app, method)
			if line := testenv.Start(t, cmd); strings.TrimSpace(line) != "ready [0, 1]" {
				t.Fatalf("the app said %q", line)
			}
			parent := cmd.Process.Pid

			objs := treeJSON(t, env, parent)
			if len(objs) == 0 || objs[0].PID != parent || objs[0].PPID != os.Getpid() {
				t.Fatalf("the first object is not the parent %d (child of %d): %+v", parent, os.Getpid(), objs)
			}
			if got := threadFrames(objs[0], parent); len(got) == 0 || got[0].Function != "parent_waits" || got[0].Line == nil || *got[0].Line != poolParentLine {
				t.Errorf("parent's frames: %s", framesString(got))
			}
			if !strings.HasSuffix(strings.Join(objs[0].Cmdline, " "), "app.py "+method) {
				t.Errorf("parent's cmdline %q", objs[0].Cmdline)
			}
			// Every process below the parent, with its parent earlier in
			// the list (tree order); the two workers each in their own
			// function.
			seen := map[int]bool{parent: true}
			workers := map[string]int{}
			for _, o := range objs[1:] {
				if !seen[o.PPID] {
					t.Errorf("process %d comes before its parent %d, or its parent is not below %d", o.PID, o.PPID, parent)
				}
				seen[o.PID] = true
				if len(o.Cmdline) == 0 || o.Python.Version == "" {
					t.Errorf("process %d: cmdline %q, python %q", o.PID, o.Cmdline, o.Python.Version)
				}
				fs := threadFrames(o, o.PID)
				if len(fs) == 0 {
					continue // the resource tracker, the fork server
				}
				switch f := fs[0]; {
				case f.Function == "child_zero" && *f.Line == poolChildZeroLine, f.Function == "child_one" && *f.Line == poolChildOneLine:
					if _, dup := workers[f.Function]; dup {
						t.Errorf("two processes in %s", f.Function)
					}
					workers[f.Function] = o.PID
					if method == "forkserver" && o.PPID == parent {
						t.Errorf("worker %d is the parent's child; under forkserver it is the fork server's", o.PID)
					}
				case f.Function == "parent_waits":
					t.Errorf("process %d shows the parent's frames", o.PID)
				}
			}
			if len(workers) != 2 {
				t.Fatalf("workers found: %v; processes: %+v", workers, objs)
			}

			// The text: each process under its own header, the workers'
			// frames under theirs.
			out, stderr := pyattachOK(t, "pyattach dump --subprocesses", pyattachBin(t), env, "dump", "--subprocesses", strconv.Itoa(parent))
			head := regexp.MustCompile(fmt.Sprintf(`(?m)\AProcess %d: \S+ \S*app\.py %s\nPython [0-9.]+, \d+ threads\n\nThread %d "MainThread"[^\n]*:\nTraceback \(most recent call first\):\n  File ".*/app\.py", line %d, in parent_waits\n`, parent, method, parent, poolParentLine))
			if !head.MatchString(out) {
				t.Errorf("no header and frames of the parent first:\n%s", out)
			}
			for fn, pid := range workers {
				line := poolChildZeroLine
				if fn == "child_one" {
					line = poolChildOneLine
				}
				re := regexp.MustCompile(fmt.Sprintf(`(?m)^Process %d \(child of \d+\): [^\n]+\nPython [0-9.]+, \d+ threads\n\nThread %d "MainThread"[^\n]*:\nTraceback \(most recent call first\):\n  File ".*/app\.py", line %d, in %s\n`, pid, pid, line, fn))
				if !re.MatchString(out) {
					t.Errorf("no header of worker %d with %s's frame:\n%s", pid, fn, out)
				}
			}
			if n := strings.Count(out, "\nProcess "); n+1 != len(objs) {
				t.Errorf("%d headers in the text, %d objects in JSON:\n%s", n+1, len(objs), out)
			}
			if strings.Contains(stderr, "warning") || strings.Contains(stderr, "exited") {
				t.Errorf("stderr: %s", stderr)
			}
		})
	}
}

// TestDumpSubprocessesShell: a bash script's PID (bash is no Python):
// its python child is shown, the script itself is not, the exit code is
// 0.
func TestDumpSubprocessesShell(t *testing.T) {
	in := subprocInterp(t)
	bash := testenv.Need(t, "bash")
	env := scriptEnv(t.TempDir())
	dir := t.TempDir()
	app := filepath.Join(dir, "app.py")
	if err := os.WriteFile(app, []byte(dumpApp), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "run.sh")
	// A command after python keeps bash from exec'ing it.
	if err := os.WriteFile(script, []byte("#!"+bash+"\n"+in.exe+" "+app+"\nexit $?\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	testenv.Start(t, cmd)
	sh := cmd.Process.Pid

	objs := treeJSON(t, env, sh)
	if len(objs) != 1 || objs[0].PPID != sh || strings.Join(objs[0].Cmdline, " ") != in.exe+" "+app {
		t.Fatalf("want the one python below bash %d: %+v", sh, objs)
	}
	py := objs[0].PID
	if got := framesString(threadFrames(objs[0], py)); got != framesString(dumpMain) {
		t.Errorf("python's frames\n got %s\nwant %s", got, framesString(dumpMain))
	}
	out, _ := pyattachOK(t, "pyattach dump --subprocesses", pyattachBin(t), env, "dump", "--subprocesses", strconv.Itoa(sh))
	want := fmt.Sprintf("Process %d (child of %d): %s %s\nPython ", py, sh, in.exe, app)
	if !strings.HasPrefix(out, want) {
		t.Errorf("text does not start with %q:\n%s", want, out)
	}
	checkDumpText(t, "python below bash", out, py, false)
}

// exitApp has a child that has exited (a zombie: the parent waits for
// its exit with WNOWAIT and does not reap it) and a child that another
// tracer holds (it made its parent its tracer: PTRACE_TRACEME), so that
// it cannot be read; the parent prints "ready Z T traced" and sleeps in
// parent_waits.
const exitApp = `import ctypes, os, sys, time
def traced_child(w):
    ok = ctypes.CDLL(None, use_errno=True).ptrace(0, 0, None, None) == 0
    os.write(w, b"y" if ok else b"n")
    while True:
        time.sleep(1000)
def parent_waits():
    time.sleep(1000)
r, w = os.pipe()
z = os.fork()
if z == 0:
    os._exit(0)
os.waitid(os.P_PID, z, os.WEXITED | os.WNOWAIT)
t = os.fork()
if t == 0:
    traced_child(w)
traced = os.read(r, 1) == b"y"
print("ready", z, t, traced, flush=True)
parent_waits()
`

// TestDumpSubprocessesExited: a child that exited is said in one line,
// one that cannot be read is a warning; neither is an error while the
// target itself is read: exit code 0, and one object in JSON.
func TestDumpSubprocessesExited(t *testing.T) {
	in := subprocInterp(t)
	testenv.Need(t, "gdb") // auto falls back to gdb when ptrace is refused
	env := scriptEnv(t.TempDir())
	app := filepath.Join(t.TempDir(), "app.py")
	if err := os.WriteFile(app, []byte(exitApp), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(in.exe, app)
	var z, tr int
	var traced string
	line := testenv.Start(t, cmd)
	if _, err := fmt.Sscanf(line, "ready %d %d %s", &z, &tr, &traced); err != nil || traced != "True" {
		t.Fatalf("the app said %q (%v)", line, err)
	}
	parent := cmd.Process.Pid

	code, out, stderr := runPyattach(t, pyattachBin(t), env, "dump", "--subprocesses", strconv.Itoa(parent))
	if code != 0 {
		t.Errorf("exit code %d\n%s%s", code, out, stderr)
	}
	if !strings.HasPrefix(out, fmt.Sprintf("Process %d: ", parent)) || !strings.Contains(out, "in parent_waits\n") {
		t.Errorf("no dump of the parent:\n%s", out)
	}
	if strings.Contains(out, fmt.Sprintf("Process %d", z)) || strings.Contains(out, fmt.Sprintf("Process %d", tr)) {
		t.Errorf("a child that exited or cannot be read has a header:\n%s", out)
	}
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^pyattach: process %d exited before it was read$`, z)).MatchString(stderr) {
		t.Errorf("the zombie %d is not said to have exited:\n%s", z, stderr)
	}
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^pyattach: warning: process %d not read: dump %d: .* \(it is traced already, by %d \(python[^)]*\)\)$`, tr, tr, parent)).MatchString(stderr) {
		t.Errorf("no warning naming the tracer of child %d:\n%s", tr, stderr)
	}
	objs := treeJSON(t, env, parent)
	if len(objs) != 1 || objs[0].PID != parent {
		t.Errorf("JSON: want the parent alone: %+v", objs)
	}
}
