package saferead

import "golang.org/x/sys/unix"

// oPath opens a file or directory only to name it (fstat, openat
// relative to it): no read permission is needed, and a FIFO or device
// is not opened. oPathNoFollow opens a symbolic link itself.
const (
	oPath         = unix.O_PATH
	oPathNoFollow = unix.O_PATH | unix.O_NOFOLLOW
)
