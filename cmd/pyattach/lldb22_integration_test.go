//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// sidRoot is the root of Debian's python3.14 (sid's, where make-roots.sh
// also installs lldb-22 and lldb-dap-22), or Missing.
func sidRoot(t *testing.T) testenv.Root {
	t.Helper()
	testenv.NeedRoot(t, "unshare, mount and chroot")
	for _, r := range testenv.Roots(t) {
		if r.Minor != "3.14" {
			continue
		}
		for _, f := range []string{"usr/bin/lldb-22", "usr/bin/lldb-dap-22", "usr/lib/python3/dist-packages/lldb/plugins/scripted_frame_provider.py"} {
			if _, err := os.Stat(filepath.Join(r.Dir, f)); err != nil {
				testenv.Missing(t, "root %s lacks lldb-22 (%v); install it with: sudo scripts/make-roots.sh", r.Dir, err)
			}
		}
		return r
	}
	testenv.Missing(t, "no root holds Debian's python3.14; make them with: sudo scripts/make-roots.sh")
	return testenv.Root{}
}

// startInRoot runs app (Python source) as /mnt/app.py with the root's
// exe, chrooted in a private mount namespace with /proc mounted and a
// new directory bound on the root's /mnt (the root itself is not
// written). It returns the interpreter's PID once it printed "ready",
// and the directory seen as /mnt: pyattach is copied there, and HOME is
// /mnt/home.
func startInRoot(t *testing.T, r testenv.Root, exe, app string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "home"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.CopyFile(t, pyattachBin(t), filepath.Join(dir, "pyattach"), 0o755)
	script := `mount -t proc proc "$1/proc" && mount --bind "$2" "$1/mnt" && cd "$1" && exec chroot . env -i PATH=/usr/bin:/bin HOME=/mnt/home LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "$3" /mnt/app.py`
	cmd := exec.Command("unshare", "--mount", "--fork", "--kill-child", "sh", "-c", script, "sh", r.Dir, dir, exe)
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("app.py in the root did not start: stdout %q", line)
	}
	kids, err := childPIDs(cmd.Process.Pid)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of unshare %d: %v %v", cmd.Process.Pid, kids, err)
	}
	return kids[0], dir
}

// pyattachLLDBInRoot runs /mnt/pyattach --offline lldb -b -p PID with
// the commands in pid's mount namespace and root (nsenter), where the
// root's lldb-22 is the one pyattach finds.
func pyattachLLDBInRoot(t *testing.T, pid int, cmds ...string) string {
	t.Helper()
	nsenter := testenv.Need(t, "nsenter")
	ps := strconv.Itoa(pid)
	args := []string{"-t", ps, "-m", "-r", "-w", "env", "-i", "PATH=/usr/bin:/bin", "HOME=/mnt/home", "LANG=C.UTF-8",
		"/mnt/pyattach", "--offline", "lldb", "-b", "-p", ps,
		// lldb 22.1 prints the stop report again from its event thread
		// once the frame provider is registered; a command listing the
		// same frames meanwhile can find them cut short
		// (pyattach_lldb_frames.PythonFrames' doc). A person types
		// after that report; this waits for it as a person would (no
		// time is measured).
		"-o", "platform shell sleep 1"}
	for _, c := range cmds {
		args = append(args, "-o", c)
	}
	out, err := exec.Command(nsenter, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("pyattach lldb in the root: %v\n%s", err, out)
	}
	return string(out)
}

// lldbSynthetic is a frame of lldb's bt that the frame provider made: a
// Python function at its file and line, a frame of its own.
var lldbSynthetic = regexp.MustCompile("^\\s*[* ] frame #(\\d+): 0x[0-9a-f]+ \\S+`(.+) at (\\S+):(\\d+) \\[synthetic\\]$")

// providerApp: a thread "worker" sleeps in a function whose name holds
// a line break and a terminal escape (line 5); the main thread sleeps in
// inner (line 14), called by key (17), sorted's key function: C frames
// (list_sort) between two runs of Python frames, outer (21) and
// <module> (23).
const providerApp = `import sys, threading, time

name = "evil\n    frame #9: fake\x1b[31m"
def hostile():
    time.sleep(3000)
hostile.__code__ = hostile.__code__.replace(co_name=name, co_qualname=name)
threading.Thread(target=hostile, name="worker", daemon=True).start()

def inner():
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while threading.active_count() < 2:
        pass
    time.sleep(3000)

def key(x):
    inner()
    return x

def outer():
    return sorted([2, 1], key=key)

outer()
`

// lldbThreadHeader starts a thread's frames in lldb's bt and stop
// reports.
var lldbThreadHeader = regexp.MustCompile(`^\*? *thread #\d+, name = '([^']*)'`)

// lldbBacktraces splits lldb's output into each thread's frame lines,
// by thread name: the longest run of frame lines under a header of that
// thread. lldb prints a stop report (one frame) from its own thread
// whenever a thread's frames change, also while a command prints (a
// Python print may come out later than the command after it), so the
// output is not split by command.
func lldbBacktraces(out string) map[string][]string {
	res := map[string][]string{}
	cur, run := "", []string(nil)
	for _, l := range strings.Split(out, "\n") {
		if m := lldbThreadHeader.FindStringSubmatch(l); m != nil {
			cur, run = m[1], nil
			continue
		}
		if cur != "" && lldbFrame.MatchString(l) {
			run = append(run, l)
			if len(run) > len(res[cur]) {
				res[cur] = run
			}
			continue
		}
		cur = ""
	}
	return res
}

