//go:build linux

package ptrace_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/ptrace"
	"github.com/pyattach/pyattach/detect/nativesym"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/pyattach/pyattach/detect/unwind"
)

// threadsApp runs threads that wait in C calls under Python frames:
// three deep in recursion in time.sleep, one blocked on a lock, one in
// select, and the main thread in time.sleep.
const threadsApp = `import sys, threading, time, select
def rec(n):
    if n <= 1:
        time.sleep(100000)
    else:
        rec(n-1)
lock = threading.Lock()
lock.acquire()
def locked():
    lock.acquire()
def selecting():
    select.select([], [], [], 100000)
for d in (5, 20, 60):
    threading.Thread(target=rec, args=(d,), daemon=True).start()
threading.Thread(target=locked, daemon=True).start()
threading.Thread(target=selecting, daemon=True).start()
print("ready", flush=True)
rec(10)
`

// files opens the modules of a live process by their paths (the test's
// processes share its root).
type files struct{}

func (files) Open(r nativesym.Region) (nativesym.File, error) { return os.Open(r.Path) }

func (files) OpenDebug(nativesym.Region) (nativesym.File, error) { return nil, nil }

// captured stops pid, captures every thread's registers and stack,
// resumes it and walks each stack.
func captured(t *testing.T, pid int) (map[int]unwind.Trace, *unwind.Unwinder) {
	t.Helper()
	return capturedLimit(t, pid, 0)
}

// capturedLimit is captured with at most limit stack bytes per thread.
func capturedLimit(t *testing.T, pid, limit int) (map[int]unwind.Trace, *unwind.Unwinder) {
	t.Helper()
	pr := proc.New("/proc")
	maps, err := pr.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	var regions []nativesym.Region
	for _, m := range maps {
		if m.File() {
			regions = append(regions, nativesym.Region{Start: m.Start, End: m.End, Offset: m.Offset, Path: m.Path})
		}
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	ctx, cancel := testenv.Context(t)
	defer cancel()
	s, err := ptrace.Stop(ctx, "/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	stacks, err := s.Capture(mem, maps, limit)
	s.Resume()
	if err != nil {
		t.Fatal(err)
	}
	u := unwind.New(regions, files{})
	t.Cleanup(func() { u.Close() })
	start, end, image, err := ptrace.ReadVDSO(mem, maps)
	if err != nil || end == 0 {
		t.Fatalf("vdso: %v", err)
	}
	u.AddVDSO(start, end, image)
	out := map[int]unwind.Trace{}
	for _, st := range stacks {
		if st.Err != nil {
			t.Fatalf("thread %d: %v", st.Tid, st.Err)
		}
		stack := st.Stack
		out[st.Tid] = u.Unwind(st.Regs, &stack)
	}
	return out, u
}

// gdbFrameInfo holds a frame's pc and function name as gdb found them.
type gdbFrameInfo struct {
	pc   uint64
	name string
}

// gdbWalk prints each thread's real frames (not the inlined functions
// gdb shows as frames of their own, at the same pc) as "T tid" and
// "F pc name" lines.
const gdbWalk = `python
for th in gdb.selected_inferior().threads():
    th.switch()
    print("T %d" % th.ptid[1])
    f = gdb.newest_frame()
    while f is not None:
        if f.type() != gdb.INLINE_FRAME:
            print("F %d %s" % (f.pc(), f.name() or "??"))
        f = f.older()
end
`

// gdbStacks runs gdb's backtrace of every thread of pid: per thread,
// the frames' pcs and names. gdb reads .eh_frame (and the modules' own
// DWARF) but finds no separate debug file; -readnever is not used, as
// it drops .eh_frame too.
func gdbStacks(t *testing.T, pid int) map[int][]gdbFrameInfo {
	t.Helper()
	gdb := testenv.Need(t, "gdb")
	script := filepath.Join(t.TempDir(), "walk.gdb")
	if err := os.WriteFile(script, []byte(gdbWalk), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gdb, "-nx", "-p", strconv.Itoa(pid), "-batch",
		"-iex", "set debug-file-directory "+t.TempDir(), "-iex", "set debuginfod enabled off",
		"-x", script).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	stacks := map[int][]gdbFrameInfo{}
	tid := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "T":
			tid, _ = strconv.Atoi(f[1])
		case len(f) == 3 && f[0] == "F" && tid != 0:
			pc, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatalf("gdb: %q: %v", line, err)
			}
			stacks[tid] = append(stacks[tid], gdbFrameInfo{pc: pc, name: f[2]})
		}
	}
	if len(stacks) == 0 {
		t.Fatalf("no stack in gdb's output:\n%s", out)
	}
	return stacks
}

