package gdbgen

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/plan/pyquote"
)

// Dump returns the script `pyattach dump` runs in gdb for d: the Early
// part (-ix) holds gdb's settings, the Late part (-x) sets the walker up
// and writes every thread's stacks to d.Output. Without d.Native gdb
// reads no debug information: it must also be started with -readnever,
// which has no setting. With d.Native, that plan's program, sysroot and
// auto-load settings come first, as `pyattach gdb` would write them,
// without its debug files and extension: gdb loads every shared library to
// unwind through its .eh_frame (which -readnever would drop), but no
// separate debug file. It fails, naming the path, when a path cannot
// reach gdb exactly.
func Dump(d plan.Dump) (Script, error) {
	var g gen
	head := header(plan.Plan{Target: d.Target})
	if d.Native != nil {
		// gdb unwinds through .eh_frame and names what its symbol tables
		// name; pyattach names the rest and adds file and line without
		// gdb (cmd/internal/dump), so gdb reads no separate debug file.
		p := *d.Native
		p.Walker = nil // set up below, with _PyRuntime's address
		p.DebugDirs, p.SymbolFiles, p.SourceMap = nil, nil, nil
		p.GDBExtension, p.GDBAutoLoad, p.LLDBExtension = "", nil, ""
		p.Debuginfod = plan.Debuginfod{}
		p.Fast, p.FastLibs, p.NoDWARF = false, nil, false
		var err error
		if g, err = build(p, false); err != nil {
			return Script{}, err
		}
		head = header(p)
		g.early = append([]block{{
			"Native frames without separate debug files (pyattach names the frames) and no auto-loaded\n" +
				"scripts; gdb unwinds every shared library through .eh_frame.",
			[]string{"set auto-load off", "set debug-file-directory"},
		}}, g.early...)
	} else {
		g.early = append(g.early, block{
			"No debug information (with gdb -readnever): no separate debug files, no debuginfod, no shared\n" +
				"library's symbols (libc's minimal symbols only, for thread debugging), no auto-loaded scripts.",
			[]string{"set auto-load off", "set debug-file-directory", "set debuginfod enabled off", "set auto-solib-add off"},
		})
	}
	g.early = append(g.early, block{"Batch output: no pager.", []string{"set pagination off"}})
	lines, err := dumpBlock(d)
	if err != nil {
		return Script{}, err
	}
	g.late = append(g.late, block{
		"pyattach's walker, told where _PyRuntime is, writes every thread's stacks as JSON.",
		lines,
	})
	return Script{
		Early: head + "#\n# Early part: load with gdb -ix, before gdb loads the program.\n" + join(g.early),
		Late:  head + "#\n# Late part: load with gdb -x, after gdb has loaded the program.\n" + join(g.late),
	}, nil
}

// dumpBlock imports the walker, sets it up and runs its dump.
func dumpBlock(d plan.Dump) ([]string, error) {
	w := d.Walker
	if err := checkPy("walker directory", w.Dir, false); err != nil {
		return nil, err
	}
	if w.Root != "" {
		if err := checkPy("walker root", w.Root, false); err != nil {
			return nil, err
		}
	}
	if err := checkPy("dump output", d.Output, false); err != nil {
		return nil, err
	}
	for _, v := range []struct{ what, s string }{{"walker version", w.Version}, {"walker flags", w.ABIFlags}} {
		if !utf8.ValidString(v.s) {
			return nil, &PathError{v.what, v.s, "not valid UTF-8"}
		}
	}
	return []string{
		"python",
		"import sys",
		"sys.path.insert(0, " + pyquote.String(w.Dir) + ")",
		"import pyattach_gdb",
		"pyattach_gdb.setup(version=" + pyquote.String(w.Version) + ", flags=" + pyquote.String(w.ABIFlags) +
			", root=" + pyquote.String(w.Root) + ", runtime=0x" + strconv.FormatUint(d.Runtime, 16) + w.Creds.PyArg() + ")",
		"pyattach_gdb.dump(" + pyquote.String(d.Output) + ", native=" + pyquote.Bool(d.Native != nil) +
			", source=" + pyquote.Bool(d.Source) + ", max_frames=" + strconv.FormatUint(uint64(d.MaxFrames), 10) +
			", max_reads=" + strconv.FormatUint(uint64(d.MaxReads), 10) +
			", timeout=" + strconv.FormatFloat(d.Timeout.Seconds(), 'g', -1, 64) + localsArg(d.Locals) + tasksArg(d) + kernelArg(d.Syscalls) + evalArg(d) + ")",
		"end",
	}, nil
}

// tasksArg is dump's tasks arguments: none unless asked for.
func tasksArg(d plan.Dump) string {
	if !d.Tasks {
		return ""
	}
	return ", tasks=True, asyncio_debug=0x" + strconv.FormatUint(d.Asyncio, 16) + ", max_tasks=" + strconv.FormatUint(uint64(d.MaxTasks), 10)
}

// kernelArg is dump's kernel argument for a core: {tid: (nr, arg)} as
// walk.kernel_view gives it for a live thread ((None, None) out of a
// system call, arg None when unknown); none without Syscalls.
func kernelArg(m map[int]plan.Syscall) string {
	if m == nil {
		return ""
	}
	tids := make([]int, 0, len(m))
	for tid := range m {
		tids = append(tids, tid)
	}
	sort.Ints(tids)
	var b strings.Builder
	b.WriteString(", kernel={")
	for i, tid := range tids {
		if i > 0 {
			b.WriteString(", ")
		}
		s := m[tid]
		b.WriteString(strconv.Itoa(tid) + ": ")
		switch {
		case !s.In:
			b.WriteString("(None, None)")
		case s.ArgKnown:
			b.WriteString("(" + strconv.FormatInt(s.Nr, 10) + ", 0x" + strconv.FormatUint(s.Arg, 16) + ")")
		default:
			b.WriteString("(" + strconv.FormatInt(s.Nr, 10) + ", None)")
		}
	}
	b.WriteString("}")
	return b.String()
}

// evalArg is dump's eval_loop argument: none without ranges.
func evalArg(d plan.Dump) string {
	if len(d.EvalLoop) == 0 || d.Native == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(", eval_loop=(")
	for _, r := range d.EvalLoop {
		b.WriteString("(0x" + strconv.FormatUint(r[0], 16) + ", 0x" + strconv.FormatUint(r[1], 16) + "), ")
	}
	b.WriteString(")")
	return b.String()
}

// localsArg is dump's locals argument: none unless asked for.
func localsArg(on bool) string {
	if !on {
		return ""
	}
	return ", locals=True"
}
