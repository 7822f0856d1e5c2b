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
		"/mnt/pyattach", "--offline", "lldb", "-b", "-p", ps}
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
var lldbSynthetic = regexp.MustCompile("^\\s*[* ] frame #(\\d+): 0x[0-9a-f]+ \\S+`(\\S+) at (\\S+):(\\d+) \\[synthetic\\]$")

// checkProviderBt: lines (lldb 22's bt) hold WaitingApp's Python frames
// as frames of their own, in order (inner at line 5, middle 7, outer 9,
// <module> 10) and numbered one after the other, after C frames (the
// sleep) and before C frames (the interpreter's start); no eval loop
// frame is left and no frame-format line. Returns middle's frame index.
func checkProviderBt(t *testing.T, what string, lines []string) int {
	t.Helper()
	want := []string{"inner:5", "middle:7", "outer:9", "<module>:10"}
	var got []string
	middle, prev, cBefore, cAfter := -1, -1, 0, 0
	for _, l := range lines {
		if m := lldbSynthetic.FindStringSubmatch(l); m != nil {
			i, _ := strconv.Atoi(m[1])
			if prev >= 0 && i != prev+1 {
				t.Errorf("%s: Python frame #%d follows #%d", what, i, prev)
			}
			prev = i
			if m[3] != "app.py" {
				t.Errorf("%s: a Python frame of %s: %q", what, m[3], l)
			}
			if m[2] == "middle" {
				middle = i
			}
			got = append(got, m[2]+":"+m[4])
			continue
		}
		if !lldbFrame.MatchString(l) {
			continue
		}
		if strings.Contains(l, "`_PyEval_EvalFrameDefault") || strings.Contains(l, "[Python]") {
			t.Errorf("%s: an eval loop frame or a frame-format line is left: %q", what, l)
		}
		if len(got) == 0 {
			cBefore++
		} else {
			cAfter++
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: Python frames are %v, want %v", what, got, want)
	}
	if cBefore == 0 || cAfter == 0 {
		t.Errorf("%s: %d C frames before the Python frames and %d after, want some on each side", what, cBefore, cAfter)
	}
	return middle
}

// TestLLDB22FrameProvider: pyattach lldb with sid's lldb-22, inside the
// root, on sid's python3.14: lldb's own bt lists WaitingApp's Python
// functions at their file and line as frames of their own, in place of
// the eval loop frame, among the C frames (the frame provider pyattach
// registers once the target exists); frame select of a Python frame
// selects it and shows its source line, and the frame lldb's API gives
// there (what lldb-dap reads) has its function, file and line;
// pyattach-bt-filter off gives lldb's own frames back.
func TestLLDB22FrameProvider(t *testing.T) {
	r := sidRoot(t)
	pid, _ := startInRoot(t, r, r.Exe(), testenv.WaitingApp)
	testenv.WaitSyscall(t, pid, testenv.ThreadIDs(pid), testenv.TimeSleep...)

	out := pyattachLLDBInRoot(t, pid, "script print('@@bt')", "bt", "script print('@@end')")
	middle := checkProviderBt(t, "bt", sections(out)["bt"])
	if t.Failed() || middle < 0 {
		t.Fatalf("output:\n%s", out)
	}

	n := strconv.Itoa(middle)
	out = pyattachLLDBInRoot(t, pid,
		"script print('@@select')", "frame select "+n,
		"script print('@@api')", "script f = lldb.thread.GetSelectedFrame(); le = f.GetLineEntry(); print('selected %d %s %s:%d' % (f.GetFrameID(), f.GetFunctionName(), le.GetFileSpec().fullpath, le.GetLine()))",
		"script print('@@off')", "pyattach-bt-filter off", "bt",
		"script print('@@end')")
	s := sections(out)
	sel := strings.Join(s["select"], "\n")
	if !regexp.MustCompile("(?m)^frame #"+n+": 0x[0-9a-f]+ \\S+`middle at app\\.py:7 \\[synthetic\\]$").MatchString(sel) ||
		!regexp.MustCompile(`(?m)^->\s+7\s+inner\(\)$`).MatchString(sel) {
		t.Errorf("frame select %s: want middle at app.py:7 and its source line marked:\n%s", n, sel)
	}
	if api := strings.Join(s["api"], "\n"); !strings.Contains(api, "selected "+n+" middle /mnt/app.py:7") {
		t.Errorf("lldb's API in the selected frame: want frame %s, middle, /mnt/app.py:7:\n%s", n, api)
	}
	off := strings.Join(s["off"], "\n")
	if lldbSynthetic.MatchString(off) || !strings.Contains(off, "`_PyEval_EvalFrameDefault") || !strings.Contains(off, "Python frames in bt: off.") {
		t.Errorf("pyattach-bt-filter off: want lldb's own frames (_PyEval_EvalFrameDefault, no Python frame):\n%s", off)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}
