package shquote

import (
	"os/exec"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path-1.2": "plain/path-1.2",
		"":               "''",
		"a b":            "'a b'",
		"it's":           `'it'\''s'`,
		"$(id)":          "'$(id)'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The shell reads every quoted word back as it was.
func TestJoinRoundTrip(t *testing.T) {
	words := []string{"a b", "it's", "$(id)", "`x`", "new\nline", "", "*"}
	out, err := exec.Command("sh", "-c", "printf '%s\\0' "+Join(words)).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, w := range words {
		want += w + "\x00"
	}
	if string(out) != want {
		t.Errorf("sh read back %q, want %q", out, want)
	}
}
