package textline

import "testing"

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "",
		"open /x: permission denied":   "open /x: permission denied",
		"first\nsecond\r\n  third\t ":  "first second third",
		"\n  leading and  inner  \n\n": "leading and inner",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLast(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "",
		"one":                        "one",
		"warning: x\n/usr/lib/dir\n": "/usr/lib/dir",
		"a\nb\n\n  \n":               "b",
		"a\n  indented last  ":       "  indented last",
	} {
		if got := Last(in); got != want {
			t.Errorf("Last(%q) = %q, want %q", in, got, want)
		}
	}
}