// matchGdb checks that every thread's frames are gdb's, return address
// by return address, to gdb's last frame, each found through call
// frame information, and that each walk reached the stack's end. It
// returns gdb's frame names per thread.
func matchGdb(t *testing.T, pid, threads int, ours map[int]unwind.Trace, theirs map[int][]gdbFrameInfo) map[int][]string {
	t.Helper()
	return matchGdbVia(t, pid, threads, ours, theirs, false)
}

// matchGdbVia is matchGdb, accepting frames found by the frame pointer
// when fp is set.
func matchGdbVia(t *testing.T, pid, threads int, ours map[int]unwind.Trace, theirs map[int][]gdbFrameInfo, fp bool) map[int][]string {
	t.Helper()
	if len(ours) != threads || len(theirs) != threads {
		t.Fatalf("%d threads walked, %d by gdb, want %d", len(ours), len(theirs), threads)
	}
	all := map[int][]string{}
	for tid, g := range theirs {
		tr, ok := ours[tid]
		if !ok {
			t.Errorf("thread %d: gdb walked it, we did not", tid)
			continue
		}
		if tr.End != unwind.EndOfStack {
			t.Errorf("thread %d: walk ended with %v (%v), want the end of the stack", tid, tr.End, tr.Err)
		}
		var names []string
		for _, f := range g {
			names = append(names, f.name)
		}
		all[tid] = names
		// gdb stops at main (backtrace past-main is off) unless it
		// cannot name it, and otherwise where the return address is
		// undefined, as the walk does: clone3 for a thread (?? when
		// named from libc's dynamic symbols).
		switch {
		case tid == pid && names[len(names)-1] != "main" && names[len(names)-1] != "_start":
			t.Errorf("main thread: gdb's stack ends in %s, not main: %v", names[len(names)-1], names)
		case tid == pid && len(tr.Frames) < len(g):
			t.Errorf("main thread: %d frames, gdb %d: %v", len(tr.Frames), len(g), names)
		case tid != pid && len(tr.Frames) != len(g):
			t.Errorf("thread %d: %d frames, gdb %d: %v", tid, len(tr.Frames), len(g), names)
		}
		for i := range min(len(g), len(tr.Frames)) {
			if tr.Frames[i].PC != g[i].pc {
				t.Errorf("thread %d frame %d (%s): pc %#x, gdb %#x", tid, i, g[i].name, tr.Frames[i].PC, g[i].pc)
				break
			}
			if tr.Frames[i].Via == unwind.ViaFramePointer && !fp {
				t.Errorf("thread %d frame %d (%s): found by frame pointer, want call frame information", tid, i, g[i].name)
			}
		}
	}
	return all
}

// compareWithGdb checks pid's stacks against gdb's (matchGdb), every
// thread's through the eval loop.
func compareWithGdb(t *testing.T, pid int, threads int) {
	t.Helper()
	ours, _ := captured(t, pid)
	for tid, names := range matchGdb(t, pid, threads, ours, gdbStacks(t, pid)) {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "_PyEval_EvalFrameDefault") }) {
			t.Errorf("thread %d: gdb's stack has no eval loop: %v", tid, names)
		}
	}
}

// signalApp recurses through functions compiled without frame pointers
// (some with variable-length arrays, which keep one), raises SIGUSR1 at
// the bottom and waits in the handler.
const signalApp = `#include <signal.h>
#include <unistd.h>
static void handler(int sig) {
	(void)sig;
	write(1, "ready\n", 6);
	for (;;)
		pause();
}
int deep_b(int n);
__attribute__((noinline)) int deep_a(int n) {
	volatile int pad[n % 7 + 1];
	pad[0] = n;
	if (n == 0)
		return raise(SIGUSR1);
	return deep_b(n - 1) + pad[0];
}
__attribute__((noinline)) int deep_b(int n) {
	volatile int x = n;
	return deep_a(n) + x;
}
int main(int argc, char **argv) {
	(void)argv;
	signal(SIGUSR1, handler);
	return deep_a(argc + 20);
}
`

