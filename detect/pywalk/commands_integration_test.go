package pywalk

import (
	"fmt"
	"math/big"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// localsPy holds still in leaf, called by caller, called by the module,
// with locals of every kind py-locals shows a value for, and two it shows
// as type and address.
const localsPy = `import time

def leaf(n, big, neg, f, s, b, items, d):
    nothing = None
    yes = True
    no = False
    zero = 0
    minus = -1
    g = -0.1
    latin = "h\xe9llo"
    ucs2 = "\u20ac uro"
    ucs4 = "smile \U0001F600"
    long = "x" * 5000
    huge = 7 ** 1183
    t = (1, "two", 3.0, None)
    one = (1,)
    empty = ()
    nested = {"a": {"b": {"c": {"d": 1}}}, "n": [1, (2, 3)]}
    loop = [1, 2]
    loop.append(loop)
    many = list(range(20))
    st = {3, 1, 2}
    fs = frozenset({"x"})
    none_set = set()
    w = Widget("gizmo", 12)
    w2 = Widget(b"x", [None])
    vars(w2)
    sl = Slotted(1, "two")
    half = Slotted(2)
    time.sleep(1000)

class Widget:
    def __init__(self, name, size):
        self.name = name
        self.size = size

class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b=None):
        self.a = a
        if b is not None:
            self.b = b

def caller():
    marker = "caller-local"
    count = 7
    return leaf(42, 2**100, -12345678901234567890, 2.5, "hello", b"by\x00tes'", [1, 2], {"k": 1})

print("ready", flush=True)
caller()
`

// leafLocals is what py-locals prints for leaf; ADDR stands for an
// address.
var leafLocals = []string{
	"n = 42",
	"big = 1267650600228229401496703205376",
	"neg = -12345678901234567890",
	"f = 2.5",
	"s = 'hello'",
	`b = b"by\x00tes'"`,
	"items = [1, 2]",
	"d = {'k': 1}",
	"nothing = None",
	"yes = True",
	"no = False",
	"zero = 0",
	"minus = -1",
	"g = -0.1",
	"latin = 'h\u00e9llo'",
	"ucs2 = '\u20ac uro'",
	"ucs4 = 'smile \U0001F600'",
	"long = '" + strings.Repeat("x", 1023) + "...(truncated)",
	"huge = " + hugeDecimal,
	"t = (1, 'two', 3.0, None)",
	"one = (1,)",
	"empty = ()",
	"nested = {'a': {'b': {'c': <dict object at ADDR>}}, 'n': [1, (2, 3)]}",
	"loop = [1, 2, [...]]",
	"many = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...]",
	"st = {1, 2, 3}",
	"fs = frozenset({'x'})",
	"none_set = set()",
	"w = <Widget(name='gizmo', size=12) at ADDR>",
	"w2 = <Widget(name=b'x', size=[None]) at ADDR>",
	"sl = <Slotted(a=1, b='two') at ADDR>",
	"half = <Slotted(a=2) at ADDR>",
}

// hugeDecimal is 7**1183 (1000 digits), in decimal.
var hugeDecimal = func() string {
	v := big.NewInt(7)
	return v.Exp(v, big.NewInt(1183), nil).String()
}()

// commandScript is the session every debugger runs: each command after a
// line "@@NAME" that names its section of the output.
var commandScript = [][2]string{
	{"locals", "py-locals"},
	{"list", "py-list"},
	{"up", "py-up"},
	{"uplocals", "py-locals"},
	{"uplist", "py-list"},
	{"up2", "py-up"},
	{"top", "py-up"},
	{"down", "py-down"},
	{"down2", "py-down"},
	{"bottom", "py-down"},
	{"downlocals", "py-locals"},
	{"range", "py-list 1, 3"},
}

func gdbCommands() []string {
	// gdb's selected frame is C code (time.sleep) that leaf called: the
	// first py-up selects leaf, as CPython's does.
	out := []string{"-ex", `echo @@bt\n`, "-ex", "py-bt", "-ex", `echo @@first-up\n`, "-ex", "py-up"}
	for _, c := range commandScript {
		out = append(out, "-ex", "echo @@"+c[0]+`\n`, "-ex", c[1])
	}
	return append(out, "-ex", `echo @@end\n`)
}

func lldbCommandArgs(dir string, in interp, extra ...string) []string {
	args := []string{"-b"}
	args = append(args, extra...)
	args = append(args,
		"-o", "command script import "+filepath.Join(dir, "pyattach_lldb.py"),
		"-o", fmt.Sprintf("script pyattach_lldb.setup(version=%q, flags=%q, creds=(0, 0, ()))", in.version, in.flags))
	for _, c := range commandScript {
		args = append(args, "-o", "script print('@@"+c[0]+"')", "-o", c[1])
	}
	return append(args, "-o", "script print('@@end')")
}

// sections splits a session's output at its "@@NAME" lines, leaving out
// the debuggers' echo of commands and their own messages.
func sections(out string) map[string][]string {
	res := map[string][]string{}
	cur := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "@@") {
			cur = l[2:]
			res[cur] = []string{}
			continue
		}
		if cur == "" || cur == "end" || strings.HasPrefix(l, "(lldb) ") || strings.HasPrefix(l, "[Inferior ") {
			continue
		}
		res[cur] = append(res[cur], l)
	}
	return res
}

