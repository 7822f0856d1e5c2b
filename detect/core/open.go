package core

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
)

// OpenError is a core file whose executable cannot be debugged here
// (OpenIn, CheckRegular).
type OpenError struct {
	Path string
	// Exe is the executable the core names ("" when it names none or
	// could not be read).
	Exe string
	// Err is why it cannot be read (Exe == ""), or why Exe cannot be
	// opened; nil for a core that names no executable.
	Err error
}

func (e *OpenError) Error() string {
	var nr *saferead.NotRegularError
	if e.Exe == "" && errors.As(e.Err, &nr) {
		return "core " + nr.Error()
	}
	switch {
	case e.Exe != "":
		return fmt.Sprintf("core %s was dumped by %s, which is not on this machine: %v", e.Path, e.Exe, e.Err)
	case e.Err == nil:
		return fmt.Sprintf("core %s does not name its executable", e.Path)
	default:
		return fmt.Sprintf("core %s: %v", e.Path, e.Err)
	}
}

func (e *OpenError) Unwrap() error { return e.Err }

// NotCore reports an error reading the file as a core (as opposed to a
// core whose executable is missing).
func (e *OpenError) NotCore() bool { return e.Exe == "" && e.Err != nil }

// OpenIn reads a core file whose executable is under root, the host
// directory standing for its process's "/" (an unpacked bundle's root/;
// "": this machine's). Unlike Open, it answers for a core a debugger can
// open here: the executable must exist, and the core's Owner
// (NT_PRPSINFO's pr_uid and pr_gid) is kept only when the file is that
// user's or root's and nobody else may write it: whoever else wrote the
// file could have claimed any user, root included.
func OpenIn(path, root string) (*Info, error) {
	f, err := saferead.Open(path)
	if errors.Is(err, saferead.ErrNotRegular) {
		return nil, &OpenError{Path: path, Err: err}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := Read(f)
	if err != nil {
		return nil, &OpenError{Path: path, Err: err}
	}
	if info.Owner != nil {
		var sys *syscall.Stat_t
		if st, err := f.Stat(); err == nil {
			sys, _ = st.Sys().(*syscall.Stat_t)
		}
		if sys == nil || sys.Uid != 0 && sys.Uid != info.Owner.UID || sys.Mode&0o022 != 0 {
			info.Owner = nil
		}
	}
	if info.Exe == "" {
		return nil, &OpenError{Path: path}
	}
	if _, err := rootfs.Stat(root, info.Exe); err != nil {
		return nil, &OpenError{Path: path, Exe: info.Exe, Err: err}
	}
	return info, nil
}

// CheckRegular refuses a core file that is not a regular file, as
// OpenIn does, for a debugger command line that names the program
// too: gdb and lldb would block on a FIFO for ever. Other errors are
// left for the debugger to report.
func CheckRegular(path string) error {
	f, err := saferead.Open(path)
	if errors.Is(err, saferead.ErrNotRegular) {
		return &OpenError{Path: path, Err: err}
	}
	if err == nil {
		f.Close()
	}
	return nil
}
