package pywalk

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// parityPy sleeps in time.sleep (a built-in method, METH_O) called by
// leaf, with a local, a global and a builtin to print; the module calls
// leaf through a method-wrapper (list's __repr__, a C slot that calls
// slow_repr, a staticmethod, which has no instance to print).
const parityPy = `import time

G = "glob"

def leaf(n):
    x = 5
    time.sleep(1000)

def caller():
    return leaf(42)

def slow_repr():
    return caller()

class Slow:
    __repr__ = staticmethod(slow_repr)

wrapped = [Slow()].__repr__
print("ready", flush=True)
wrapped()
`

// parityCommands are run by the walker (pyattach-*) and, where its
// extension is loaded, by CPython's (py-*), each after "@@NAME".
func parityCommands(prefix string) []string {
	var out []string
	for _, c := range [][2]string{
		{"bt", "bt"}, {"btfull", "bt-full"},
		{"up", "up"}, {"locals", "locals"},
		{"x", "print x"}, {"G", "print G"}, {"len", "print len"}, {"nope", "print nope"},
	} {
		out = append(out, "-ex", "echo @@"+c[0]+`\n`, "-ex", prefix+c[1])
	}
	return append(out, "-ex", `echo @@end\n`)
}

// parityWant is what the walker prints for parityPy, whichever build it
// reads: ADDR stands for an address, LEVEL for a gdb frame level. wrapper
// says whether the build has a C frame for the method-wrapper's call
// (wrapper_call): an optimised build calls list's __repr__ from it as a
// tail call, and then neither the walker nor CPython's extension has a
// line for it.
func parityWant(t *testing.T, wrapper bool) map[string][]string {
	sleep, call, repr, module := lineOf(t, parityPy, "time.sleep(1000)"), lineOf(t, parityPy, "return leaf("),
		lineOf(t, parityPy, "return caller()"), lineOf(t, parityPy, "wrapped()")
	builtin := "<built-in method sleep of module object at remote ADDR>"
	frame := func(name string, line int, locals string) string {
		return fmt.Sprintf("Frame ADDR, for file ANY/app.py, line %d, in %s (%s)", line, name, locals)
	}
	bt := []string{"Traceback (most recent call first):", "  " + builtin,
		fmt.Sprintf(`  File "ANY/app.py", line %d, in leaf`, sleep), "    time.sleep(1000)",
		fmt.Sprintf(`  File "ANY/app.py", line %d, in caller`, call), "    return leaf(42)",
		fmt.Sprintf(`  File "ANY/app.py", line %d, in slow_repr`, repr), "    return caller()"}
	full := []string{"#LEVEL " + builtin,
		"#LEVEL " + frame("leaf", sleep, "n=42, x=5"), "    time.sleep(1000)",
		"#LEVEL " + frame("caller", call, ""), "    return leaf(42)",
		"#LEVEL " + frame("slow_repr", repr, ""), "    return caller()"}
	if wrapper {
		bt = append(bt, "  "+parityWrapper)
		full = append(full, "#LEVEL "+parityWrapper)
	}
	return map[string][]string{
		"bt":     append(bt, fmt.Sprintf(`  File "ANY/app.py", line %d, in <module>`, module), "    wrapped()"),
		"btfull": append(full, "#LEVEL "+frame("<module>", module, ""), "    wrapped()"),
		"up":     {"#0 " + frame("leaf", sleep, "n=42, x=5"), "    time.sleep(1000)"},
		// py-locals goes on, as CPython's, with the callers the eval loop
		// that runs leaf runs: up to slow_repr, which the wrapper called.
		"locals": {"Locals for leaf", "n = 42", "x = 5", "Locals for caller", "Locals for slow_repr"},
		"x":      {"local 'x' = 5"},
		"G":      {"global 'G' = 'glob'"},
		"len":    {"builtin 'len' = <built-in method len of module object at remote ADDR>"},
		"nope":   {"'nope' not found"},
	}
}

// parityWrapper is the walker's line for parityPy's method-wrapper, as
// CPython's extension prints one whose wp it can read.
const parityWrapper = "<method-wrapper '__repr__' of list object at ADDR>"

