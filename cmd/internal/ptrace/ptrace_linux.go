package ptrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/unwind"
)

// maxStopRounds bounds how often /proc/PID/task is listed again while
// threads appear: each round stops every thread listed, and a stopped
// thread creates none, so a real process needs two.
const maxStopRounds = 64

// Stopped is a process every thread of which pyattach holds stopped
// (PTRACE_SEIZE, PTRACE_INTERRUPT). Every ptrace call runs on one locked
// OS thread (the kernel knows the tracer as that thread).
type Stopped struct {
	pid  int
	reqs chan func()
	// tids are the threads held, sigs the signals some of them stopped
	// with, delivered again when they are let go.
	tids []int
	sigs map[int]int
	gone bool
}

// Stop stops every thread of pid, listing procRoot/PID/task again until
// no new thread appears, within ctx. The threads stay stopped until
// Resume; on error, none is.
func Stop(ctx context.Context, procRoot string, pid int) (*Stopped, error) {
	s := &Stopped{pid: pid, reqs: make(chan func()), sigs: map[int]int{}}
	go func() {
		runtime.LockOSThread()
		// The thread stays locked: it ends with this goroutine rather than
		// go back to the scheduler as a tracer.
		for f := range s.reqs {
			f()
		}
	}()
	var err error
	s.do(func() { err = s.stopAll(ctx, procRoot) })
	if err != nil {
		s.Resume()
		return nil, err
	}
	return s, nil
}

// do runs f on the tracer thread.
func (s *Stopped) do(f func()) {
	done := make(chan struct{})
	s.reqs <- func() { f(); close(done) }
	<-done
}

func (s *Stopped) stopAll(ctx context.Context, procRoot string) error {
	seen := map[int]bool{}
	for round := 0; ; round++ {
		tids, err := listTasks(procRoot, s.pid)
		if err != nil {
			return err
		}
		var fresh []int
		for _, t := range tids {
			if !seen[t] {
				seen[t] = true
				fresh = append(fresh, t)
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		if round == maxStopRounds {
			return fmt.Errorf("process %d: threads keep appearing while it is stopped (%d listings)", s.pid, maxStopRounds)
		}
		for _, t := range fresh {
			// An exited leader (one that called pthread_exit) stays a
			// zombie and never stops; other threads are gone once they exit.
			if t == s.pid && zombie(procRoot, s.pid, t) {
				continue
			}
			if err := unix.PtraceSeize(t); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // the thread ended
				}
				return &Error{PID: s.pid, Err: err}
			}
			s.tids = append(s.tids, t)
			if err := unix.PtraceInterrupt(t); err != nil && !errors.Is(err, unix.ESRCH) {
				return &Error{PID: s.pid, Err: err}
			}
		}
		if err := s.waitStops(ctx, fresh); err != nil {
			return err
		}
	}
}

// waitStops waits for the stop of every thread of tids that was seized,
// polling them all in turn (a thread that has stopped is not waited
// behind one that has not) and sleeping only when none had.
func (s *Stopped) waitStops(ctx context.Context, tids []int) error {
	held := map[int]bool{}
	for _, t := range s.tids {
		held[t] = true
	}
	var pending []int
	for _, t := range tids {
		if held[t] {
			pending = append(pending, t)
		}
	}
	delay := 20 * time.Microsecond
	deadline := time.Now().Add(StopWait)
	for len(pending) > 0 {
		left := pending[:0]
		for _, t := range pending {
			done, err := s.reap(t)
			if err != nil {
				return err
			}
			if !done {
				left = append(left, t)
			}
		}
		if len(left) < len(pending) {
			delay = 20 * time.Microsecond
		}
		pending = left
		if len(pending) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d: thread %d did not stop within %v", s.pid, pending[0], StopWait)
		}
		time.Sleep(delay)
		if delay < time.Millisecond {
			delay *= 2
		}
	}
	return nil
}

// reap collects thread t's stop if it has come (WNOHANG): done is true
// once it has stopped, or ended (then dropped). A signal it stopped with
// (rather than the interrupt) is kept for resume.
func (s *Stopped) reap(t int) (done bool, err error) {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(t, &ws, unix.WALL|unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			s.drop(t)
			return true, nil
		case err != nil:
			return false, fmt.Errorf("process %d: waiting for thread %d: %w", s.pid, t, err)
		}
		if got != t {
			return false, nil
		}
		if ws.Exited() || ws.Signaled() {
			s.drop(t)
			return true, nil
		}
		if ws.Stopped() {
			// A PTRACE_EVENT_STOP is the interrupt (or a group stop, which
			// detaching leaves as it was); any other stop is the delivery
			// of a signal, passed on when the thread is let go.
			if int(ws>>16)&0xff != unix.PTRACE_EVENT_STOP {
				s.sigs[t] = int(ws.StopSignal())
			}
			return true, nil
		}
		return false, nil
	}
}

func (s *Stopped) drop(t int) {
	for i, x := range s.tids {
		if x == t {
			s.tids = append(s.tids[:i], s.tids[i+1:]...)
			break
		}
	}
}

