//go:build linux

package dump

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/ptrace"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/pyattach/pyattach/detect/unwind"
)

// TestNativeUnwinderNames walks a live python3.11's C stack with the
// unwinder over the target's own module files, names the frames with
// its nativesym table, and finds the frames gdb shows: the sleep, the
// eval loop, Py_BytesMain (main tail-calls it), _start.
func TestNativeUnwinderNames(t *testing.T) {
	testenv.Short(t, "runs python3.11")
	pid := testenv.StartPython(t, testenv.Debian(t).Exe, "")
	testenv.WaitSyscall(t, pid, testenv.AllThreads(), testenv.TimeSleep...)
	tg := &Target{PID: pid, procRoot: "/proc"}
	u := tg.nativeUnwinder(nil)
	tab := tg.nativeTable(nil)
	if u == nil || tab == nil {
		t.Fatal("no mappings")
	}
	defer u.Close()
	defer tab.Close()
	maps, err := proc.New("/proc").Maps(pid)
	if err != nil {
		t.Fatal(err)
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
	stacks, err := s.Capture(mem, maps, 0)
	s.Resume()
	if err != nil || len(stacks) != 1 || stacks[0].Err != nil {
		t.Fatalf("capture: %v %+v", err, stacks)
	}
	tr := u.Unwind(stacks[0].Regs, &stacks[0].Stack)
	if tr.End != unwind.EndOfStack {
		t.Errorf("walk ended with %v: %v", tr.End, tr.Err)
	}
	var pcs []uint64
	for _, f := range tr.Frames {
		pcs = append(pcs, f.LookupPC())
	}
	var names []string
	for _, f := range tab.LookupAll(pcs) {
		names = append(names, f.Function)
	}
	for _, want := range []string{"clock_nanosleep", evalLoop, "Py_BytesMain", "__libc_start_call_main", "_start"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s frame: %q", want, names)
		}
	}
}