func matchParity(t *testing.T, what string, got map[string][]string, wrapper bool) {
	t.Helper()
	for name, want := range parityWant(t, wrapper) {
		for i := range want {
			want[i] = strings.ReplaceAll(want[i], "LEVEL", "ANY")
		}
		matchLines(t, what+": "+name, got[name], want)
	}
}

// cpythonForm is the walker's py-bt or py-bt-full as CPython's extension
// prints it where DWARF has the method-wrapper's wp optimised out
// (Debian's 3.11d): "<optimized out>" in place of its line.
func cpythonForm(lines, theirs []string) []string {
	if !strings.Contains(strings.Join(theirs, "\n"), "<optimized out>") {
		return lines
	}
	wrapper := pattern("ANY" + parityWrapper)
	var out []string
	for _, l := range lines {
		if wrapper.MatchString(l) {
			l = strings.Replace(l, l[strings.Index(l, "<method-wrapper"):], "<optimized out>", 1)
		}
		out = append(out, l)
	}
	return out
}

// TestParityWithCPython: on Debian's 3.11 and 3.11d, whose gdb
// extension reads every frame, the walker's py-bt shows the built-in
// method that leaf called (time.sleep) where CPython's does, its
// py-bt-full is CPython's line for line (the same levels), its py-print
// finds a local, a global and a builtin as CPython's does (a builtin
// as CPython's prints it: "<built-in method len of module object at
// remote 0x..>"), and its first py-up from the C code leaf called
// selects leaf, as CPython's does, where py-locals then shows leaf's
// locals and its callers' up to the eval loop's entry, CPython's lines. The method-wrapper the module calls leaf through is shown
// where the build has its C frame (wrapper_call: Debian's 3.11d, whose
// DWARF has wp optimised out, so that CPython's prints "<optimized out>"
// in its place); an optimised build makes it a tail call, and neither
// shows it. On a stripped copy, with no DWARF to be found, CPython's
// extension cannot read the frames and the walker answers py-bt,
// py-bt-full and py-print with the same lines.
func TestParityWithCPython(t *testing.T) {
	dir := walkerDebuggers(t)
	eachCPythonOracle(t, func(t *testing.T, in interp) {
		cmd := startSource(t, in.exe, nil, parityPy, testenv.TimeSleep...)
		defer cmd.Process.Signal(syscall.SIGKILL)
		pid := strconv.Itoa(cmd.Process.Pid)
		// CPython's commands first: its py-up selects the eval loop
		// frame, where its py-print can read leaf. Then the walker's.
		args := []string{"-p", pid, "-ex", "source " + in.oracle}
		args = append(args, "-ex", `echo @@cbt\n`, "-ex", "py-bt",
			"-ex", `echo @@cbtfull\n`, "-ex", "py-bt-full",
			"-ex", `echo @@cup\n`, "-ex", "py-up",
			"-ex", `echo @@clocals\n`, "-ex", "py-locals",
			"-ex", `echo @@cx\n`, "-ex", "py-print x",
			"-ex", `echo @@cG\n`, "-ex", "py-print G",
			"-ex", `echo @@clen\n`, "-ex", "py-print len",
			"-ex", `echo @@cnope\n`, "-ex", "py-print nope",
			"-ex", `echo @@cframes\n`, "-ex", "bt",
			"-ex", `echo @@frame\n`, "-ex", "frame 0")
		out := run(t, nil, "gdb", gdbArgs(dir, in, append(args, parityCommands("pyattach-")...)...)...)
		got := sections(out)
		wrapper := strings.Contains(strings.Join(got["cframes"], "\n"), " wrapper_call (")
		matchParity(t, "gdb walker", got, wrapper)
		for _, s := range []string{"bt", "btfull"} {
			if ours := cpythonForm(got[s], got["c"+s]); strings.Join(ours, "\n") != strings.Join(got["c"+s], "\n") {
				t.Errorf("gdb: the walker's py-%s\n%s\nCPython's\n%s", s, strings.Join(ours, "\n"), strings.Join(got["c"+s], "\n"))
			}
		}
		// CPython's py-up prints every frame of the eval loop frame it
		// selects, numbered by that C frame; the walker's prints one.
		if len(got["cup"]) < 2 || strings.SplitN(got["cup"][0], " ", 2)[1] != strings.SplitN(got["up"][0], " ", 2)[1] || got["cup"][1] != got["up"][1] {
			t.Errorf("gdb: the walker's first py-up %q, CPython's %q", got["up"], got["cup"])
		}
		if strings.Join(got["clocals"], "\n") != strings.Join(got["locals"], "\n") {
			t.Errorf("gdb: the walker's py-locals after py-up %q, CPython's %q", got["locals"], got["clocals"])
		}
		for _, s := range []string{"x", "G", "len", "nope"} {
			ours, theirs := strings.Join(got[s], "\n"), strings.Join(got["c"+s], "\n")
			// The same scope and name; the same value but where CPython's
			// shows an object as its gdb form ("at remote 0x.."), which
			// the walker's builtins are too.
			ohead, oval, _ := strings.Cut(ours, " = ")
			chead, cval, _ := strings.Cut(theirs, " = ")
			if ohead != chead || oval != cval && (s == "len" || !strings.Contains(cval, " at remote 0x")) {
				t.Errorf("gdb: the walker's py-print %s: %q, CPython's %q", s, ours, theirs)
			}
		}
		if t.Failed() {
			t.Logf("gdb:\n%s", out)
		}

		// Stripped, and no debug file found: CPython's extension cannot
		// read the frames, the walker answers py-bt, py-bt-full, py-print.
		exe, env := testenv.Stripped(t, in.exe)
		scmd := startSource(t, exe, env, parityPy, testenv.TimeSleep...)
		defer scmd.Process.Signal(syscall.SIGKILL)
		sargs := []string{"-iex", "set debug-file-directory " + t.TempDir(), "-p", strconv.Itoa(scmd.Process.Pid),
			"-ex", "source " + in.oracle, "-ex", "python import pyattach_gdb; pyattach_gdb.claim()"}
		out = run(t, nil, "gdb", gdbArgs(dir, in, append(sargs, parityCommands("py-")...)...)...)
		matchParity(t, "gdb stripped", sections(out), wrapper)
		if t.Failed() {
			t.Logf("gdb stripped:\n%s", out)
		}
	})
}

