// Package ptrace holds a live process stopped while pyattach reads it:
// every thread seized and interrupted from one locked OS thread, let go
// (each with any signal it stopped with) by Resume. Capture takes, while
// the process is stopped, what a C stack walk needs afterwards (each
// thread's registers and stack bytes, bounded) for detect/unwind. It
// works on Linux only; elsewhere Stop returns an *Error wrapping
// ErrUnsupported.
package ptrace

import (
	"fmt"
	"time"
)

// StopWait bounds the wait for one thread's stop: a thread in an
// uninterruptible sleep (or one that never returns to user space) stops
// the whole attempt, rather than hold the others stopped.
var StopWait = 10 * time.Second

// Error is a refused PTRACE_SEIZE: the process cannot be stopped by
// pyattach itself (another tracer, permissions, Yama).
type Error struct {
	PID int
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("cannot stop process %d with ptrace: %v", e.PID, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
