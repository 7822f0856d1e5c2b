package pywalk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// builtinCallsPy runs f from two built-in methods (sorted, then list's
// sort, which calls the key), and f calls id.
const builtinCallsPy = `def f(x):
    id(42)
    return x

def g():
    return sorted([1], key=f)

g()
`

// TestParityPyUpBuiltin: on Debian's 3.11 and 3.11d, stopped at a
// breakpoint in builtin_id (C code f called), the walker's py-up stops
// where CPython's does: on f, then on each built-in method line py-bt
// shows ("<built-in method sort of list object at remote 0x..>", then
// sorted's), with CPython's numbers; py-down comes back the same way,
// down to id's line.
func TestParityPyUpBuiltin(t *testing.T) {
	dir := walkerDebuggers(t)
	eachCPythonOracle(t, func(t *testing.T, in interp) {
		script := filepath.Join(t.TempDir(), "app.py")
		if err := os.WriteFile(script, []byte(builtinCallsPy), 0o644); err != nil {
			t.Fatal(err)
		}
		moves := []string{"up", "up", "up", "down", "down", "down"}
		args := []string{"-ex", "source " + in.oracle, "-ex", "set breakpoint pending yes",
			"-ex", "break builtin_id", "-ex", "run"}
		for i, m := range moves {
			args = append(args, "-ex", "echo @@c"+string(rune('0'+i))+`\n`, "-ex", "py-"+m)
		}
		// The walker's from the same place: gdb's frame 0.
		args = append(args, "-ex", `echo @@frame\n`, "-ex", "frame 0")
		for i, m := range moves {
			args = append(args, "-ex", "echo @@w"+string(rune('0'+i))+`\n`, "-ex", "pyattach-"+m)
		}
		out := run(t, nil, "gdb", gdbArgs(dir, in, append(args, "-ex", `echo @@end\n`, "-ex", "kill",
			"--args", in.exe, "-S", script)...)...)
		got := sections(out)
		for i, m := range moves {
			c, w := got["c"+string(rune('0'+i))], got["w"+string(rune('0'+i))]
			if len(c) == 0 || len(w) == 0 {
				t.Errorf("py-%s #%d: the walker's %q, CPython's %q", m, i+1, w, c)
				continue
			}
			if strings.HasPrefix(c[0], "#") && strings.Contains(c[0], " Frame 0x") {
				// CPython's prints every frame of the eval loop frame it
				// selects, numbered by that C frame; the walker's one,
				// numbered among the Python frames.
				if strings.SplitN(c[0], " ", 2)[1] != strings.SplitN(w[0], " ", 2)[1] {
					t.Errorf("py-%s #%d: the walker's %q, CPython's %q", m, i+1, w, c)
				}
				continue
			}
			if strings.Join(c, "\n") != strings.Join(w, "\n") {
				t.Errorf("py-%s #%d: the walker's %q, CPython's %q", m, i+1, w, c)
			}
		}
		matchLines(t, "the walker's py-up onto sort", got["w1"], []string{"#ANY <built-in method sort of list object at remote ADDR>"})
		matchLines(t, "the walker's py-down onto id", got["w5"], []string{"#ANY <built-in method id of module object at remote ADDR>"})
		if t.Failed() {
			t.Logf("gdb:\n%s", out)
		}
	})
}
