//go:build unix

package pyext

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the uid that owns the file.
func fileOwner(st fs.FileInfo) (int, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid), true
	}
	return 0, false
}
