package proc

import (
	"errors"
	"fmt"
	"runtime"
)

// ErrNeedsLinux is wrapped by every *NeedsLinuxError.
var ErrNeedsLinux = errors.New("needs Linux")

// NeedsLinuxError is a process asked for on a system without Linux's
// /proc and ptrace (macOS): pyattach reads a process's executable,
// mappings, root and memory through them. Exe is the process's
// executable when the system could name it (macOS: kern.procargs2, an
// absolute path), else "".
type NeedsLinuxError struct {
	PID  int
	GOOS string
	Exe  string
}

func (e *NeedsLinuxError) Error() string {
	return fmt.Sprintf("process %d: reading a running process needs Linux (/proc and ptrace); this system is %s", e.PID, e.GOOS)
}

// Unwrap returns ErrNeedsLinux.
func (e *NeedsLinuxError) Unwrap() error { return ErrNeedsLinux }

// CheckPlatform returns nil when goos ("" for the running system) reads
// processes through /proc: Linux. Elsewhere it returns a
// *NeedsLinuxError for pid, naming the process's executable when
// ExePath can find it on the running system.
func CheckPlatform(goos string, pid int) error {
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos == "linux" {
		return nil
	}
	e := &NeedsLinuxError{PID: pid, GOOS: goos}
	if goos == runtime.GOOS {
		e.Exe, _ = ExePath(pid)
	}
	return e
}