// TestParityPyenv: on pyenv's 3.12 and 3.13, unstripped and on a
// stripped copy with no symbol table, the walker alone (no CPython
// extension is loaded) prints parityPy's built-in line, py-bt-full,
// py-print, and the first py-up from C code then py-locals, as on
// Debian's 3.11. Their optimised builds call the method-wrapper's C
// function as a tail call: no line for it.
func TestParityPyenv(t *testing.T) {
	dir := walkerDebuggers(t)
	for _, minor := range []string{"3.12", "3.13"} {
		p := testenv.Pyenv(t, minor)
		in := interp{exe: filepath.Join(p.Prefix, "bin", "python3"), version: p.Version, flags: p.ABIFlags}
		t.Run(p.Version, func(t *testing.T) {
			exe, env := in.exe, []string(nil)
			for _, what := range []string{"gdb", "gdb stripped"} {
				if what == "gdb stripped" {
					exe, env = testenv.Stripped(t, in.exe)
				}
				cmd := startSource(t, exe, env, parityPy, testenv.TimeSleep...)
				defer cmd.Process.Signal(syscall.SIGKILL)
				args := []string{"-iex", "set debug-file-directory " + t.TempDir(), "-p", strconv.Itoa(cmd.Process.Pid)}
				out := run(t, nil, "gdb", gdbArgs(dir, in, append(args, parityCommands("pyattach-")...)...)...)
				matchParity(t, what, sections(out), false)
				if t.Failed() {
					t.Logf("%s:\n%s", what, out)
				}
			}
		})
	}
}

// eachCPythonOracle runs f as a subtest for each of Debian's python3.11
// builds that CPython's own gdb extension reads (the oracle the walker's
// output is compared with); none at all is a missing tool.
func eachCPythonOracle(t *testing.T, f func(t *testing.T, in interp)) {
	found := 0
	for _, in := range interpreters(t) {
		if in.oracle == "" || !strings.HasPrefix(in.name, "system-python3.11") {
			continue
		}
		found++
		t.Run(in.name, func(t *testing.T) { f(t, in) })
	}
	if found == 0 {
		testenv.Missing(t, "Debian's python3.11 and python3.11-dbg with CPython's gdb extension")
	}
}
