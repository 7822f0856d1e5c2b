// Package pyquote writes Go strings as Python string literals that both
// debuggers read back unchanged: printable ASCII only, every other rune
// as a \x, \u or \U escape. The backtick is escaped too, as \x60, because
// lldb evaluates backticks in every command line, "script" included; gdb
// does not care, and the literal means the same to Python either way.
//
// gdbgen, lldbgen and dump's script all use it, so it sits beside the
// plan whose strings it spells (detect/plan), not under one debugger's
// generator; it imports nothing of the module.
package pyquote

import (
	"fmt"
	"strings"
)

// String is s as a double-quoted Python string literal.
func String(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '`':
			b.WriteString(`\x60`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r <= 0xffff:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			fmt.Fprintf(&b, "\\U%08x", r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Bool is b as a Python literal: True or False.
func Bool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