// TestUnwindSignalFrame walks a C program (gcc -O2
// -fomit-frame-pointer) through its signal handler's frame and the
// frames the signal interrupted, as gdb does.
func TestUnwindSignalFrame(t *testing.T) {
	testenv.Short(t, "compiles a program and runs gdb")
	dir := t.TempDir()
	exe := testenv.CC(t, dir, "sig", signalApp, "-O2", "-fomit-frame-pointer", "-g0")
	cmd := exec.Command(exe)
	testenv.Start(t, cmd)
	pid := cmd.Process.Pid
	testenv.WaitSyscall(t, pid, testenv.AllThreads(), "pause")
	ours, _ := captured(t, pid)
	names := matchGdb(t, pid, 1, ours, gdbStacks(t, pid))[pid]
	tr := ours[pid]
	var sig, deep int
	for i, f := range tr.Frames {
		if f.Signal {
			sig++
			if i+1 >= len(tr.Frames) || !tr.Frames[i+1].Exact {
				t.Errorf("frame %d after the signal frame is not exact", i+1)
			}
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "deep_") {
			deep++
		}
	}
	if sig != 1 || deep < 40 {
		t.Errorf("%d signal frames, %d deep_ frames (gdb: %v)", sig, deep, names)
	}

	// A capture cut at 1 KiB: the walk ends there, saying so, its
	// frames the first of the whole walk's.
	cut, _ := capturedLimit(t, pid, 1024)
	short := cut[pid]
	if short.End != unwind.EndTruncated || len(short.Frames) == 0 || len(short.Frames) >= len(tr.Frames) {
		t.Fatalf("1 KiB capture: %v (%v), %d frames of %d", short.End, short.Err, len(short.Frames), len(tr.Frames))
	}
	for i, f := range short.Frames {
		want := tr.Frames[i]
		if i == len(short.Frames)-1 {
			want.CFA, want.Signal = 0, false // its caller was not found
		}
		if f != want {
			t.Errorf("1 KiB capture, frame %d: %+v, want %+v", i, f, want)
		}
	}
}

func startThreads(t *testing.T, exe string) int {
	pid := testenv.StartPython(t, exe, threadsApp)
	testenv.WaitSyscall(t, pid, testenv.AllThreads(), append([]string{"futex"}, testenv.TimeSleep...)...)
	return pid
}

func TestUnwindMatchesGdbDebian(t *testing.T) {
	testenv.Short(t, "runs python3.11 and gdb")
	py := testenv.Debian(t)
	compareWithGdb(t, startThreads(t, py.Exe), 6)
}

func TestUnwindMatchesGdbPyenv(t *testing.T) {
	testenv.Short(t, "runs a pyenv python and gdb")
	py := testenv.Pyenv(t, "3.11+")
	compareWithGdb(t, startThreads(t, py.Exe), 6)
}

// shapeApp is scripts' bench shape: argv[1] threads, each argv[2]
// Python frames deep, sleeping.
const shapeApp = `import sys, threading, time
nthreads, depth = int(sys.argv[1]), int(sys.argv[2])
def rec(n):
    if n <= 1:
        time.sleep(100000)
    else:
        rec(n-1)
for i in range(nthreads-1):
    threading.Thread(target=rec, args=(depth,), daemon=True).start()
print("ready", flush=True)
sys.setrecursionlimit(depth+100)
rec(depth)
`

