package buildid

import (
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := []string{"ab", "00ff", "3d481f7beb569366850485043ca07137963683fe", strings.Repeat("0f", MaxBytes)}
	for _, s := range good {
		id, err := Parse(s)
		if err != nil || string(id) != s || !id.Valid() || !Valid(s) || id.String() != s {
			t.Errorf("Parse(%q) = %q, %v", s, id, err)
		}
	}
	bad := []string{
		"", "a", "abc", "3d481", // odd length
		"AB", "3D48", "3d481F7b", // uppercase: gdb's tree is lowercase
		"zz", "0x12", "ab/cd", "../../etc", "ab\x00c", " ab", "ab ", "abcd%2f",
		strings.Repeat("0f", MaxBytes+1),
	}
	for _, s := range bad {
		id, err := Parse(s)
		if !errors.Is(err, ErrInvalid) || id != "" || Valid(s) || ID(s).Valid() {
			t.Errorf("Parse(%q) = %q, %v; want ErrInvalid", s, id, err)
		}
		if p := ID(s).DebugPath("/usr/lib/debug"); p != "" {
			t.Errorf("ID(%q).DebugPath = %q, want \"\"", s, p)
		}
	}
}

func TestPath(t *testing.T) {
	id := ID("3d481f7beb569366850485043ca07137963683fe")
	if got, want := id.DebugPath("/usr/lib/debug"), "/usr/lib/debug/.build-id/3d/481f7beb569366850485043ca07137963683fe.debug"; got != want {
		t.Errorf("DebugPath = %q, want %q", got, want)
	}
	if got, want := id.Path("/d", ".1.debug"), "/d/.build-id/3d/481f7beb569366850485043ca07137963683fe.1.debug"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got, want := id.Path("/d", ""), "/d/.build-id/3d/481f7beb569366850485043ca07137963683fe"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	// gdb's name for a one-byte id.
	if got, want := ID("ab").DebugPath("/d"), "/d/.build-id/ab/.debug"; got != want {
		t.Errorf("DebugPath = %q, want %q", got, want)
	}
}

func TestFromBytes(t *testing.T) {
	if got := FromBytes([]byte{0xC5, 0x61, 0xF3}); got != "c561f3" || !got.Valid() {
		t.Errorf("FromBytes = %q", got)
	}
	if FromBytes(nil).Valid() || FromBytes(make([]byte, MaxBytes+1)).Valid() {
		t.Error("FromBytes of 0 or 65 bytes is Valid")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "ab", "AB", "abc", "3d481f7beb569366850485043ca07137963683fe", "../x", strings.Repeat("ff", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || id != "" || Valid(s) || ID(s).DebugPath("/d") != "" {
				t.Fatalf("Parse(%q) failed inconsistently: %q, %v", s, id, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("Parse(%q): error of several lines: %q", s, err)
			}
			return
		}
		if string(id) != s || len(s)%2 != 0 || len(s) < 2*MinBytes || len(s) > 2*MaxBytes || s != strings.ToLower(s) {
			t.Fatalf("Parse(%q) = %q accepted a bad id", s, id)
		}
		// The bytes round-trip, and the path stays two levels under
		// dir/.build-id whatever the id.
		if FromBytes(mustHex(t, s)) != id {
			t.Fatalf("FromBytes(hex(%q)) != %q", s, id)
		}
		p := id.DebugPath("/d")
		rel, err := filepath.Rel("/d/.build-id", p)
		if err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, "/") != 1 || filepath.Dir(rel) != s[:2] {
			t.Fatalf("DebugPath(%q) = %q escapes the tree", s, p)
		}
	})
}

func mustHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