func lineOf(t *testing.T, src, text string) int {
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, text) && (text != "caller()" || l == text) {
			return i + 1
		}
	}
	t.Fatalf("no %q in the program", text)
	return 0
}

// listing is py-list's output, CPython's format, for lines first..last
// of src with the current line marked.
func listing(src string, first, last, current int) []string {
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	var out []string
	for n := first; n <= last && n <= len(lines); n++ {
		mark := strconv.Itoa(n)
		if n == current {
			mark = ">" + mark
		}
		// Printed escaped: a backslash doubled.
		out = append(out, fmt.Sprintf("%4s    %s", mark, strings.ReplaceAll(lines[n-1], `\`, `\\`)))
	}
	return out
}

// pattern turns an expected line into a regexp: ADDR is any address,
// ANY anything.
func pattern(want string) *regexp.Regexp {
	q := regexp.QuoteMeta(want)
	q = strings.ReplaceAll(q, "ADDR", "0x[0-9a-f]+")
	q = strings.ReplaceAll(q, "ANY", ".*")
	return regexp.MustCompile("^" + q + "$")
}

func matchLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = pattern(want[i]).MatchString(got[i])
	}
	if !ok {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// checkCommands checks a whole session's output against the program.
func checkCommands(t *testing.T, what string, in interp, out string) {
	t.Helper()
	var maj, min int
	fmt.Sscanf(in.version, "%d.%d", &maj, &min)
	header := func(name string) []string {
		if min >= 11 {
			return []string{"Locals for " + name}
		}
		return nil
	}
	// From 3.11 on py-locals goes on, as CPython's, with the callers the
	// same call of the eval loop runs: caller and the module.
	callers := func(from string) []string {
		if min < 11 {
			return nil
		}
		var out []string
		if from == "leaf" {
			out = append(header("caller"), "marker = 'caller-local'", "count = 7")
		}
		return append(out, header("<module>")...)
	}
	sleep := lineOf(t, localsPy, "time.sleep(1000)")
	call := lineOf(t, localsPy, "return leaf(")
	module := lineOf(t, localsPy, "caller()")
	// The frame's line is cut at 1024 characters, inside long's value.
	leafFrame := fmt.Sprintf("#0 Frame ADDR, for file ANY/app.py, line %d, in leaf (", sleep)
	for _, l := range leafLocals {
		if strings.HasPrefix(l, "long = ") {
			break
		}
		leafFrame += strings.Replace(l, " = ", "=", 1) + ", "
	}
	leafFrame += "long='xANY...(truncated)"
	callerFrame := fmt.Sprintf("#1 Frame ADDR, for file ANY/app.py, line %d, in caller (marker='caller-local', count=7)", call)
	src := strings.Split(localsPy, "\n")
	want := map[string][]string{
		"locals":     append(append(header("leaf"), leafLocals...), callers("leaf")...),
		"list":       listing(localsPy, sleep-5, sleep+5, sleep),
		"up":         {callerFrame, "    " + strings.ReplaceAll(strings.TrimSpace(src[call-1]), `\`, `\\`)},
		"uplocals":   append(append(header("caller"), "marker = 'caller-local'", "count = 7"), callers("caller")...),
		"uplist":     listing(localsPy, call-5, call+5, call),
		"up2":        {fmt.Sprintf("#2 Frame ADDR, for file ANY/app.py, line %d, in <module> ()", module), "    caller()"},
		"top":        {"Unable to find an older python frame"},
		"down":       {callerFrame, "    " + strings.ReplaceAll(strings.TrimSpace(src[call-1]), `\`, `\\`)},
		"down2":      {leafFrame, "    time.sleep(1000)"},
		"bottom":     {"Unable to find a newer python frame"},
		"downlocals": append(append(header("leaf"), leafLocals...), callers("leaf")...),
		"range":      listing(localsPy, 1, 3, 0),
	}
	got := sections(out)
	// gdb's py-down from leaf stops, as CPython's does, on the built-in
	// method leaf called (time.sleep) where py-bt shows its line.
	sleepLine := "<built-in method sleep of module object at remote ADDR>"
	for _, l := range got["bt"] {
		if pattern("  " + sleepLine).MatchString(l) {
			want["bottom"] = []string{"#ANY " + sleepLine}
		}
	}
	if first, ok := got["first-up"]; ok {
		matchLines(t, what+": py-up from C code", first, []string{leafFrame, "    time.sleep(1000)"})
	}
	for _, c := range commandScript {
		matchLines(t, what+": "+c[1]+" ("+c[0]+")", got[c[0]], want[c[0]])
	}
	if t.Failed() {
		t.Logf("%s:\n%s", what, out)
	}
}

// localsBlock is the first frame's "name = value" lines of a py-locals
// output (CPython's goes on with the callers in the same eval loop).
func localsBlock(out string) []string {
	var res []string
	started := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Locals for ") {
			if started {
				break
			}
			started = true
			continue
		}
		if strings.Contains(l, " = ") {
			started = true
			res = append(res, l)
		} else if started && len(res) > 0 {
			break
		}
	}
	return res
}

// localsHeaders is the "Locals for NAME" lines of a py-locals output.
func localsHeaders(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "Locals for ") {
			out = append(out, l)
		}
	}
	return out
}

// TestFrameCommandsEveryInterpreter: for every interpreter here,
// unstripped and stripped, live and from a gcore core, in gdb and in
// lldb, py-locals prints leaf's locals with the exact values (None,
// bools, small, big and negative ints, floats, str of each width, bytes,
// a bounded long str; list and dict as type and address), py-list the
// lines around the current one with ">", py-up and py-down move between
// leaf, caller and the module and py-locals and py-list follow them.
// Where CPython's own extension works (unstripped, gdb), its py-locals
// shows the same names and values and its py-list the same lines, and
// py-locals answers with CPython's output; where it cannot read the
// frame (stripped), the walker answers.
func TestFrameCommandsEveryInterpreter(t *testing.T) {
	dir := walkerDebuggers(t)
	for _, in := range interpreters(t) {
		for _, stripped := range []bool{false, true} {
			name := in.name
			exe, env := in.exe, []string(nil)
			if stripped {
				name += "-stripped"
			}
			t.Run(name, func(t *testing.T) {
				testenv.Parallel(t)
				if stripped {
					exe, env = testenv.Stripped(t, in.exe)
				}
				cmd := startSource(t, exe, env, localsPy, testenv.TimeSleep...)
				pid := strconv.Itoa(cmd.Process.Pid)
				out := run(t, nil, "gdb", gdbArgs(dir, in, append([]string{"-p", pid}, gdbCommands()...)...)...)
				checkCommands(t, "gdb", in, out)
				out = run(t, testenv.LLDBEnv(), "lldb", lldbCommandArgs(dir, in, "-p", pid)...)
				checkCommands(t, "lldb", in, out)
				if in.oracle != "" {
					checkOracle(t, dir, in, pid, stripped)
				}

				core, _ := gcore(t, pid)
				cmd.Process.Signal(syscall.SIGKILL)
				// The debuggers find the libraries the core names; the program's
				// PYTHONHOME would break their own Python.
				out = run(t, nil, "gdb", gdbArgs(dir, in, append([]string{exe, core}, gdbCommands()...)...)...)
				checkCommands(t, "gdb core", in, out)
				out = run(t, testenv.LLDBEnv(), "lldb", lldbCommandArgs(dir, in, "-c", core, exe)...)
				checkCommands(t, "lldb core", in, out)
			})
		}
	}
}

// checkOracle compares the walker with CPython's own extension in gdb:
// py-locals is the walker's, whether CPython's can read the frame or not,
// and it shows every value CPython's shows, where the walker's bounds
// (depth, items) allow.
func checkOracle(t *testing.T, dir string, in interp, pid string, stripped bool) {
	t.Helper()
	args := []string{"-p", pid, "-ex", "source " + in.oracle}
	if !stripped {
		// CPython's py-up selects the C frame that runs leaf, where its
		// py-locals and py-list can read it (the walker's would select
		// caller). These run before pyattach claims the commands.
		args = append(args, "-ex", `echo @@cpython-up\n`, "-ex", "py-up",
			"-ex", `echo @@cpython-locals\n`, "-ex", "py-locals")
	}
	args = append(args, "-ex", "python import pyattach_gdb; pyattach_gdb.claim()")
	out := run(t, nil, "gdb", gdbArgs(dir, in, append(args,
		"-ex", `echo @@locals\n`, "-ex", "py-locals",
		"-ex", `echo @@list\n`, "-ex", "py-list",
		"-ex", `echo @@walker-locals\n`, "-ex", "pyattach-locals",
		"-ex", `echo @@walker-list\n`, "-ex", "pyattach-list",
		"-ex", `echo @@end\n`)...)...)
	got := sections(out)
	ours := localsBlock(strings.Join(got["walker-locals"], "\n"))
	matchLines(t, "gdb pyattach-locals", ours, leafLocals)
	answer := localsBlock(strings.Join(got["locals"], "\n"))
	matchLines(t, "gdb with CPython's extension: py-locals", answer, leafLocals)
	if stripped {
		// CPython's cannot read a frame without DWARF: py-list is the
		// walker's.
		matchLines(t, "gdb stripped with CPython's extension: py-list", got["list"], got["walker-list"])
	} else {
		cpython := localsBlock(strings.Join(got["cpython-locals"], "\n"))
		var names, cnames []string
		for i, l := range cpython {
			name, value, _ := strings.Cut(l, " = ")
			cnames = append(cnames, name)
			if i < len(ours) {
				oname, ovalue, _ := strings.Cut(ours[i], " = ")
				names = append(names, oname)
				// The same values, but where CPython's shows an object as
				// type and address ("<float at remote 0x..>", slots) and
				// where the walker's bounds cut what CPython's shows.
				// CPython's reads the first 1000 characters of a str and
				// closes the quote: the walker cuts at 1024 and says so.
				cut := strings.HasSuffix(ovalue, "...(truncated)") && strings.HasPrefix(ovalue, value[:len(value)-1])
				bounded := strings.Contains(ovalue, "...") || strings.Contains(ovalue, " object at 0x")
				if !strings.Contains(value, " at remote 0x") && value != ovalue && !cut && !bounded {
					t.Errorf("gdb: %s = %s, CPython's py-locals: %s", oname, ovalue, value)
				}
			}
		}
		if fmt.Sprint(names) != fmt.Sprint(cnames) {
			t.Errorf("gdb: locals %v, CPython's py-locals %v", names, cnames)
		}
		// The same frames, each under CPython's "Locals for NAME".
		if o, c := localsHeaders(got["walker-locals"]), localsHeaders(got["cpython-locals"]); fmt.Sprint(o) != fmt.Sprint(c) {
			t.Errorf("gdb: pyattach-locals for %q, CPython's py-locals for %q", o, c)
		}
		if !strings.Contains(strings.Join(cpython, "\n"), "items = [1, 2]") {
			t.Errorf("CPython's py-locals did not answer: %q", cpython)
		}
		if strings.Join(got["list"], "\n") != strings.Join(got["walker-list"], "\n") {
			t.Errorf("gdb: pyattach-list\n%s\nCPython's py-list\n%s", strings.Join(got["walker-list"], "\n"), strings.Join(got["list"], "\n"))
		}
	}
	if t.Failed() {
		t.Logf("gdb with CPython's extension:\n%s", out)
	}
}
