package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// callbackApp calls a C function (sorted) that calls back into Python
// (key), which holds still in inner: C frames between two runs of
// Python frames.
const callbackApp = `import sys, time

def inner():
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(600)

def key(x):
    inner()
    return x

def outer():
    return sorted([2, 1], key=key)

outer()
`

// TestBtPythonFrames: in pyattach gdb, bt shows each eval loop frame as
// the Python frames it runs, in order around the C frames of sorted
// (list_sort where symbols name it), with the interpreter's calling
// machinery folded away; "set pyattach-bt-filter off" (and "disable
// frame-filter") gives gdb's own bt, with _PyEval_EvalFrameDefault;
// "bt full" (with a Python frame's locals) and "frame N" still work. Debian's 3.11 with its DWARF
// (python3.11-dbg), stripped copies of it and of pyenv's 3.12 (no
// symbols but the dynamic ones), and pyenv's 3.10 and 3.13.
func TestBtPythonFrames(t *testing.T) {
	testenv.Need(t, "gdb")
	type target struct {
		name     string
		py       testenv.Python
		stripped bool
		// full: "bt full" is run. gdb 13 sometimes fails an internal
		// check (value.c: "Unexpected lazy value type") printing the
		// locals of pyenv's builds' eval loop callers, with or without
		// a frame filter.
		full bool
	}
	targets := []target{
		{"debian-3.11", testenv.Debian(t), false, true},
		{"debian-3.11-stripped", testenv.Debian(t), true, true},
		{"pyenv-3.10", testenv.Pyenv(t, "3.10"), false, false},
		{"pyenv-3.12-stripped", testenv.Pyenv(t, "3.12"), true, true},
		{"pyenv-3.13", testenv.Pyenv(t, "3.13"), false, false},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			testenv.Parallel(t)
			exe, env := tg.py.Exe, []string(nil)
			if tg.stripped {
				exe, env = testenv.Stripped(t, tg.py.Exe)
			}
			pid := testenv.StartPython(t, exe, callbackApp, env...)
			args := []string{"--offline", "gdb", "-nx", "-batch", "-p", strconv.Itoa(pid)}
			for _, c := range [][2]string{
				{"on", "bt"},
				{"off", "set pyattach-bt-filter off"}, {"", "bt"},
				{"", "set pyattach-bt-filter on"},
				{"disabled", "disable frame-filter global pyattach-python-frames"}, {"", "bt"},
				{"", "enable frame-filter global pyattach-python-frames"},
				{"full", "bt full"},
				{"frame", "frame 1"},
			} {
				if c[0] == "full" && !tg.full {
					continue
				}
				if c[0] != "" {
					args = append(args, "-ex", `echo @@`+c[0]+`\n`)
				}
				args = append(args, "-ex", c[1])
			}
			args = append(args, "-ex", `echo @@end\n`)
			out := mustRunIn(t, "pyattach gdb bt", "", homeEnv(t), pyattachBin(t), args...)
			s := sections(out)
			checkBtPython(t, "bt", s["on"], !tg.stripped) // a stripped copy has no name for list_sort
			if tg.full {
				checkBtPython(t, "bt full", s["full"], false)
				// A Python frame's locals, as py-locals prints them.
				full := strings.Join(s["full"], "\n")
				if !regexp.MustCompile(`\[Python\] key \(\) at .*\n\s+x = [12]\n`).MatchString(full) {
					t.Errorf("bt full lacks key's local x under its frame:\n%s", full)
				}
			}
			for _, sec := range []string{"off", "disabled"} {
				text := strings.Join(s[sec], "\n")
				if strings.Contains(text, "[Python]") || !strings.Contains(text, "_PyEval_EvalFrameDefault") {
					t.Errorf("bt with the filter %s shows Python frames, or no _PyEval_EvalFrameDefault:\n%s", sec, text)
				}
			}
			if f := strings.Join(s["frame"], "\n"); !strings.HasPrefix(f, "#1 ") {
				t.Errorf("frame 1 does not select frame 1:\n%s", f)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// sections splits a gdb session's output at its "@@NAME" lines.
func sections(out string) map[string][]string {
	res := map[string][]string{}
	cur := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "@@") {
			cur = l[2:]
			continue
		}
		if cur != "" {
			res[cur] = append(res[cur], l)
		}
	}
	return res
}

var (
	btLevel  = regexp.MustCompile(`^#\d+ `)
	btFrame  = regexp.MustCompile(`^\s*#\d+ `)
	btPython = regexp.MustCompile(`\[Python\] (\S+) \(\) at (\S+):(\d+)$`)
)

// checkBtPython: lines hold callbackApp's Python frames in order, inner
// (line 6) and key (9) first, then a C frame (list_sort by name when
// named is set), then outer (13) and <module> (15); no
// _PyEval_EvalFrameDefault, and no helper frame (PyObject_Vectorcall)
// right before a Python frame at the left margin.
func checkBtPython(t *testing.T, what string, lines []string, named bool) {
	t.Helper()
	want := []string{"inner:6", "key:9", "C", "outer:13", "<module>:15"}
	var got []string
	for _, l := range lines {
		if m := btPython.FindStringSubmatch(l); m != nil {
			if filepath.Base(m[2]) != "app.py" {
				t.Errorf("%s: a Python frame of %s: %q", what, m[2], l)
			}
			got = append(got, m[1]+":"+m[3])
			continue
		}
		if btFrame.MatchString(l) && strings.Contains(l, " _PyEval_EvalFrameDefault ") {
			t.Errorf("%s: an eval loop frame is left: %q", what, l)
		}
		if btLevel.MatchString(l) && len(got) == 2 && (!named || strings.Contains(l, " list_sort")) {
			got = append(got, "C")
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: Python and C frames are %v, want %v", what, got, want)
	}
}

// TestLLDBBtPythonFrames: in pyattach lldb, bt and thread backtrace
// all (through the frame-format pyattach sets) show under each eval
// loop frame the Python frames it runs, in order around the C frames of
// sorted (list_sort where symbols name it), the eval loop frame itself
// terse (module`function, no arguments, no file); "pyattach-bt-filter
// off" and "settings clear frame-format" give lldb's own bt, and "on"
// brings the Python frames back. Debian's 3.11 with its DWARF
// (python3.11-dbg), a stripped copy of it and of pyenv's 3.12 (no
// symbols but the dynamic ones), and pyenv's 3.10 and 3.13.
func TestLLDBBtPythonFrames(t *testing.T) {
	testenv.Need(t, "lldb")
	targets := []struct {
		name     string
		py       testenv.Python
		stripped bool
	}{
		{"debian-3.11", testenv.Debian(t), false},
		{"debian-3.11-stripped", testenv.Debian(t), true},
		{"pyenv-3.10", testenv.Pyenv(t, "3.10"), false},
		{"pyenv-3.12-stripped", testenv.Pyenv(t, "3.12"), true},
		{"pyenv-3.13", testenv.Pyenv(t, "3.13"), false},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			testenv.Parallel(t)
			exe, env := tg.py.Exe, []string(nil)
			if tg.stripped {
				exe, env = testenv.Stripped(t, tg.py.Exe)
			}
			pid := testenv.StartPython(t, exe, callbackApp, env...)
			args := []string{"--offline", "lldb", "-b", "-p", strconv.Itoa(pid)}
			for _, c := range [][2]string{
				{"on", "bt"},
				{"all", "thread backtrace all"},
				{"off", "pyattach-bt-filter off"}, {"", "bt"},
				{"again", "pyattach-bt-filter on"}, {"", "bt"},
				{"cleared", "settings clear frame-format"}, {"", "bt"},
			} {
				if c[0] != "" {
					args = append(args, "-o", "script print('@@"+c[0]+"')")
				}
				args = append(args, "-o", c[1])
			}
			args = append(args, "-o", "script print('@@end')")
			out := mustRunIn(t, "pyattach lldb bt", "", homeEnv(t), pyattachBin(t), args...)
			s := sections(out)
			named := !tg.stripped // a stripped copy has no name for list_sort
			checkLLDBBtPython(t, "bt", s["on"], named)
			checkLLDBBtPython(t, "thread backtrace all", s["all"], named)
			checkLLDBBtPython(t, "bt after pyattach-bt-filter on", s["again"], named)
			for _, sec := range []string{"off", "cleared"} {
				text := strings.Join(s[sec], "\n")
				if strings.Contains(text, "[Python]") || !strings.Contains(text, "_PyEval_EvalFrameDefault") {
					t.Errorf("bt with the filter %s shows Python frames, or no _PyEval_EvalFrameDefault:\n%s", sec, text)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

var (
	lldbFrame    = regexp.MustCompile("^\\s*[* ] frame #\\d+: ")
	lldbEvalLine = regexp.MustCompile("^\\s*[* ] frame #\\d+: 0x[0-9a-f]+ \\S+`_PyEval_EvalFrameDefault$")
)

// checkLLDBBtPython: lines (lldb's bt) hold callbackApp's Python frames
// (btPython) in order, inner (line 6) and key (9) first, then a C frame
// (list_sort by name when named is set), then outer (13) and <module>
// (15); each right under a terse eval loop frame line or another
// Python frame.
func checkLLDBBtPython(t *testing.T, what string, lines []string, named bool) {
	t.Helper()
	want := []string{"inner:6", "key:9", "C", "outer:13", "<module>:15"}
	var got []string
	prev := ""
	for _, l := range lines {
		if m := btPython.FindStringSubmatch(l); m != nil {
			if filepath.Base(m[2]) != "app.py" {
				t.Errorf("%s: a Python frame of %s: %q", what, m[2], l)
			}
			if !lldbEvalLine.MatchString(prev) && !btPython.MatchString(prev) {
				t.Errorf("%s: Python frame %q follows %q, not a terse eval loop frame", what, l, prev)
			}
			got = append(got, m[1]+":"+m[3])
		} else if lldbFrame.MatchString(l) && len(got) == 2 && (!named || strings.Contains(l, "`list_sort")) {
			got = append(got, "C")
		}
		prev = l
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: Python and C frames are %v, want %v", what, got, want)
	}
}

// hostileNameApp holds still in a function whose name (and qualified
// name) holds a line break and a terminal escape: a line printed raw
// would fake a frame and recolour the terminal.
const hostileNameApp = `import sys, time
def f():
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(600)
name = "evil\n    frame #9: fake\x1b[31m"
f.__code__ = f.__code__.replace(co_name=name, co_qualname=name)
f()
`

// TestLLDBBtEscapesNames: the Python frames lldb's bt shows print the
// target's names escaped, as py-bt does.
func TestLLDBBtEscapesNames(t *testing.T) {
	testenv.Need(t, "lldb")
	pid := testenv.StartPython(t, testenv.Debian(t).Exe, hostileNameApp)
	out := mustRunIn(t, "pyattach lldb bt", "", homeEnv(t), pyattachBin(t), "--offline", "lldb", "-b", "-p", strconv.Itoa(pid), "-o", "bt")
	want := `[Python] evil\n    frame #9: fake\x1b[31m () at `
	if !strings.Contains(out, want) || strings.Contains(out, "\x1b[31m") || strings.Contains(out, "\n    frame #9: fake") {
		t.Errorf("bt: want the name escaped (%q), no raw line break or escape:\n%s", want, out)
	}
}
