package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/target"
)

// dbgTarget is what a debugger command line asks the debugger to open.
type dbgTarget struct {
	PID     int
	Core    string
	Program string
	// Args are the program's arguments (gdb --args, lldb --).
	Args []string
	// Launch is true when the program is started by the debugger.
	Launch bool
}

// gdbOptsWithValue lists gdb's options that take a value as the next
// argument (single or double dash; "-x=FILE" forms carry it inline).
var gdbOptsWithValue = map[string]bool{
	"ex": true, "eval-command": true, "iex": true, "init-eval-command": true,
	"x": true, "command": true, "ix": true, "init-command": true,
	"cd": true, "d": true, "directory": true, "s": true, "symbols": true,
	"e": true, "exec": true, "se": true, "c": true, "core": true,
	"p": true, "pid": true, "b": true, "l": true, "D": true, "data-directory": true,
	"tty": true, "t": true, "i": true, "interpreter": true,
}

// optVal is an option of a debugger's command line and its value.
type optVal struct{ name, flag, val string }

// scanArgs walks a debugger's command line: the options named in
// withValue are returned with their values (next word, or after "="),
// other words that are not options in pos; at the first of the stops
// words, the rest of the line is returned as tail.
func scanArgs(tool string, args []string, withValue map[string]bool, stops ...string) (opts []optVal, pos []string, stop string, tail []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		for _, s := range stops {
			if a == s {
				return opts, pos, s, args[i+1:], nil
			}
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		val, inline := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, val, inline = k, v, true
		}
		if !withValue[name] {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return nil, nil, "", nil, fmt.Errorf("%s option %s needs a value", tool, a)
			}
			i++
			val = args[i]
		}
		opts = append(opts, optVal{name: name, flag: a, val: val})
	}
	return opts, pos, "", nil, nil
}

// parsePID is target.ParsePID for the value of the debugger's flag.
func parsePID(tool, flag, val string) (int, error) {
	pid, err := target.ParsePID(val)
	if err != nil {
		return 0, fmt.Errorf("%s %s %q: not a process id", tool, flag, val)
	}
	return pid, nil
}

// parseGDBArgs reads the target from gdb's own command line, the way gdb
// does: -p/--pid, -c/--core, -e/--exec/-se, --args PROGRAM ARGS..., and
// the positional PROGRAM [PID|CORE]. It does not change the arguments.
func parseGDBArgs(args []string, isPID func(string) bool) (dbgTarget, error) {
	var t dbgTarget
	opts, pos, stop, tail, err := scanArgs("gdb", args, gdbOptsWithValue, "--args", "--")
	if err != nil {
		return t, err
	}
	switch stop {
	case "--args":
		if len(tail) == 0 {
			return t, fmt.Errorf("gdb --args needs a program")
		}
		t.Program, t.Args, t.Launch = tail[0], tail[1:], true
	case "--":
		pos = append(pos, tail...)
	}
	for _, o := range opts {
		switch o.name {
		case "p", "pid":
			if t.PID, err = parsePID("gdb", o.flag, o.val); err != nil {
				return t, err
			}
		case "c", "core":
			// gdb -c also takes a PID.
			if isPID(o.val) {
				t.PID, _ = strconv.Atoi(o.val)
			} else {
				t.Core = o.val
			}
		case "e", "exec", "se":
			if t.Program == "" {
				t.Program = o.val
			}
		}
	}
	if len(pos) > 0 && t.Program == "" {
		t.Program = pos[0]
	}
	if len(pos) > 1 {
		if isPID(pos[1]) {
			t.PID, _ = strconv.Atoi(pos[1])
		} else {
			t.Core = pos[1]
		}
	}
	if t.Program != "" && t.PID == 0 && t.Core == "" {
		t.Launch = true
	}
	return t, nil
}

// lldbOptsWithValue lists lldb's options that take a value.
var lldbOptsWithValue = map[string]bool{
	"p": true, "attach-pid": true, "n": true, "attach-name": true,
	"c": true, "core": true, "f": true, "file": true,
	"a": true, "arch": true, "l": true, "script-language": true,
	"o": true, "one-line": true, "O": true, "one-line-before-file": true,
	"s": true, "source": true, "S": true, "source-before-file": true,
	"k": true, "one-line-on-crash": true, "K": true, "source-on-crash": true,
	"r": true, "repl-language": true, "R": true, "repl": false,
}

