//go:build !darwin

package proc

import (
	"errors"
	"fmt"
)

// ExePath is macOS's: on Linux the executable is PID/exe (Process).
func ExePath(pid int) (string, error) {
	return "", fmt.Errorf("process %d: kern.procargs2: %w", pid, errors.ErrUnsupported)
}
