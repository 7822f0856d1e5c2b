package testenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A thread that waits in the C library sits in a system call whose
// number /proc/PID/task/TID/syscall gives. The call a libc function
// makes, and its number, differ per architecture: arm64 has no pause,
// select or epoll_wait, and glibc makes ppoll, pselect6 and epoll_pwait
// instead. sleepCalls maps a function's name to the calls it makes,
// per GOARCH; a call with noFDs set is ppoll with no descriptors (pause
// on arm64), told apart from a real ppoll by its arguments.
var sleepCalls = map[string]map[string][]sysCall{
	"amd64": {
		"pause":           {{nr: 34}},
		"clock_nanosleep": {{nr: 230}},
		"nanosleep":       {{nr: 35}, {nr: 230}},
		"select":          {{nr: 23}, {nr: 270}},
		"futex":           {{nr: 202}},
		"read":            {{nr: 0}},
		"epoll_wait":      {{nr: 232}, {nr: 281}},
		"wait4":           {{nr: 61}},
	},
	"arm64": {
		"pause":           {{nr: 73, noFDs: true}},
		"clock_nanosleep": {{nr: 115}},
		"nanosleep":       {{nr: 101}, {nr: 115}},
		"select":          {{nr: 72}},
		"futex":           {{nr: 98}},
		"read":            {{nr: 63}},
		"epoll_wait":      {{nr: 22}},
		"wait4":           {{nr: 260}},
	},
}

type sysCall struct {
	nr    int
	noFDs bool
}

// TimeSleep is where Python's time.sleep waits: clock_nanosleep from
// 3.11 on, select before.
var TimeSleep = []string{"clock_nanosleep", "select"}

// Threads chooses the threads of a process WaitSyscall waits for.
type Threads struct {
	any   bool
	tids  []int
	names []string
}

// AllThreads is every thread of the process.
func AllThreads() Threads { return Threads{} }

// AnyThread is one thread of the process, whichever gets there first.
func AnyThread() Threads { return Threads{any: true} }

// ThreadIDs is the threads with these kernel thread ids (the main
// thread's is the process's pid).
func ThreadIDs(tids ...int) Threads { return Threads{tids: tids} }

// ThreadsNamed is the threads whose names (/proc/PID/task/TID/comm)
// are among names.
func ThreadsNamed(names ...string) Threads { return Threads{names: names} }

func (w Threads) String() string {
	switch {
	case w.any:
		return "any thread"
	case w.tids != nil:
		return fmt.Sprintf("threads %v", w.tids)
	case w.names != nil:
		return fmt.Sprintf("threads named %q", w.names)
	}
	return "every thread"
}

// Context is the test's context (cancelled when it ends) with a
// deadline: ReadyTimeout from now, or the test binary's own deadline
// (-timeout) less a grace that lets the test fail with its own message,
// whichever comes first.
func Context(t testing.TB) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(ReadyTimeout)
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dt.Deadline(); ok && d.Add(-5*time.Second).Before(deadline) {
			deadline = d.Add(-5 * time.Second)
		}
	}
	return context.WithDeadline(t.Context(), deadline)
}

// WaitSyscall returns, with their ids, once the threads of process pid
// that which chooses all sit in one of the system calls the C library
// functions in funcs make on this machine's architecture ("pause",
// "clock_nanosleep", TimeSleep..., see sleepCalls). It fails the test,
// saying where each thread was, when Context's deadline comes first, or
// the process ends, or no thread is chosen.
func WaitSyscall(t testing.TB, pid int, which Threads, funcs ...string) []int {
	t.Helper()
	table, ok := sleepCalls[runtime.GOARCH]
	if !ok {
		Platform(t, "the system call numbers of "+runtime.GOARCH+" are not known")
	}
	var want []sysCall
	for _, f := range funcs {
		calls, ok := table[f]
		if !ok {
			t.Fatalf("WaitSyscall: no system call known for %s", f)
		}
		want = append(want, calls...)
	}
	ctx, cancel := Context(t)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		got, seen, err := inCalls(pid, which, want)
		if err == nil && got != nil {
			return got
		}
		if errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("waiting for %s of process %d to sit in %s: the process has ended", which, pid, strings.Join(funcs, " or "))
		}
		select {
		case <-tick.C:
			continue
		case <-ctx.Done():
		}
		if err == nil {
			err = ctx.Err()
		}
		t.Fatalf("waiting for %s of process %d to sit in %s: %v; they were in:\n%s", which, pid, strings.Join(funcs, " or "), err, seen)
		return nil
	}
}

// inCalls returns the chosen threads of pid when all of them sit in one
// of want (one of them, for AnyThread), nil when not, and in any case
// each thread's id, name and system call line.
func inCalls(pid int, which Threads, want []sysCall) (got []int, seen string, err error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	all, chosen := true, 0
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(dir, e.Name(), "comm"))
		name := strings.TrimSpace(string(comm))
		if which.tids != nil && !slices.Contains(which.tids, tid) ||
			which.names != nil && !slices.Contains(which.names, name) {
			continue
		}
		line, _ := os.ReadFile(filepath.Join(dir, e.Name(), "syscall"))
		fmt.Fprintf(&b, "  %d %q: %s\n", tid, name, strings.TrimSpace(string(line)))
		chosen++
		in := sitsIn(string(line), want)
		if in && which.any {
			return []int{tid}, b.String(), nil
		}
		if in {
			got = append(got, tid)
		}
		all = all && in
	}
	if chosen == 0 {
		return nil, b.String(), fmt.Errorf("no such thread")
	}
	if which.tids != nil && chosen < len(which.tids) {
		return nil, b.String(), fmt.Errorf("not every thread of %v exists", which.tids)
	}
	if !all || which.any {
		return nil, b.String(), nil
	}
	return got, b.String(), nil
}

// sitsIn reports whether line, the text of /proc/PID/task/TID/syscall
// ("NR ARG1 ... ARG6 SP PC" in a system call; "running"; "-1 SP PC"
// blocked elsewhere), is one of want.
func sitsIn(line string, want []sysCall) bool {
	f := strings.Fields(line)
	if len(f) < 3 {
		return false
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil {
		return false
	}
	for _, c := range want {
		if c.nr != nr {
			continue
		}
		// ppoll(NULL, 0, NULL, NULL): no descriptors, no timeout.
		if c.noFDs && (len(f) < 5 || f[1] != "0x0" || f[2] != "0x0" || f[3] != "0x0") {
			continue
		}
		return true
	}
	return false
}