// PID is the process held.
func (s *Stopped) PID() int { return s.pid }

// Threads is how many threads are held.
func (s *Stopped) Threads() int { return len(s.tids) }

// Resume lets every thread go (once; later calls do nothing), each with
// the signal it stopped with, and ends the tracer thread.
func (s *Stopped) Resume() {
	if s.gone {
		return
	}
	s.gone = true
	s.do(func() {
		for _, t := range s.tids {
			unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(t), 0, uintptr(s.sigs[t]), 0, 0)
		}
		s.tids = nil
	})
	close(s.reqs)
}

// zombie reports whether thread t of pid has exited (state Z or X in
// its stat file).
func zombie(procRoot string, pid, t int) bool {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "task", strconv.Itoa(t), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}

// listTasks returns the thread ids in procRoot/PID/task.
func listTasks(procRoot string, pid int) ([]int, error) {
	ents, err := os.ReadDir(filepath.Join(procRoot, strconv.Itoa(pid), "task"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("process %d: %w", pid, syscall.ESRCH)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	var out []int
	for _, e := range ents {
		if t, err := strconv.Atoi(e.Name()); err == nil && t > 0 {
			out = append(out, t)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Tids are the threads held, the process's main thread (its PID) first
// when it is held, the others in the order they were stopped.
func (s *Stopped) Tids() []int {
	out := make([]int, 0, len(s.tids))
	for _, t := range s.tids {
		if t == s.pid {
			out = append(out, t)
		}
	}
	for _, t := range s.tids {
		if t != s.pid {
			out = append(out, t)
		}
	}
	return out
}

// Signal is the signal thread t stopped with instead of the interrupt
// (passed on when it is let go), or 0.
func (s *Stopped) Signal(t int) int { return s.sigs[t] }

// Do runs f on the tracer thread, where every ptrace request on the held
// threads must be made (GetRegSet, GetSigInfo). It must not be called
// after Resume.
func (s *Stopped) Do(f func()) { s.do(f) }

// GetRegSet reads register set typ (NT_PRSTATUS, NT_PRFPREG, ...) of the
// held thread t into buf (PTRACE_GETREGSET) and returns the part the
// kernel filled. Call it inside Do.
func GetRegSet(t, typ int, buf []byte) ([]byte, error) {
	if len(buf) == 0 {
		return nil, fmt.Errorf("thread %d: register set %#x: empty buffer", t, typ)
	}
	iov := unix.Iovec{Base: &buf[0]}
	iov.SetLen(len(buf))
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGSET, uintptr(t), uintptr(typ), uintptr(unsafe.Pointer(&iov)), 0, 0)
	if e != 0 {
		return nil, fmt.Errorf("thread %d: register set %#x: %w", t, typ, e)
	}
	return buf[:iov.Len], nil
}

// GetGRegs reads the general registers of the held thread t
// (NT_PRSTATUS: struct user_regs_struct on x86-64, struct user_pt_regs
// on AArch64). Call it inside Do.
func GetGRegs(t int) ([]byte, error) {
	size := unwind.PRStatusSize(unwind.HostArch())
	if size == 0 {
		return nil, fmt.Errorf("thread %d: registers of %s: %w", t, runtime.GOARCH, errors.ErrUnsupported)
	}
	b, err := GetRegSet(t, core.NTPRStatus, make([]byte, size))
	if err != nil {
		return nil, err
	}
	if len(b) != size {
		return nil, fmt.Errorf("thread %d: %d bytes of registers, want %d", t, len(b), size)
	}
	return b, nil
}

// GetSigInfo reads the siginfo of the signal the held thread t stopped
// with (PTRACE_GETSIGINFO, 128 bytes). Call it inside Do.
func GetSigInfo(t int) ([]byte, error) {
	buf := make([]byte, 128)
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(t), 0, uintptr(unsafe.Pointer(&buf[0])), 0, 0)
	if e != 0 {
		return nil, fmt.Errorf("thread %d: siginfo: %w", t, e)
	}
	return buf, nil
}

// maxIov bounds the iovecs of one process_vm_readv (the kernel's
// UIO_MAXIOV).
const maxIov = 1024

// vmRead reads each addrs[i] into bufs[i] of process pid with
// process_vm_readv, in order, and returns how many it read whole: the
// rest are left to another reader (the call is refused, or stopped at
// an unreadable page).
func vmRead(pid int, bufs [][]byte, addrs []uint64) int {
	done := 0
	for done < len(bufs) {
		end := min(done+maxIov, len(bufs))
		var local []unix.Iovec
		var remote []unix.RemoteIovec
		for i := done; i < end; i++ {
			if len(bufs[i]) == 0 {
				continue
			}
			v := unix.Iovec{Base: &bufs[i][0]}
			v.SetLen(len(bufs[i]))
			local = append(local, v)
			remote = append(remote, unix.RemoteIovec{Base: uintptr(addrs[i]), Len: len(bufs[i])})
		}
		n, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil {
			return done
		}
		for i := done; i < end; i++ {
			if n < len(bufs[i]) {
				return i
			}
			n -= len(bufs[i])
		}
		done = end
	}
	return done
}
