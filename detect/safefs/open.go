package safefs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular means a file that is read as data is a directory, a
// FIFO, a device or a socket.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens the file name for reading, without blocking on a
// FIFO, and returns it with its FileInfo. A file that is not a regular
// file is closed and refused with an *fs.PathError wrapping
// ErrNotRegular; its FileInfo is still returned, to say what it is.
func OpenRegular(name string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, st, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	return f, st, nil
}
