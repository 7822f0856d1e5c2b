package planner

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
)

// CoreError is a core file whose executable cannot be debugged here.
type CoreError struct {
	Path string
	// Exe is the executable the core names ("" when it names none or
	// could not be read).
	Exe string
	// Err is why it cannot be read (Exe == ""), or why Exe cannot be
	// opened; nil for a core that names no executable.
	Err error
}

func (e *CoreError) Error() string {
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

func (e *CoreError) Unwrap() error { return e.Err }

// NotCore reports an error reading the file as a core (as opposed to a
// core whose executable is missing).
func (e *CoreError) NotCore() bool { return e.Exe == "" && e.Err != nil }

// ReadCore reads a core file whose executable is on this machine. The
// core's Owner (NT_PRPSINFO's pr_uid and pr_gid) is kept only when the
// file is that user's or root's and nobody else may write it: whoever
// else wrote the file could have claimed any user, root included.
func ReadCore(path string) (*core.Info, error) { return ReadCoreIn(path, "") }

// ReadCoreIn is ReadCore for a core whose files are under root, the host
// directory standing for its process's "/" (an unpacked bundle's root/;
// "": this machine's).
func ReadCoreIn(path, root string) (*core.Info, error) {
	f, err := saferead.Open(path)
	if errors.Is(err, saferead.ErrNotRegular) {
		return nil, &CoreError{Path: path, Err: err}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := core.Read(f)
	if err != nil {
		return nil, &CoreError{Path: path, Err: err}
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
		return nil, &CoreError{Path: path}
	}
	if _, err := rootfs.Stat(root, info.Exe); err != nil {
		return nil, &CoreError{Path: path, Exe: info.Exe, Err: err}
	}
	return info, nil
}

// checkCoreFile refuses a core file that is not a regular file, as
// ReadCore does, for a debugger command line that names the program
// too: gdb and lldb would block on a FIFO for ever. Other errors are
// left for the debugger to report.
func checkCoreFile(path string) error {
	f, err := saferead.Open(path)
	if errors.Is(err, saferead.ErrNotRegular) {
		return &CoreError{Path: path, Err: err}
	}
	if err == nil {
		f.Close()
	}
	return nil
}

// CoreCreds are the credentials a core's source files are read with:
// its process's user and group (no supplementary groups: a core does
// not record them), nil (what anyone may read) when ReadCore did not
// keep them.
func CoreCreds(info *core.Info) *plan.Creds {
	if info == nil || info.Owner == nil {
		return nil
	}
	return &plan.Creds{UID: info.Owner.UID, GID: info.Owner.GID}
}
