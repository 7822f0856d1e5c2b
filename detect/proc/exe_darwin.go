package proc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ExePath returns the absolute path the process pid was started with,
// from the kern.procargs2 sysctl (what ps(1) reads; proc_pidpath is in
// libproc, out of reach without cgo). It fails for a path that is not
// absolute and clean.
func ExePath(pid int) (string, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return "", fmt.Errorf("process %d: kern.procargs2: %w", pid, err)
	}
	pa, err := ParseProcArgs(b)
	if err != nil {
		return "", fmt.Errorf("process %d: %w", pid, err)
	}
	if p := pa.AbsExe(); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("process %d: started as %q, not an absolute path", pid, pa.Exe)
}
