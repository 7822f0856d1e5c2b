package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/dump"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestDumpNativeMerged: pyattach dump --native prints one stack per
// thread, innermost first, in which the Python frames stand where their
// eval loop frame stood: the C frames of time.sleep (clock_nanosleep,
// time_sleep) inside inner, the one that called it, and sorted's C
// frames (list_sort) between key and outer. Debian's 3.11 with
// python3.11-dbg (file and line of libpython's frames from its debug
// file), pyenv's 3.10 (DWARF in libpython), and stripped copies of both
// Debian's 3.11 and pyenv's 3.12 (testenv.Stripped: no debug file
// matches them, so dynamic symbols only: exported functions named, no
// file or line, static ones such as list_sort unnamed but in place);
// live, and from a gcore core.
func TestDumpNativeMerged(t *testing.T) {
	testenv.Need(t, "gdb")
	gcore := testenv.Need(t, "gcore")
	type target struct {
		name     string
		py       testenv.Python
		stripped bool
		// lines: libpython's frames have file and line; named: its
		// static functions (time_sleep, list_sort) have names.
		lines, named bool
	}
	targets := []target{
		{"debian-3.11", testenv.Debian(t), false, true, true},
		{"debian-3.11-stripped", testenv.Debian(t), true, false, false},
		{"pyenv-3.10", testenv.Pyenv(t, "3.10"), false, true, true},
		{"pyenv-3.12-stripped", testenv.Pyenv(t, "3.12"), true, false, false},
	}
	env := scriptEnv(t.TempDir())
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			exe, penv := tg.py.Exe, []string(nil)
			if tg.stripped {
				exe, penv = testenv.Stripped(t, tg.py.Exe)
			}
			pid := testenv.StartPython(t, exe, callbackApp, penv...)
			d := dumpJSON(t, env, "--native", strconv.Itoa(pid))
			checkMerged(t, "live", d, tg.lines, tg.named)
			out, _ := pyattachOK(t, "pyattach dump --native", pyattachBin(t), env, "dump", "--native", strconv.Itoa(pid))
			checkMergedText(t, out, tg.named)
			// pyattach's own unwinding (the direct reader) and gdb's give
			// the same C frames, pc for pc, name for name.
			sameNative(t, d, dumpJSON(t, env, "--native", "--reader", "gdb", strconv.Itoa(pid)))

			if tg.name == "debian-3.11" || tg.name == "pyenv-3.12-stripped" {
				core := t.TempDir() + "/core"
				if out, err := exec.Command(gcore, "-o", core, strconv.Itoa(pid)).CombinedOutput(); err != nil {
					t.Fatalf("gcore: %v\n%s", err, out)
				}
				core += "." + strconv.Itoa(pid)
				checkMerged(t, "core", dumpJSON(t, env, "--native", core), tg.lines, tg.named)
				os.Remove(core)
			}
		})
	}
}

