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

// Tids is empty.
func (s *Stopped) Tids() []int { return nil }

// Signal is 0.
func (s *Stopped) Signal(t int) int { return 0 }

// Do runs f.
func (s *Stopped) Do(f func()) { f() }

// GetRegSet fails: PTRACE_GETREGSET is Linux's.
func GetRegSet(t, typ int, buf []byte) ([]byte, error) { return nil, errors.ErrUnsupported }

// GetSigInfo fails: PTRACE_GETSIGINFO is Linux's.
func GetSigInfo(t int) ([]byte, error) { return nil, errors.ErrUnsupported }

// GetGRegs fails: PTRACE_GETREGSET is Linux's.
func GetGRegs(t int) ([]byte, error) { return nil, errors.ErrUnsupported }

// vmRead reads nothing: process_vm_readv is Linux's.
func vmRead(pid int, bufs [][]byte, addrs []uint64) int { return 0 }

// PID is 0.
func (s *Stopped) PID() int { return 0 }