// BenchmarkCaptureUnwind measures, on Debian's python3.11 with 50
// threads 30 Python frames deep: the stop (stop, capture registers and
// stacks, resume) and the walk of every thread afterwards, with the
// module tables cached (warm) and read anew (cold).
func BenchmarkCaptureUnwind(b *testing.B) {
	py := testenv.Debian(b)
	app := filepath.Join(b.TempDir(), "shape.py")
	if err := os.WriteFile(app, []byte(shapeApp), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(py.Exe, app, "50", "30")
	testenv.Start(b, cmd)
	pid := cmd.Process.Pid
	testenv.WaitSyscall(b, pid, testenv.AllThreads(), testenv.TimeSleep...)
	pr := proc.New("/proc")
	maps, err := pr.Maps(pid)
	if err != nil {
		b.Fatal(err)
	}
	var regions []nativesym.Region
	for _, m := range maps {
		if m.File() {
			regions = append(regions, nativesym.Region{Start: m.Start, End: m.End, Offset: m.Offset, Path: m.Path})
		}
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	capture := func() []ptrace.ThreadStack {
		s, err := ptrace.Stop(context.Background(), "/proc", pid)
		if err != nil {
			b.Fatal(err)
		}
		st, err := s.Capture(mem, maps, 0)
		s.Resume()
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	walk := func(u *unwind.Unwinder, stacks []ptrace.ThreadStack) int {
		n := 0
		for _, st := range stacks {
			tr := u.Unwind(st.Regs, &st.Stack)
			if tr.End != unwind.EndOfStack {
				b.Fatalf("thread %d: %v %v", st.Tid, tr.End, tr.Err)
			}
			n += len(tr.Frames)
		}
		return n
	}
	stacks := capture()
	b.Run("stop-capture-resume", func(b *testing.B) {
		for b.Loop() {
			capture()
		}
	})
	b.Run("capture-only", func(b *testing.B) {
		s, err := ptrace.Stop(context.Background(), "/proc", pid)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Resume()
		n := 0
		for b.Loop() {
			st, err := s.Capture(mem, maps, 0)
			if err != nil {
				b.Fatal(err)
			}
			n = 0
			for _, t := range st {
				n += len(t.Stack.Data)
			}
		}
		b.ReportMetric(float64(n), "bytes")
	})
	b.Run("unwind-warm", func(b *testing.B) {
		u := unwind.New(regions, files{})
		defer u.Close()
		walk(u, stacks)
		n := 0
		for b.Loop() {
			n = walk(u, stacks)
		}
		b.ReportMetric(float64(n), "frames")
	})
	b.Run("unwind-cold", func(b *testing.B) {
		for b.Loop() {
			u := unwind.New(regions, files{})
			walk(u, stacks)
			u.Close()
		}
	})
}

// noCFIApp is compiled without unwind tables but with frame pointers:
// its frames are found through rbp only.
const noCFIApp = `#include <unistd.h>
#include <stdio.h>
int deep_b(int n);
__attribute__((noinline)) int deep_a(int n) {
	if (n == 0) {
		puts("ready");
		fflush(stdout);
		for (;;)
			pause();
	}
	return deep_b(n - 1) + 1;
}
__attribute__((noinline)) int deep_b(int n) {
	volatile int x = n;
	return deep_a(n) + x;
}
int main(int argc, char **argv) {
	(void)argv;
	return deep_a(argc + 10);
}
`

// TestUnwindFramePointer walks a program without call frame
// information through its frame pointers, to the same frames as gdb.
func TestUnwindFramePointer(t *testing.T) {
	testenv.Short(t, "compiles a program and runs gdb")
	exe := testenv.CC(t, t.TempDir(), "nocfi", noCFIApp, "-O1", "-fno-omit-frame-pointer",
		"-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-g0")
	cmd := exec.Command(exe)
	testenv.Start(t, cmd)
	pid := cmd.Process.Pid
	testenv.WaitSyscall(t, pid, testenv.AllThreads(), "pause")
	ours, _ := captured(t, pid)
	names := matchGdbVia(t, pid, 1, ours, gdbStacks(t, pid), true)[pid]
	fp, deep := 0, 0
	for _, f := range ours[pid].Frames {
		if f.Via == unwind.ViaFramePointer {
			fp++
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "deep_") {
			deep++
		}
	}
	if deep < 20 || fp < deep {
		t.Errorf("%d frames by frame pointer, %d deep_ frames (gdb: %v)", fp, deep, names)
	}
}
