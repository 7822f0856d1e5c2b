// Package debuggers holds what pyattach learns about the installed
// debuggers by running them: where lldb's Python package really is. Every
// command goes through a Runner, which carries a deadline in its context,
// so that a hung debugger never holds pyattach.
package debuggers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
)

// Runner runs an external command with env as its whole environment and
// returns its combined output. ctx carries the deadline; the command is
// killed when it passes.
type Runner func(ctx context.Context, env []string, name string, args ...string) (string, error)

// Run is the Runner of the real machine.
func Run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	// A child that keeps the output open (a debugger's inferior) does
	// not hold the caller past its deadline.
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// LLDBPythonDir returns the directory holding lldb's Python package when
// `lldb -P` names one that does not (Debian's lldb 14), else "". run is
// called with ctx, which should carry a deadline.
func LLDBPythonDir(ctx context.Context, run Runner, env []string, lldb string) string {
	if out, err := run(ctx, env, lldb, "-P"); err == nil {
		dir := safetext.Last(out)
		if _, err := os.Stat(filepath.Join(dir, "lldb", "__init__.py")); err == nil {
			return ""
		}
	}
	real, err := filepath.EvalSymlinks(lldb)
	if err != nil {
		return ""
	}
	// /usr/lib/llvm-14/bin/lldb -> /usr/lib/llvm-14/lib/python3*/dist-packages
	root := filepath.Dir(filepath.Dir(real))
	matches, _ := filepath.Glob(filepath.Join(root, "lib", "python3*", "*-packages", "lldb", "__init__.py"))
	if len(matches) == 0 {
		return ""
	}
	return filepath.Dir(filepath.Dir(matches[0]))
}
