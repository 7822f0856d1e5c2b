package pywalk

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// helpersPy checks the walker's pure helpers with the machine's python3:
// ints from 30-bit digits and 3.12's lv_tag, repr bounding, py-list's
// arguments and format, py-up/py-down's moves.
const helpersPy = `import struct, sys, tempfile, os
import pyattach_walk as w

def digits(v):
    v = abs(v)
    out = []
    while v:
        out.append(v & (2**30 - 1))
        v >>= 30
    return struct.pack("<%dI" % len(out), *out)

for v in (0, 1, -1, 7, 2**30 - 1, 2**30, -2**30, 2**100, -12345678901234567890, 3**500):
    sign = (v > 0) - (v < 0)
    got = w.long_from_digits(sign, digits(v))
    assert got == v, (v, got)
    # 3.12+: sign in bits 0-1 (0 positive, 1 zero, 2 negative), digits from bit 3.
    n = len(digits(v)) // 4
    tag = (n << 3) | {1: 0, 0: 1, -1: 2}[sign]
    assert w.long_sign_ndigits(tag) == (sign, n), (v, tag, w.long_sign_ndigits(tag))

assert w.bounded("abc", 3) == "abc"
assert w.bounded("abcd", 3) == "abc...(truncated)"
assert w.bounded(repr("x" * 5000)) == "'" + "x" * 1023 + "...(truncated)"

assert w.parse_list_args("") == (None, None)
assert w.parse_list_args("7") == (7, 17)
assert w.parse_list_args(" 3 , 9 ") == (3, 9)
assert w.parse_list_args("x") == (None, None)

d = tempfile.mkdtemp()
with open(os.path.join(d, "m.py"), "w") as f:
    f.write("".join("line%d\n" % i for i in range(1, 21)))
fr = w.Frame("/m.py", "f", "f", 3, 0, 0)
me = (os.getuid(), os.getgid(), ())
got = w.format_list(fr, "", w.SourceFiles(d, creds=me))
want = "".join("%4s    line%d\n" % ((">3" if i == 3 else str(i)), i) for i in range(1, 9))
assert got == want, (got, want)
assert w.format_list(fr, "19, 30", w.SourceFiles(d, creds=me)) == "  19    line19\n  20    line20\n"
assert w.format_list(w.Frame("m.py", "f", "f", 20, 0, 0), "", w.SourceFiles(cwd=d, creds=me)).endswith(" >20    line20\n")
assert w.format_list(w.Frame("/nonexistent/m.py", "f", "f", 1, 0, 0)) == "Unable to open /nonexistent/m.py\n"
assert w.format_list(w.Frame("/m.py", "f", "f", None, 0, 0), w.SourceFiles(d, creds=me)) == "Unable to read python frame line number\n"

frames = [0, 1, 2]
assert w.move_selection(frames, 0, True) == (1, None)
assert w.move_selection(frames, 2, True) == (None, "Unable to find an older python frame\n")
assert w.move_selection(frames, 1, False) == (0, None)
assert w.move_selection(frames, 0, False) == (None, "Unable to find a newer python frame\n")
print("ok")
`

// TestFrameCommandHelpers runs helpersPy against the embedded walker.
func TestFrameCommandHelpers(t *testing.T) {
	runWalkerScript(t, "helpers.py", helpersPy)
}

// runWalkerScript runs a Python script beside the embedded walker's
// modules (PYTHONPATH); it must print "ok" and nothing else.
func runWalkerScript(t *testing.T, name, script string) {
	t.Helper()
	py := testenv.Need(t, "python3")
	dir := walkerDir(t)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, path)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}
