package elfinfo

import (
	"errors"
	"fmt"
	"strings"
)

// FormatError reports bad input found by a parser of an untrusted file
// (an ELF file, its notes and DWARF, a core's NT_FILE note): what was
// being parsed, where, and what was wrong, as debug/elf.FormatError and
// debug/dwarf.DecodeError do. It matches ErrCorrupt with errors.Is, so
// callers that only ask "is it corrupt?" need not know the type; callers
// that report where use errors.As. Like debug/elf's, the parsers read
// from an io.ReaderAt or bytes and do not know the file's name: the
// caller that opened the file names it when wrapping the error.
type FormatError struct {
	// Section names what was being parsed: a section (".gnu_debuglink",
	// ".debug_info"), a segment or header ("PT_NOTE", "ELF header"), a
	// note ("NT_FILE") or a table ("symbol table"); "" when unknown.
	Section string
	// Off is the byte offset of the bad structure: in the file when the
	// parser reads a file, in the bytes it was handed (the contents of
	// Section) when it parses bytes; -1 when unknown.
	Off int64
	// Msg says what is wrong, in lowercase, one line.
	Msg string
	// Err is the underlying error, if any (an *elf.FormatError, a
	// recovered panic, io.ErrUnexpectedEOF).
	Err error
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(ErrCorrupt.Error())
	if e.Section != "" {
		b.WriteString(": ")
		b.WriteString(e.Section)
	}
	if e.Off >= 0 {
		if e.Section == "" {
			b.WriteString(":")
		}
		fmt.Fprintf(&b, " at offset %#x", e.Off)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return oneLine(b.String())
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorrupt.
func (e *FormatError) Is(target error) bool { return target == ErrCorrupt }

// Corruptf returns a *FormatError for section at offset off (-1 when
// unknown) with the message fmt.Sprintf(format, args...); an error
// wrapped with %w becomes its Err.
func Corruptf(section string, off int64, format string, args ...any) *FormatError {
	e := fmt.Errorf(format, args...)
	return &FormatError{Section: section, Off: off, Msg: e.Error(), Err: errors.Unwrap(e)}
}

// oneLine keeps a message, which may quote bytes from the file, on one
// line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}

// atOffset adds base, the file offset of the bytes a parser was handed,
// to the offset of the *FormatError in err's chain.
func atOffset(err error, base uint64) error {
	var fe *FormatError
	if errors.As(err, &fe) && fe.Off >= 0 {
		fe.Off += int64(base)
	}
	return err
}
