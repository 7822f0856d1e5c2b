package saferead

import "golang.org/x/sys/unix"

// macOS has no O_PATH: a component is opened for reading (which needs
// read permission, as root always has), without blocking on a FIFO or
// taking a terminal; O_SYMLINK opens a symbolic link itself, as
// O_PATH|O_NOFOLLOW does on Linux.
const (
	oPath         = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	oPathNoFollow = oPath | unix.O_SYMLINK
)
