//go:build !linux

package ptrace

import (
	"context"
	"errors"
)

// Stopped is never made outside Linux.
type Stopped struct{}

// Stop fails: PTRACE_SEIZE is Linux's.
func Stop(ctx context.Context, procRoot string, pid int) (*Stopped, error) {
	return nil, &Error{PID: pid, Err: errors.ErrUnsupported}
}

// Threads is 0.
func (s *Stopped) Threads() int { return 0 }

// Resume does nothing.
func (s *Stopped) Resume() {}
