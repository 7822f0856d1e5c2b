// Package safetext makes text safe to print: it escapes the strings a
// debugged process controls before they are printed (Escape,
// EscapeControls, EscapeJSON, Fprintf), and puts text from errors and
// from the commands pyattach runs on the one line a report or a message
// has for it (Fold, Last).
package safetext

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Fold puts a message on one line: every run of white space, newlines
// included, becomes one space, and none is left at either end.
func Fold(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Last is the last line of a command's output once the white space
// around the whole output is trimmed ("" for none).
func Last(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// Escape writes what could drive a terminal or fake a line in s the way
// Python's repr writes it, so that a string the debugged process chose
// (a function, file or thread name, a source line) prints as one piece
// of text: \t \n \r, \xNN for the other C0 controls, DEL and the C1
// controls, \uNNNN for the Arabic letter mark, LRM and RLM, the line and
// paragraph separators and the bidirectional embeddings, overrides and
// isolates, \xNN for each byte that is not UTF-8, and \\ for a
// backslash (so an escaped form cannot be faked). Everything else is
// kept. The walker's escape() (detect/pywalk/py/pyattach_walk_text.py) does
// the same in the debuggers; a test compares the two.
func Escape(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafe(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unsafe(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafe reports whether Escape rewrites r.
func unsafe(r rune) bool {
	switch {
	case r == '\\', r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// EscapeJSON rewrites, in encoded JSON, each character Escape would
// rewrite that encoding/json leaves raw (DEL, the C1 controls, the bidi
// and mark characters) as a \uNNNN escape: the JSON decodes to the same
// values, and printed on a terminal it drives nothing. Those characters
// can only stand inside JSON strings, and a backslash there is escaped
// already.
func EscapeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x7f && unsafe(r) {
			out = append(out, b[last:i]...)
			out = fmt.Appendf(out, `\u%04x`, r)
			last = i + n
		}
		i += n
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// EscapeControls is Escape(s) when s holds a character Escape rewrites
// other than a backslash, and s itself otherwise: for the messages,
// hints and fixes pyattach writes around strings a process controls,
// whose backslashes (in a shell command's quoting, in a regular
// expression) mean what they say unless the line needs escaping.
func EscapeControls(s string) string {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r != '\\' && unsafe(r) {
			return Escape(s)
		}
		i += n
	}
	return s
}

// Fprintf is fmt.Fprintf with every string argument, and the message of
// every error argument, escaped (Escape): for text output whose
// arguments are data a process controls (paths, names, command lines)
// and whose format is pyattach's own.
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	esc := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			esc[i] = Escape(v)
		case error:
			esc[i] = Escape(v.Error())
		default:
			esc[i] = a
		}
	}
	return fmt.Fprintf(w, format, esc...)
}