// providerBt reads one thread's frames in lldb's bt (lines): each
// Python frame the provider made as "function:line", each run of C
// frames as "C"; the index of each Python frame by function. It fails
// the test where a Python frame is not app.py's, where Python frames in
// a run are not numbered one after the other, and where an eval loop
// frame or a frame-format line is left.
func providerBt(t *testing.T, what string, lines []string) ([]string, map[string]int) {
	t.Helper()
	var got []string
	at := map[string]int{}
	prev := -1
	for _, l := range lines {
		if m := lldbSynthetic.FindStringSubmatch(l); m != nil {
			i, _ := strconv.Atoi(m[1])
			if len(got) > 0 && got[len(got)-1] != "C" && i != prev+1 {
				t.Errorf("%s: Python frame #%d follows #%d", what, i, prev)
			}
			prev = i
			if filepath.Base(m[3]) != "app.py" {
				t.Errorf("%s: a Python frame of %s: %q", what, m[3], l)
			}
			at[m[2]] = i
			got = append(got, m[2]+":"+m[4])
			continue
		}
		if !lldbFrame.MatchString(l) {
			continue
		}
		if strings.Contains(l, "`_PyEval_EvalFrameDefault") || strings.Contains(l, "[Python]") {
			t.Errorf("%s: an eval loop frame or a frame-format line is left: %q", what, l)
		}
		if len(got) == 0 || got[len(got)-1] != "C" {
			got = append(got, "C")
		}
	}
	return got, at
}

// TestLLDB22FrameProvider: pyattach lldb with sid's lldb-22, inside the
// root, on sid's python3.14 (providerApp): lldb's own bt lists the
// Python functions at their file and line as frames of their own, in
// place of the eval loop frames, among the C frames (the frame provider
// pyattach registers once the target exists), the C frames of sorted
// between two runs of them; thread backtrace all shows the worker's
// function with its name escaped; frame select of a Python frame selects
// it and shows its source line, and the frame lldb's API gives there
// (what lldb-dap reads) has its function, file and line;
// pyattach-bt-filter off gives lldb's own frames back.
func TestLLDB22FrameProvider(t *testing.T) {
	r := sidRoot(t)
	pid, _ := startInRoot(t, r, r.Exe(), providerApp)
	testenv.WaitSyscall(t, pid, testenv.AllThreads(), testenv.TimeSleep...)

	out := pyattachLLDBInRoot(t, pid, "bt", "thread backtrace all")
	bts := lldbBacktraces(out)
	got, at := providerBt(t, "bt", bts["python3.14"])
	want := []string{"C", "inner:14", "key:17", "C", "outer:21", "<module>:23", "C"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("bt: frames are %v, want %v", got, want)
	}
	worker := strings.Join(bts["worker"], "\n")
	if !regexp.MustCompile("(?m)`evil\\\\n    frame #9: fake\\\\x1b\\[31m at app\\.py:5 \\[synthetic\\]$").MatchString(worker) ||
		strings.Contains(out, "\x1b[31m") || strings.Contains(out, "\n    frame #9: fake") {
		t.Errorf("thread backtrace all: want the worker's function as a frame, its name escaped, nothing raw:\n%s", worker)
	}
	key, ok := at["key"]
	if t.Failed() || !ok {
		t.Fatalf("output:\n%s", out)
	}

	n := strconv.Itoa(key)
	out = pyattachLLDBInRoot(t, pid, "frame select "+n,
		"script f = lldb.thread.GetSelectedFrame(); le = f.GetLineEntry(); print('selected %d %s %s:%d' % (f.GetFrameID(), f.GetFunctionName(), le.GetFileSpec().fullpath, le.GetLine()))",
		"pyattach-bt-filter off", "bt")
	if !regexp.MustCompile("(?m)^frame #"+n+": 0x[0-9a-f]+ \\S+`key at app\\.py:17 \\[synthetic\\]$").MatchString(out) ||
		!regexp.MustCompile(`(?m)^->\s+17\s+inner\(\)$`).MatchString(out) {
		t.Errorf("frame select %s: want key at app.py:17 and its source line marked", n)
	}
	if !strings.Contains(out, "\nselected "+n+" key /mnt/app.py:17\n") {
		t.Errorf("lldb's API in the selected frame: want frame %s, key, /mnt/app.py:17", n)
	}
	_, off, _ := strings.Cut(out, "(lldb) pyattach-bt-filter off\n")
	if strings.Contains(off, "[synthetic]") || !strings.Contains(off, "`_PyEval_EvalFrameDefault") || !strings.Contains(off, "Python frames in bt: off.") {
		t.Errorf("pyattach-bt-filter off: want lldb's own frames (_PyEval_EvalFrameDefault, no Python frame)")
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}
