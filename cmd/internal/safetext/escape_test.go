package safetext

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pyattach/pyattach/detect/pywalk"
	"github.com/pyattach/pyattach/detect/testenv"
)

// escapeCases are strings a debugged process may hold in a name, a file
// name or a source line, and how they print. They are UTF-8, so the
// walker's escape() is checked against the same table.
var escapeCases = map[string]string{
	"":                       "",
	"handle_request":         "handle_request",
	"/srv/app/app.py":        "/srv/app/app.py",
	"café, 日本語, emoji 🐍":     "café, 日本語, emoji 🐍",
	`C:\path`:                `C:\\path`,
	`\x1b`:                   `\\x1b`,
	"\x1b]52;c;SGVsbG8=\x07": `\x1b]52;c;SGVsbG8=\x07`,
	"\x1b]0;title\x1b\\":     `\x1b]0;title\x1b\\`,
	"\x1b[2J":                `\x1b[2J`,
	"x\n  File \"/etc/spoof.py\", line 1, in fake": `x\n  File "/etc/spoof.py", line 1, in fake`,
	"tab\there\rcr\x00nul\x7fdel":                  `tab\there\rcr\x00nul\x7fdel`,
	"c1 \u0085 nel \u009b csi":                     `c1 \x85 nel \x9b csi`,
	"sep\u2028line\u2029para":                      `sep\u2028line\u2029para`,
	"\u202eevil\u202c \u2066iso\u2069":             `\u202eevil\u202c \u2066iso\u2069`,
	"\u202a\u202b\u202d\u2067\u2068":               `\u202a\u202b\u202d\u2067\u2068`,
	"\u200emark\u200f\u061c":                       `\u200emark\u200f\u061c`,
	"\u00a0nbsp \u00e9 \u200b zwsp kept":           "\u00a0nbsp \u00e9 \u200b zwsp kept",
}

func TestEscape(t *testing.T) {
	testenv.Cases(t, "Escape", Escape, escapeCases)
	// Bytes that are not UTF-8 (a Go string may hold them) print as \xNN.
	testenv.Cases(t, "Escape", Escape, map[string]string{
		"a\xffb":           `a\xffb`,
		"\xed\xa0\x80":     `\xed\xa0\x80`,
		"ok\xc3":           `ok\xc3`,
		"\xc3\xa9\x1b\xc3": `é\x1b\xc3`,
	})
}

// TestEscapeJSON: --json output keeps the raw string: encoding/json
// writes it with C0 controls and the line separators escaped, EscapeJSON
// escapes the rest (C1, DEL, bidi), and it reads back the same.
func TestEscapeJSON(t *testing.T) {
	name := "worker\x1b]52;c;SGVsbG8=\x07\nFile \"/etc/spoof.py\"\u2028\u202e"
	b, err := json.Marshal(map[string]string{"name": name + "\u0085\x7f\u2066"})
	if err != nil {
		t.Fatal(err)
	}
	name += "\u0085\x7f\u2066"
	b = EscapeJSON(b)
	for _, c := range []string{"\x1b", "\x07", "\n", "\u2028", "\u202e", "\u0085", "\x7f", "\u2066"} {
		if strings.Contains(string(b), c) {
			t.Errorf("JSON holds %q raw: %s", c, b)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(b, &back); err != nil || back["name"] != name {
		t.Errorf("round trip: %q, %v; want %q", back["name"], err, name)
	}
}

// TestEscapeMatchesWalker: the walker's escape(), which the debuggers
// print through, gives what Escape gives for every case.
func TestEscapeMatchesWalker(t *testing.T) {
	py := testenv.Need(t, "python3")
	dir := t.TempDir()
	for name, b := range pywalk.Files() {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, err := json.Marshal(escapeCases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", `import json, sys
import pyattach_walk as w
cases = json.load(sys.stdin)
json.dump(dict((k, w.escape(k)) for k in cases), sys.stdout)
assert w.escape(None) == ""
assert w.escape("\ud800") == "\\ud800"
`)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range escapeCases {
		if got[k] != want {
			t.Errorf("walker's escape(%q) = %q, Escape gives %q", k, got[k], want)
		}
	}
}

// FuzzEscape: whatever the input, the output holds no control, no
// character that reorders or breaks lines, and only UTF-8; the same input
// gives the same output; text without any of those is kept as is. The
// same string in JSON through EscapeJSON decodes back to itself.
func FuzzEscape(f *testing.F) {
	for k := range escapeCases {
		f.Add(k)
	}
	f.Add("a\xffb\xed\xa0\x80")
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if r != '\\' && unsafe(r) {
				t.Fatalf("Escape(%q) = %q holds %U", s, got, r)
			}
		}
		if again := Escape(s); again != got {
			t.Fatalf("Escape(%q) gave %q, then %q", s, got, again)
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, unsafe) && got != s {
			t.Fatalf("Escape(%q) = %q, want it unchanged", s, got)
		}
		if !utf8.ValidString(s) {
			return
		}
		// JSON: the same value back, and no control in the bytes.
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b = EscapeJSON(b)
		var back string
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Fatalf("EscapeJSON(%s) decodes to %q, %v; want %q", b, back, err, s)
		}
		if strings.ContainsFunc(string(b), func(r rune) bool { return r != '\\' && unsafe(r) }) {
			t.Fatalf("EscapeJSON of %q holds a control: %q", s, b)
		}
	})
}

func TestEscapeControls(t *testing.T) {
	for in, want := range map[string]string{
		`run: pyattach trust '/tmp/it'\''s'`: `run: pyattach trust '/tmp/it'\''s'`,
		`/libc\.so`:                          `/libc\.so`,
		"process 7 (w\x1b]0;T\x07, /a\\b)":   `process 7 (w\x1b]0;T\x07, /a\\b)`,
		"bad \xff byte":                      `bad \xff byte`,
		"plain":                              "plain",
	} {
		if got := EscapeControls(in); got != want {
			t.Errorf("EscapeControls(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFprintf(t *testing.T) {
	var b strings.Builder
	Fprintf(&b, "%s %d %v %q\n", "a\x1bb", 7, errors.New("e\nf"), "x")
	if want := "a\\x1bb 7 e\\nf \"x\"\n"; b.String() != want {
		t.Errorf("Fprintf wrote %q, want %q", b.String(), want)
	}
}
