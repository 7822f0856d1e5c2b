package pywalk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// wrapperCallPy calls list's __init__ through super(): a method-wrapper,
// whose call runs wrapper_call.
const wrapperCallPy = `class MyList(list):
    def __init__(self):
        super(*[]).__init__()

id("first break point")
l = MyList()
`

// TestParityWrapperCallBreakpoint: on Debian's 3.11d (its wrapper_call
// has DWARF for wp), stopped at a breakpoint in wrapper_call, the
// walker's py-bt shows the method-wrapper it runs ("<method-wrapper
// '__init__' of MyList object at 0x..>") above the Python frame that
// called it, and is CPython's py-bt line for line.
func TestParityWrapperCallBreakpoint(t *testing.T) {
	dir := walkerDebuggers(t)
	found := 0
	for _, in := range interpreters(t) {
		if in.oracle == "" || in.name != "system-python3.11d" {
			continue
		}
		found++
		t.Run(in.name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "app.py")
			if err := os.WriteFile(script, []byte(wrapperCallPy), 0o644); err != nil {
				t.Fatal(err)
			}
			out := run(t, nil, "gdb", gdbArgs(dir, in, "-ex", "source "+in.oracle,
				"-ex", "set breakpoint pending yes", "-ex", "break builtin_id", "-ex", "run",
				"-ex", "break wrapper_call", "-ex", "continue",
				"-ex", `echo @@c\n`, "-ex", "py-bt",
				"-ex", `echo @@w\n`, "-ex", "pyattach-bt",
				"-ex", `echo @@end\n`, "-ex", "kill",
				"--args", in.exe, "-S", script)...)
			got := sections(out)
			matchLines(t, "gdb walker", got["w"], []string{"Traceback (most recent call first):",
				"  <method-wrapper '__init__' of MyList object at ADDR>",
				`  File "ANY/app.py", line 3, in __init__`, "    super(*[]).__init__()",
				`  File "ANY/app.py", line 6, in <module>`, "    l = MyList()"})
			if strings.Join(got["w"], "\n") != strings.Join(got["c"], "\n") {
				t.Errorf("gdb: the walker's py-bt\n%s\nCPython's\n%s", strings.Join(got["w"], "\n"), strings.Join(got["c"], "\n"))
			}
			if t.Failed() {
				t.Logf("gdb:\n%s", out)
			}
		})
	}
	if found == 0 {
		testenv.Missing(t, "Debian's python3.11d with CPython's gdb extension")
	}
}
