// Package shquote quotes words for a POSIX shell, so that a command
// pyattach prints (a fix, a debugger command line) can be pasted as it
// is.
package shquote

import "strings"

// Quote quotes s for a POSIX shell when it needs it: a word made only of
// letters, digits and -_./=:,+@% is left as it is; any other is put in
// single quotes.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes every word of argv and joins them with spaces.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}
