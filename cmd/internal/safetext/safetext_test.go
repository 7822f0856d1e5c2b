package safetext

import (
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

func TestFold(t *testing.T) {
	testenv.Cases(t, "Fold", Fold, map[string]string{
		"":                             "",
		"open /x: permission denied":   "open /x: permission denied",
		"first\nsecond\r\n  third\t ":  "first second third",
		"\n  leading and  inner  \n\n": "leading and inner",
	})
}

func TestLast(t *testing.T) {
	testenv.Cases(t, "Last", Last, map[string]string{
		"":                           "",
		"one":                        "one",
		"warning: x\n/usr/lib/dir\n": "/usr/lib/dir",
		"a\nb\n\n  \n":               "b",
		"a\n  indented last  ":       "  indented last",
	})
}
