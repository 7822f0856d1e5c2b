package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/dump"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestNativeFramesInRoot: the C frames of sid's python3.14 (whose libc
// differs from this machine's) chrooted into the sid root and under
// pivot_root. pyattach lldb loads the root's libc, not this machine's,
// and its bt runs from libc's clock_nanosleep through time_sleep and
// the eval loop (with the Python frames it runs) down to Py_BytesMain
// and __libc_start_main; py-bt works. dump --native merges the Python
// and C frames and names every frame of the interpreter (the root's
// debug file), live and from a bundle of the process.
func TestNativeFramesInRoot(t *testing.T) {
	testenv.Need(t, "lldb")
	testenv.Need(t, "gdb")
	testenv.Need(t, "unshare")
	chroot := testenv.Need(t, "chroot")
	testenv.Need(t, "pivot_root")
	r := pivotRoots(t, " with python3.14", func(r pivotRoot) bool { return r.exe == "/usr/bin/python3.14" })[0]
	rootLibc, hostLibc := libcBuildIDs(t, r.root)
	if rootLibc == hostLibc {
		testenv.Missing(t, "the root's libc is this machine's (build-id %s): the test cannot tell them apart", rootLibc)
	}
	t.Run("chroot", func(t *testing.T) {
		pid := startChrooted(t, chroot, r.root, r.exe)
		if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/root"); err != nil || l != r.root {
			t.Fatalf("/proc/%d/root reads %q (%v), not %s", pid, l, err, r.root)
		}
		checkNativeInRoot(t, "chroot", pid, rootLibc)
	})
	t.Run("pivot_root", func(t *testing.T) {
		pid := startPivoted(t, r.root, t.TempDir(), r.exe)
		checkNativeInRoot(t, "pivot_root", pid, rootLibc)
	})
}

// libcBuildIDs are the build-ids of the root's libc.so.6 and this
// machine's.
func libcBuildIDs(t *testing.T, root string) (string, string) {
	t.Helper()
	var ids []string
	for _, dir := range []string{root, "/"} {
		found, _ := filepath.Glob(filepath.Join(dir, "usr/lib/*-linux-gnu*/libc.so.6"))
		if len(found) != 1 {
			t.Fatalf("libc.so.6 under %s: %q", dir, found)
		}
		id, err := elfinfo.ReadBuildIDFile(found[0])
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids[0], ids[1]
}

// startChrooted runs app.py (writeThreadedApp, at /mnt inside) with the
// root's interpreter exe as `unshare --mount chroot ROOT` does, and
// returns the interpreter's PID.
func startChrooted(t *testing.T, chroot, root, exe string) int {
	t.Helper()
	app := t.TempDir()
	writeThreadedApp(t, app)
	// unshare's mount namespace is private: the bind mount stays in it,
	// and the cached root is never written.
	script := `mount --bind "$2" "$1/mnt" && exec "$3" "$1" "$4" /mnt/app.py`
	cmd := exec.Command("unshare", "--mount", "--fork", "--kill-child", "sh", "-c", script, "sh", root, app, chroot, exe)
	cmd.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "PYTHONDONTWRITEBYTECODE=1"}
	line, stop, err := testenv.StartReady(cmd)
	if stop != nil {
		t.Cleanup(stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	if line != "ready\n" {
		t.Fatalf("app.py in the chroot did not start: stdout %q", line)
	}
	kids, err := childPIDs(cmd.Process.Pid)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of unshare (pid %d): %v %v", cmd.Process.Pid, kids, err)
	}
	return kids[0]
}

// lldbBtInRoot are the frames, in order, lldb's bt must show for the
// main thread of writeThreadedApp's app in the sid root: the root's libc
// named by its dynamic symbols, the interpreter by its debug file, the
// eval loop with its Python frames.
var lldbBtInRoot = []*regexp.Regexp{
	regexp.MustCompile("frame #\\d+: 0x[0-9a-f]+ libc\\.so\\.6`clock_nanosleep"),
	regexp.MustCompile("frame #\\d+: 0x[0-9a-f]+ python3\\.14`time_sleep\\S* at timemodule\\.c:\\d+"),
	regexp.MustCompile("frame #\\d+: 0x[0-9a-f]+ python3\\.14`_PyEval_EvalFrameDefault"),
	regexp.MustCompile(`\[Python\] inner \(\) at /mnt/app\.py:5`),
	regexp.MustCompile(`\[Python\] outer \(\) at /mnt/app\.py:9`),
	regexp.MustCompile("frame #\\d+: 0x[0-9a-f]+ python3\\.14`Py_BytesMain"),
	regexp.MustCompile("frame #\\d+: 0x[0-9a-f]+ libc\\.so\\.6`__libc_start_main"),
}

var modLine = regexp.MustCompile(`(?m)^MOD (\S+) ([0-9a-f]+)$`)

// checkNativeInRoot checks pyattach lldb's bt and py-bt and dump
// --native (live and of a bundle) on pid, sid's python3.14 running
// writeThreadedApp's app in a root whose libc has build-id libc.
func checkNativeInRoot(t *testing.T, what string, pid int, libc string) {
	t.Helper()
	ps := strconv.Itoa(pid)
	bin := pyattachBin(t)
	out := mustRunIn(t, what+": pyattach lldb", "", nil, bin, "lldb", "-b", "-p", ps,
		"-o", "thread select 1", "-o", "bt", "-o", "py-bt",
		"-o", `script [print("MOD %s %s" % (m.file.fullpath, m.GetUUIDString().replace("-", "").lower())) for m in lldb.target.modules]`)
	checkPyBt(t, what+": lldb py-bt", out)
	last := -1
	for _, re := range lldbBtInRoot {
		loc := re.FindStringIndex(out)
		if loc == nil || loc[0] < last {
			t.Errorf("%s: lldb's bt lacks %q (or has it out of order):\n%s", what, re, out)
			break
		}
		last = loc[0]
	}
	sawLibc := false
	for _, m := range modLine.FindAllStringSubmatch(out, -1) {
		if filepath.Base(m[1]) != "libc.so.6" {
			continue
		}
		sawLibc = true
		if m[2] != libc {
			t.Errorf("%s: lldb loaded %s with build-id %s, not the root's libc (%s)", what, m[1], m[2], libc)
		}
	}
	if !sawLibc {
		t.Errorf("%s: lldb loaded no libc.so.6:\n%s", what, out)
	}

	interp := interpreterRanges(t, pid)
	js, _ := pyattachOK(t, what+": dump --native --json", bin, nil, "dump", "--native", "--json", ps)
	checkMergedInRoot(t, what+": dump --native", js, interp)

	b := filepath.Join(t.TempDir(), "app.pyattach")
	pyattachOK(t, what+": bundle", bin, nil, "bundle", ps, "-o", b)
	js, _ = pyattachOK(t, what+": dump --native --json BUNDLE", bin, nil, "dump", "--native", "--json", b)
	checkMergedInRoot(t, what+": dump --native of its bundle", js, interp)
}

// interpreterRanges are the address ranges the process maps its
// interpreter (python3.14) at.
func interpreterRanges(t *testing.T, pid int) [][2]uint64 {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || filepath.Base(fields[5]) != "python3.14" {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("maps line %q", sc.Text())
		}
		out = append(out, [2]uint64{a, b})
	}
	if len(out) == 0 {
		t.Fatalf("process %d maps no python3.14", pid)
	}
	return out
}

