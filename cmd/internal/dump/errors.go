package dump

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/pyattach/pyattach/cmd/internal/shquote"
)

// ErrPartial is returned, after the output is written, when the walk
// stopped at its budget: the output is partial.
var ErrPartial = errors.New("dump: the walk stopped at its budget; output is partial")

// Kind says what went wrong, for the command's hint.
type Kind int

const (
	// KindTarget: the argument is neither a PID nor a file.
	KindTarget Kind = iota + 1
	// KindNotCore: the file is not a core.
	KindNotCore
	// KindNotPython: the target runs no CPython.
	KindNotPython
	// KindNoVersion: the interpreter's version is not known.
	KindNoVersion
	// KindCoreFile: a file the core maps is missing (Path).
	KindCoreFile
	// KindCoreChanged: a file the core maps has another build-id now.
	KindCoreChanged
	// KindNoRuntime: the interpreter has no _PyRuntime symbol.
	KindNoRuntime
	// KindWorkDir: the private directory cannot be made or written.
	KindWorkDir
	// KindPlanPath: a path of the plan cannot reach gdb exactly.
	KindPlanPath
	// KindScriptPath: a script's file name cannot reach gdb exactly.
	KindScriptPath
	// KindTimeout: gdb did not finish in time (Timeout) and was stopped.
	KindTimeout
	// KindAttach: gdb could not attach (Tracer: who traces the process).
	KindAttach
	// KindNoStacks: gdb wrote no stacks.
	KindNoStacks
	// KindWalker: the walker could not read the stacks.
	KindWalker
	// KindReader: --reader names no reader, or one that cannot read the
	// target.
	KindReader
)

// Error is a failure of dump, with what the command needs to explain it.
type Error struct {
	Kind Kind
	Err  error
	// PID or Core is the target.
	PID  int
	Core string
	// Path is the file of KindCoreFile.
	Path string
	// Tracer is the process tracing the target ("1234 (strace)"), for
	// KindAttach; "" when none.
	Tracer string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Arg is the target as the command line gives it, shell-quoted.
func (e *Error) Arg() string {
	if e.PID != 0 {
		return strconv.Itoa(e.PID)
	}
	return shquote.Quote(e.Core)
}

// GDBCommand is the `pyattach gdb` command line that prints the same
// stacks with CPython's own extension.
func (e *Error) GDBCommand() string {
	if e.PID != 0 {
		return fmt.Sprintf("pyattach gdb -p %d -batch -ex 'thread apply all py-bt'", e.PID)
	}
	return fmt.Sprintf("pyattach gdb -c %s -batch -ex 'thread apply all py-bt'", shquote.Quote(e.Core))
}
