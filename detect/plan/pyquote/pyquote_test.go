package pyquote

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		``:            `""`,
		`/usr/bin/py`: `"/usr/bin/py"`,
		`a"b\c`:       `"a\"b\\c"`,
		"a`b":         `"a\x60b"`,
		"nl\n":        `"nl\x0a"`,
		"é":           `"\xe9"`,
		"\u2028":      `"\u2028"`,
		"\U0001F600":  `"\U0001f600"`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %s, want %s", in, got, want)
		}
	}
}

// Python reads every literal back as the string it came from.
func FuzzRoundTrip(f *testing.F) {
	py, err := exec.LookPath("python3")
	if err != nil {
		f.Skip("python3 not found")
	}
	for _, s := range []string{"", "a`b", "\"\\", "é\u2028\U0001F600", "\x00\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "?")
		}
		lit := String(s)
		for i := 0; i < len(lit); i++ {
			if c := lit[i]; c < 0x20 || c >= 0x7f || c == '`' {
				t.Fatalf("%q: byte %#x in the literal", s, c)
			}
		}
		out, err := exec.Command(py, "-c", "import sys; sys.stdout.buffer.write(("+lit+").encode('utf-8', 'surrogatepass'))").Output()
		if err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if string(out) != s {
			t.Fatalf("Python read %s as %q, want %q", lit, out, s)
		}
	})
}
