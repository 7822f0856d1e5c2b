package testenv

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// The /proc/PID/task/TID/syscall lines of a thread in each call, on each
// architecture: pause on arm64 is ppoll with no descriptors, which a
// ppoll waiting on some is not.
func TestSitsIn(t *testing.T) {
	calls := func(arch string, funcs ...string) []sysCall {
		var out []sysCall
		for _, f := range funcs {
			out = append(out, sleepCalls[arch][f]...)
		}
		return out
	}
	for _, c := range []struct {
		arch, line string
		funcs      []string
		want       bool
	}{
		{"amd64", "34 0x0 0x0 0x0 0x0 0x0 0x0 0x7ffd3c0 0x7f12", []string{"pause"}, true},
		{"amd64", "230 0x0 0x0 0x7ffd3c0 0x0 0x0 0x0 0x7ffd3c0 0x7f12", []string{"pause"}, false},
		{"amd64", "230 0x0 0x0 0x7ffd3c0 0x0 0x0 0x0 0x7ffd3c0 0x7f12", TimeSleep, true},
		{"amd64", "23 0x0 0x0 0x0 0x0 0x7ffd3c0 0x0 0x7ffd3c0 0x7f12", TimeSleep, true},
		{"amd64", "running", TimeSleep, false},
		{"amd64", "-1 0x7ffd3c0 0x7f12", []string{"pause"}, false},
		{"arm64", "73 0x0 0x0 0x0 0x0 0x0 0x0 0xffffc0 0xffff12", []string{"pause"}, true},
		{"arm64", "73 0xaaaa10 0x1 0x0 0x0 0x0 0x0 0xffffc0 0xffff12", []string{"pause"}, false},
		{"arm64", "34 0x0 0x0 0x0 0x0 0x0 0x0 0xffffc0 0xffff12", []string{"pause"}, false},
		{"arm64", "115 0x0 0x0 0xffffc0 0x0 0x0 0x0 0xffffc0 0xffff12", TimeSleep, true},
		{"arm64", "72 0x0 0x0 0x0 0x0 0xffffc0 0x0 0xffffc0 0xffff12", TimeSleep, true},
		{"arm64", "98 0xaaaa10 0x80 0x0 0x0 0x0 0x0 0xffffc0 0xffff12", []string{"futex"}, true},
	} {
		if got := sitsIn(c.line, calls(c.arch, c.funcs...)); got != c.want {
			t.Errorf("%s: %q in %v = %v, want %v", c.arch, c.line, c.funcs, got, c.want)
		}
	}
	for arch, table := range sleepCalls {
		for _, f := range append([]string{"pause"}, TimeSleep...) {
			if len(table[f]) == 0 {
				t.Errorf("%s: no system call for %s", arch, f)
			}
		}
	}
}

// sleep(1) waits in nanosleep, which glibc makes clock_nanosleep.
func TestWaitSyscallLive(t *testing.T) {
	if runtime.GOOS != "linux" {
		Platform(t, "reads /proc/PID/task")
	}
	cmd := exec.Command(Need(t, "sleep"), "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	if got := WaitSyscall(t, pid, AllThreads(), "nanosleep"); len(got) != 1 || got[0] != pid {
		t.Errorf("WaitSyscall(all) = %v, want [%d]", got, pid)
	}
	if got := WaitSyscall(t, pid, ThreadIDs(pid), "nanosleep"); len(got) != 1 || got[0] != pid {
		t.Errorf("WaitSyscall(%d) = %v", pid, got)
	}
	if got := WaitSyscall(t, pid, ThreadsNamed("sleep"), "nanosleep"); len(got) != 1 {
		t.Errorf("WaitSyscall(named sleep) = %v", got)
	}
	line, _, err := inCalls(pid, AnyThread(), sleepCalls[runtime.GOARCH]["pause"])
	if err != nil || line != nil {
		t.Errorf("sleep(1) is in pause: %v %v", line, err)
	}
	_, seen, _ := inCalls(pid, AllThreads(), nil)
	if !strings.Contains(seen, `"sleep"`) {
		t.Errorf("what was seen names no thread: %q", seen)
	}
}
