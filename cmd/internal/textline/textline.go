// Package textline puts text from errors and from the commands pyattach
// runs on the one line a report or a message has for it.
package textline

import "strings"

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
