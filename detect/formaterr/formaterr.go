// Package formaterr holds the one error type of pyattach's parsers of
// untrusted binary input: elfinfo (ELF files, their notes and DWARF, a
// core's NT_FILE note) and machoinfo (Mach-O and universal files) both
// report bad input as an *Error, as debug/elf.FormatError,
// debug/macho.FormatError and debug/dwarf.DecodeError do. Each parser
// names its own sentinel as the Error's Kind (elfinfo.ErrCorrupt,
// machoinfo.ErrCorrupt): errors.Is matches it, so callers that only ask
// "is it corrupt?" need not know the type, and callers that report where
// use errors.As. The parsers read from an io.ReaderAt or bytes and do
// not know the file's name: the caller that opened the file names it
// when wrapping the error.
package formaterr

import (
	"errors"
	"fmt"
	"strings"
)

// Error reports bad input found by a parser of an untrusted file: what
// was being parsed, where, and what was wrong.
type Error struct {
	// Kind is the parser's sentinel (elfinfo.ErrCorrupt,
	// machoinfo.ErrCorrupt): the message starts with it and errors.Is
	// matches it.
	Kind error
	// Arch is the architecture ("x86_64", "arm64") whose slice of a
	// universal Mach-O file was being parsed; "" for ELF input, a fat
	// header or a thin file not yet identified.
	Arch string
	// Section names what was being parsed: a section (".gnu_debuglink",
	// ".debug_info"), a segment, header or load command ("PT_NOTE",
	// "ELF header", "fat header", "LC_UUID", "segment __LINKEDIT"), a
	// note ("NT_FILE") or a table ("symbol table"); "" when unknown.
	Section string
	// Off is the byte offset of the bad structure: in the file when the
	// parser reads a file (for a fat file's slice, from the start of the
	// whole file), in the bytes it was handed (the contents of Section)
	// when it parses bytes; -1 when unknown.
	Off int64
	// Msg says what is wrong, in lowercase, one line.
	Msg string
	// Err is the underlying error, if any (a debug/elf or debug/macho
	// error, a recovered panic, io.ErrUnexpectedEOF).
	Err error
}

// Newf returns an *Error of kind for section (of arch's slice) at offset
// off (-1 when unknown) with the message fmt.Sprintf(format, args...);
// an error wrapped with %w becomes its Err.
func Newf(kind error, arch, section string, off int64, format string, args ...any) *Error {
	e := fmt.Errorf(format, args...)
	return &Error{Kind: kind, Arch: arch, Section: section, Off: off, Msg: e.Error(), Err: errors.Unwrap(e)}
}

// Error returns one line: the Kind, then the slice, the section, the
// offset and the message that are known.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Kind != nil {
		b.WriteString(e.Kind.Error())
	}
	if e.Arch != "" {
		b.WriteString(": ")
		b.WriteString(e.Arch)
		b.WriteString(" slice")
	}
	if e.Section != "" {
		b.WriteString(": ")
		b.WriteString(e.Section)
	}
	if e.Off >= 0 {
		if e.Arch == "" && e.Section == "" {
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
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the error's Kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// oneLine keeps a message, which may quote bytes from the file, on one
// line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}
