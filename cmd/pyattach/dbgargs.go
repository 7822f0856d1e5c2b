package main

import (
	"fmt"
	"strconv"
	"strings"
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

// parseGDBArgs reads the target from gdb's own command line, the way gdb
// does: -p/--pid, -c/--core, -e/--exec/-se, --args PROGRAM ARGS..., and
// the positional PROGRAM [PID|CORE]. It does not change the arguments.
func parseGDBArgs(args []string, isPID func(string) bool) (dbgTarget, error) {
	var t dbgTarget
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--args" {
			if i+1 >= len(args) {
				return t, fmt.Errorf("gdb --args needs a program")
			}
			t.Program = args[i+1]
			t.Args = args[i+2:]
			t.Launch = true
			break
		}
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
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
		if !gdbOptsWithValue[name] {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return t, fmt.Errorf("gdb option %s needs a value", a)
			}
			i++
			val = args[i]
		}
		switch name {
		case "p", "pid":
			pid, err := strconv.Atoi(val)
			if err != nil || pid <= 0 {
				return t, fmt.Errorf("gdb %s %q: not a process id", a, val)
			}
			t.PID = pid
		case "c", "core":
			// gdb -c also takes a PID.
			if isPID(val) {
				t.PID, _ = strconv.Atoi(val)
			} else {
				t.Core = val
			}
		case "e", "exec", "se":
			t.Program = val
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
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest := args[i+1:]
			if t.Program == "" && len(rest) > 0 {
				t.Program, rest = rest[0], rest[1:]
			}
			t.Args = rest
			break
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
		if !lldbOptsWithValue[name] {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return t, fmt.Errorf("lldb option %s needs a value", a)
			}
			i++
			val = args[i]
		}
		switch name {
		case "p", "attach-pid":
			pid, err := strconv.Atoi(val)
			if err != nil || pid <= 0 {
				return t, fmt.Errorf("lldb %s %q: not a process id", a, val)
			}
			t.PID = pid
		case "c", "core":
			t.Core = val
		case "f", "file":
			t.Program = val
		}
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