// sameNative checks that two --native dumps of one process (the direct
// reader's and gdb's) have the same C frames in every thread.
func sameNative(t *testing.T, direct, gdb dumpOutput) {
	t.Helper()
	frames := func(th dump.Thread) []string {
		var out []string
		if th.Native != nil {
			for _, n := range *th.Native {
				name := "??"
				if n.Function != nil {
					name = *n.Function
				}
				out = append(out, fmt.Sprintf("%#x %s", n.PC, name))
			}
		}
		return out
	}
	if len(direct.Threads) != len(gdb.Threads) || len(direct.Threads) == 0 {
		t.Fatalf("the direct reader saw %d threads, gdb %d", len(direct.Threads), len(gdb.Threads))
	}
	for i, th := range direct.Threads {
		a, b := frames(th), frames(gdb.Threads[i])
		if len(a) == 0 || strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("thread %d: pyattach's C frames differ from gdb's:\n%s\n--- gdb\n%s", th.TID, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	}
}

// sleepRE names the C function time.sleep waits in.
var sleepRE = regexp.MustCompile(`^(__)?(clock_nanosleep|nanosleep|select)`)

// checkMerged checks the main thread's merged stack in dump's JSON.
func checkMerged(t *testing.T, what string, d dumpOutput, lines, named bool) {
	t.Helper()
	var th *dump.Thread
	for i := range d.Threads {
		for _, f := range d.Threads[i].Frames {
			if f.Function == "inner" {
				th = &d.Threads[i]
			}
		}
	}
	if th == nil {
		t.Fatalf("%s: no thread runs inner: %+v", what, d.Threads)
	}
	if th.Stack == nil {
		t.Fatalf("%s: no merged stack (%s); python %+v native %+v", what, th.StackUnmerged, th.Frames, derefNative(th.Native))
	}
	st := *th.Stack
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	at := map[string]int{}
	var pys []string
	for i, f := range st {
		switch f.Kind {
		case "python":
			pys = append(pys, str(f.Function))
			if _, ok := at[str(f.Function)]; !ok {
				at[str(f.Function)] = i
			}
			if f.PC != nil {
				t.Errorf("%s: Python frame %d has a pc", what, i)
			}
		case "native":
			if f.PC == nil {
				t.Errorf("%s: C frame %d has no pc", what, i)
			}
			if f.Function != nil && strings.Contains(*f.Function, "_PyEval_EvalFrameDefault") {
				t.Errorf("%s: the merged stack keeps an eval loop frame at %d", what, i)
			}
		default:
			t.Errorf("%s: frame %d has kind %q", what, i, f.Kind)
		}
	}
	var want []string
	for _, f := range th.Frames {
		want = append(want, f.Function)
	}
	if strings.Join(pys, ",") != strings.Join(want, ",") {
		t.Errorf("%s: Python frames of the stack %v, want frames' %v", what, pys, want)
	}
	inner, key, outer := at["inner"], at["key"], at["outer"]
	if !(0 < inner && inner < key && key < outer) {
		t.Fatalf("%s: inner at %d, key at %d, outer at %d: want C frames first, then inner, key, outer", what, inner, key, outer)
	}
	if st[0].Kind != "native" || !sleepRE.MatchString(str(st[0].Function)) {
		t.Errorf("%s: innermost frame %+v, want the C function time.sleep waits in", what, st[0])
	}
	// The C frames of time.sleep: inner to inner.
	var sleep, sorted *dump.StackFrame
	for i := 0; i < inner; i++ {
		if strings.HasPrefix(str(st[i].Function), "time_sleep") {
			sleep = &st[i]
		}
	}
	// sorted's C frames: between key and outer.
	between := 0
	for i := key + 1; i < outer; i++ {
		if st[i].Kind == "native" {
			between++
		}
		if strings.HasPrefix(str(st[i].Function), "list_sort") {
			sorted = &st[i]
		}
	}
	if between == 0 {
		t.Errorf("%s: no C frame between key and outer", what)
	}
	if named && (sleep == nil || sorted == nil) {
		t.Errorf("%s: time_sleep inner to inner %v, list_sort between key and outer %v: want both", what, sleep != nil, sorted != nil)
	}
	if lines {
		if sleep == nil || !strings.HasSuffix(str(sleep.File), "timemodule.c") || sleep.Line == nil || *sleep.Line <= 0 {
			t.Errorf("%s: time_sleep's frame %+v has no file and line in timemodule.c", what, sleep)
		}
	} else {
		// Exported functions of the stripped libpython: named by the
		// dynamic symbols, with no line table to read.
		found := false
		for _, f := range st {
			if f.Kind == "native" && regexp.MustCompile(`^_?Py`).MatchString(str(f.Function)) {
				found = true
				if f.File != nil || f.Line != nil {
					t.Errorf("%s: %s has file %q and a line in a stripped build", what, str(f.Function), str(f.File))
				}
			}
		}
		if !found {
			t.Errorf("%s: no exported libpython function named", what)
		}
	}
	if t.Failed() {
		for i, f := range st {
			t.Logf("%d %s %s %s:%v", i, f.Kind, str(f.Function), str(f.File), f.Line)
		}
	}
}

// checkMergedText checks the text output: one stack, the C frames of
// time.sleep above inner, no separate native block.
func checkMergedText(t *testing.T, out string, named bool) {
	t.Helper()
	if strings.Contains(out, "Native stack") || strings.Contains(out, "not merged") || !strings.Contains(out, "Stack (most recent call first):") {
		t.Errorf("dump --native text is not one merged stack:\n%s", out)
	}
	i := strings.Index(out, ", in inner\n")
	c := strings.Index(out, "  (C) 0x")
	if i < 0 || c < 0 || c > i {
		t.Errorf("dump --native text: no C frame above inner:\n%s", out)
	}
	if named {
		s := strings.Index(out, " in time_sleep")
		l := strings.Index(out, " in list_sort")
		k := strings.Index(out, ", in key\n")
		o := strings.Index(out, ", in outer\n")
		if !(s >= 0 && s < i && k < l && l < o) {
			t.Errorf("dump --native text: want time_sleep above inner, list_sort between key and outer:\n%s", out)
		}
	}
}

// pythonOnly is dump --native's text as dump's: the merged stacks
// without their C frames, read as tracebacks.
func pythonOnly(out string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(l, "  (C) ") {
			continue
		}
		if l == "Stack (most recent call first):\n" {
			l = "Traceback (most recent call first):\n"
		}
		b.WriteString(l)
	}
	return b.String()
}