// checkMergedInRoot checks dump --native --json's main thread: one
// merged stack, C frames named (the interpreter's every one, with its
// file and line but _start, written in assembly), Python frames in the eval loop's place.
func checkMergedInRoot(t *testing.T, what, js string, interp [][2]uint64) {
	t.Helper()
	var d dump.Output
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, js)
	}
	var main *dump.Thread
	for i := range d.Threads {
		for _, f := range d.Threads[i].Frames {
			if f.Function == "inner" {
				main = &d.Threads[i]
			}
		}
	}
	if main == nil {
		t.Fatalf("%s: no thread runs inner():\n%s", what, js)
	}
	if main.Stack == nil {
		t.Fatalf("%s: Python and native frames not merged: %s\n%s", what, main.StackUnmerged, js)
	}
	var seq []string
	for _, f := range *main.Stack {
		name := "??"
		if f.Function != nil {
			name = *f.Function
		}
		if f.Kind == "python" {
			seq = append(seq, "py:"+name)
			continue
		}
		seq = append(seq, name)
		for _, r := range interp {
			if f.PC != nil && *f.PC >= r[0] && *f.PC < r[1] && (f.Function == nil || f.File == nil && name != "_start") {
				t.Errorf("%s: the interpreter's frame at %#x is not named with its file (%s)", what, *f.PC, name)
			}
		}
		if strings.HasPrefix(name, "_PyEval_EvalFrameDefault") {
			t.Errorf("%s: an eval loop frame was left among the merged frames", what)
		}
	}
	got := strings.Join(seq, " ")
	want := regexp.MustCompile(`^(\S+ )*clock_nanosleep time_sleep\S* py:inner py:middle py:outer (\S+ )*Py_BytesMain (\S+ )*__libc_start_main`)
	if !want.MatchString(got) {
		t.Errorf("%s: merged stack %q does not match %q", what, got, want)
	}
}
