package saferead

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotRegular means a file that is read as data is a directory, a
// FIFO, a device or a socket.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is a file OpenRegular refused: Path is what it was
// asked to open, Mode says what the file is. It matches ErrNotRegular.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return e.Path + " is " + Kind(e.Mode) + ", not a regular file"
}

// Is reports whether target is ErrNotRegular.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind names the type of file m describes, with its article: "a
// regular file", "a directory", "a FIFO", "a socket", "a character
// device", "a block device", "a symbolic link".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}

// OpenRegular opens the file name for reading and returns it with its
// FileInfo: the one way pyattach opens a file it reads as data (a core,
// a zip, an ELF file, a configuration file, a file under a process's
// root). It never blocks and never reads a device: the open is
// O_NONBLOCK (a FIFO without a writer would block a plain open forever,
// and the process with it, whatever signal comes) and O_NOCTTY, the
// descriptor is checked with fstat, and a file that is not a regular
// file is closed and refused with a *NotRegularError (matching
// ErrNotRegular) whose FileInfo is still returned, to say what it is. A
// regular file is handed back in blocking mode. Symbolic links are
// followed: what counts is the file at the end.
func OpenRegular(name string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		// A socket, or a device without a driver, cannot be opened at
		// all: say what it is rather than "no such device".
		if errors.Is(err, unix.ENXIO) || errors.Is(err, unix.ENODEV) {
			if st, serr := os.Stat(name); serr == nil && !st.Mode().IsRegular() {
				return nil, st, &NotRegularError{Path: name, Mode: st.Mode()}
			}
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, st, &NotRegularError{Path: name, Mode: st.Mode()}
	}
	if err := clearNonblock(f); err != nil {
		f.Close()
		return nil, nil, &fs.PathError{Op: "fcntl", Path: name, Err: err}
	}
	return f, st, nil
}

// Open is OpenRegular without the FileInfo.
func Open(name string) (*os.File, error) {
	f, _, err := OpenRegular(name)
	return f, err
}

// clearNonblock turns O_NONBLOCK off again (it means nothing for a
// regular file on Linux, but a file handed on keeps the usual mode).
func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		var fl int
		if fl, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0); ferr == nil && fl&unix.O_NONBLOCK != 0 {
			_, ferr = unix.FcntlInt(fd, unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
	}); err != nil {
		return err
	}
	return ferr
}