// parseLLDBArgs reads the target from lldb's command line: -p /
// --attach-pid, -c/--core, -f/--file, a program path, and
// -- PROGRAM ARGS...
func parseLLDBArgs(args []string) (dbgTarget, error) {
	var t dbgTarget
	opts, pos, stop, tail, err := scanArgs("lldb", args, lldbOptsWithValue, "--")
	if err != nil {
		return t, err
	}
	for _, o := range opts {
		switch o.name {
		case "p", "attach-pid":
			if t.PID, err = parsePID("lldb", o.flag, o.val); err != nil {
				return t, err
			}
		case "c", "core":
			t.Core = o.val
		case "f", "file":
			t.Program = o.val
		}
	}
	if stop == "--" {
		if t.Program == "" && len(tail) > 0 {
			t.Program, tail = tail[0], tail[1:]
		}
		t.Args = tail
	}
	if len(pos) > 0 && t.Program == "" {
		t.Program = pos[0]
		if len(pos) > 1 && t.Args == nil {
			t.Args = pos[1:]
		}
	}
	if t.Program != "" && t.PID == 0 && t.Core == "" {
		t.Launch = true
	}
	return t, nil
}

// LLDBArgError is a value on lldb's command line that lldb 14's driver
// would not hand over exactly: it pastes the program (-f or the first
// word after --), the core (-c), the process name (-n) and the program's
// arguments into commands of its own ("target create", "settings set --
// target.run-args"), quoted only by a backslash before `"` and `\`.
type LLDBArgError struct {
	What   string // "program", "core file", "process name", "program argument 2"
	Value  string
	Reason string
}

func (e *LLDBArgError) Error() string {
	return fmt.Sprintf("lldb %s %q: %s", e.What, e.Value, e.Reason)
}

// checkLLDBArgs refuses what lldb 14's driver would run as a command,
// evaluate, or change before the program sees it (each case seen with
// lldb 14.0.6). Everything else reaches lldb byte for byte.
func checkLLDBArgs(args []string) error {
	t, err := parseLLDBArgs(args)
	if err != nil {
		return err
	}
	opts, _, _, _, err := scanArgs("lldb", args, lldbOptsWithValue, "--")
	if err != nil {
		return err
	}
	for _, o := range opts {
		switch o.name {
		case "c", "core":
			if r := lldbCommandWordProblem(o.val); r != "" {
				return &LLDBArgError{"core file", o.val, r}
			}
		case "n", "attach-name":
			if r := lldbCommandWordProblem(o.val); r != "" {
				return &LLDBArgError{"process name", o.val, r}
			}
		}
	}
	if t.Program != "" {
		r := lldbCommandWordProblem(t.Program)
		if r == "" && strings.HasPrefix(t.Program, "-") {
			r = "starts with '-', which lldb's \"target create\" reads as an option; write it as ./" + t.Program
		}
		if r != "" {
			return &LLDBArgError{"program", t.Program, r}
		}
	}
	for i, a := range t.Args {
		if r := lldbRunArgProblem(a); r != "" {
			return &LLDBArgError{fmt.Sprintf("program argument %d", i+1), a, r}
		}
	}
	return nil
}

// lldbCommandWordProblem says why s cannot be one double-quoted word of
// a command that lldb's driver writes, or "".
func lldbCommandWordProblem(s string) string {
	switch {
	case strings.ContainsAny(s, "\n\r"):
		return "holds a line break: lldb's driver would run the rest as a separate lldb command"
	case strings.Contains(s, "`"):
		return "holds a backtick: lldb evaluates text between backticks as an expression"
	}
	return ""
}

// lldbRunArgProblem says why lldb 14 would not pass s to the program
// exactly as one argument, or "". lldb splits target.run-args a second
// time: it drops an empty argument, strips blanks around a non-blank one
// and takes a leading quote as quoting.
func lldbRunArgProblem(s string) string {
	if r := lldbCommandWordProblem(s); r != "" {
		return r
	}
	switch {
	case s == "":
		return "is empty: lldb 14 drops it"
	case strings.TrimLeft(s, " \t\v\f") != s || strings.TrimRight(s, " \t\v\f") != s:
		return "starts or ends with a blank: lldb 14 strips it"
	case s[0] == '"' || s[0] == '\'':
		return "starts with a quote: lldb 14 takes it as quoting and removes it"
	}
	return ""
}
