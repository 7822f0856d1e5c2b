package machoinfo

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNotMachO means the input starts with neither a Mach-O nor a
	// universal (fat) magic number.
	ErrNotMachO = errors.New("not a Mach-O file")
	// ErrCorrupt means the Mach-O structures are truncated or
	// inconsistent; the error is a *FormatError.
	ErrCorrupt = errors.New("corrupt or truncated Mach-O file")
	// ErrNoUUID means an architecture has no LC_UUID load command, so
	// no .dSYM can be proved to belong to it.
	ErrNoUUID = errors.New("no LC_UUID load command")
	// ErrNoArch means a universal file does not hold the architecture
	// asked for.
	ErrNoArch = errors.New("no such architecture in the file")
)

// FormatError reports bad Mach-O input: which architecture and what
// structure was being parsed, where, and what was wrong, as
// debug/macho.FormatError and elfinfo.FormatError do. It matches
// ErrCorrupt with errors.Is. The parsers do not know the file's name:
// the caller that opened the file names it when wrapping the error.
type FormatError struct {
	// Arch is the architecture ("x86_64", "arm64") whose slice was being
	// parsed; "" for the fat header or a thin file not yet identified.
	Arch string
	// Where names the structure: "fat header", "Mach-O header",
	// "load commands", "LC_UUID", "segment __LINKEDIT", "symbol table".
	Where string
	// Off is the byte offset of the bad structure in the file (for a
	// fat file's slice, from the start of the whole file); -1 when
	// unknown.
	Off int64
	// Msg says what is wrong, in lowercase, one line.
	Msg string
	// Err is the underlying error, if any.
	Err error
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(ErrCorrupt.Error())
	if e.Arch != "" {
		b.WriteString(": ")
		b.WriteString(e.Arch)
		b.WriteString(" slice")
	}
	if e.Where != "" {
		b.WriteString(": ")
		b.WriteString(e.Where)
	}
	if e.Off >= 0 {
		fmt.Fprintf(&b, " at offset %#x", e.Off)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	s := b.String()
	if strings.ContainsAny(s, "\n\r") {
		s = strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
	}
	return s
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorrupt.
func (e *FormatError) Is(target error) bool { return target == ErrCorrupt }

// corruptf returns a *FormatError; an error wrapped with %w becomes its
// Err.
func corruptf(arch, where string, off int64, format string, args ...any) *FormatError {
	e := fmt.Errorf(format, args...)
	return &FormatError{Arch: arch, Where: where, Off: off, Msg: e.Error(), Err: errors.Unwrap(e)}
}
