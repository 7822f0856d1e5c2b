package proc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
)

// ErrMalformedProcArgs is wrapped by every *ProcArgsError.
var ErrMalformedProcArgs = errors.New("malformed kern.procargs2 data")

// ProcArgsError says where kern.procargs2 data went wrong.
type ProcArgsError struct {
	Off int    // byte offset of the problem
	Msg string // what is wrong there
}

func (e *ProcArgsError) Error() string {
	return fmt.Sprintf("%v at byte %d: %s", ErrMalformedProcArgs, e.Off, e.Msg)
}

// Unwrap returns ErrMalformedProcArgs.
func (e *ProcArgsError) Unwrap() error { return ErrMalformedProcArgs }

// ProcArgs is what macOS's kern.procargs2 sysctl tells of a process:
// the path it was started with and its arguments. The environment that
// follows them is not read.
type ProcArgs struct {
	Exe  string
	Args []string
}

// MaxProcArgs bounds the data ParseProcArgs reads, as the kernel's
// kern.argmax does (1 MiB on macOS).
const MaxProcArgs = 1 << 20

// ParseProcArgs parses kern.procargs2 data: argc as a 32-bit
// little-endian integer (every macOS architecture is little-endian),
// the executable path NUL-terminated, NUL padding, then argc
// NUL-terminated arguments. The process writes its arguments itself,
// so every part is checked: the path must be absolute, clean of NUL,
// and every argument must end inside the data.
func ParseProcArgs(b []byte) (ProcArgs, error) {
	var pa ProcArgs
	if len(b) > MaxProcArgs {
		return pa, &ProcArgsError{MaxProcArgs, fmt.Sprintf("larger than %d bytes", MaxProcArgs)}
	}
	if len(b) < 4 {
		return pa, &ProcArgsError{0, "shorter than its argument count"}
	}
	argc := binary.LittleEndian.Uint32(b)
	off := 4
	end := bytes.IndexByte(b[off:], 0)
	if end < 0 {
		return pa, &ProcArgsError{off, "executable path without its NUL"}
	}
	pa.Exe = string(b[off : off+end])
	if pa.Exe == "" {
		return pa, &ProcArgsError{off, "empty executable path"}
	}
	off += end
	for off < len(b) && b[off] == 0 {
		off++
	}
	// Each argument takes at least its NUL.
	if uint64(argc) > uint64(len(b)-off) {
		return pa, &ProcArgsError{0, fmt.Sprintf("%d arguments in %d bytes", argc, len(b)-off)}
	}
	pa.Args = make([]string, 0, argc)
	for range argc {
		end := bytes.IndexByte(b[off:], 0)
		if end < 0 {
			return pa, &ProcArgsError{off, fmt.Sprintf("argument %d without its NUL", len(pa.Args))}
		}
		pa.Args = append(pa.Args, string(b[off:off+end]))
		off += end + 1
	}
	return pa, nil
}

// AbsExe is pa.Exe when it is an absolute, clean path (a process
// started with a relative path names its executable relative to a
// directory kern.procargs2 does not tell), else "".
func (pa ProcArgs) AbsExe() string {
	if path.IsAbs(pa.Exe) && path.Clean(pa.Exe) == pa.Exe {
		return pa.Exe
	}
	return ""
}
