package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/debuggers"
	"github.com/pyattach/pyattach/cmd/internal/doctor"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/lldbgen"
	"github.com/pyattach/pyattach/venv/environ"
)

// GDBCmd is `pyattach [FLAGS] gdb GDB_ARGS...`.
type GDBCmd struct {
	Args []string `arg:"" optional:"" help:"gdb's own command line, passed through unchanged."`
}

// LLDBCmd is `pyattach [FLAGS] lldb LLDB_ARGS...`.
type LLDBCmd struct {
	Args []string `arg:"" optional:"" help:"lldb's own command line, passed through unchanged."`
}

// scriptPathHint is the fix when the debugger cannot be told the script's
// file name exactly.
const scriptPathHint = "the script's file name cannot be passed to the debugger exactly; set XDG_CACHE_HOME to a plain absolute directory, or write the script elsewhere with --script FILE"

// debuggerPlan is buildPlan for the debugger named name ("gdb", "lldb"),
// whose name leads its error, with target t parsed from the debugger's
// arguments args; a crash bundle's target is unpacked first
// (bundleTarget), and the arguments it rewrites are returned. An
// interrupt before the debugger starts is an error too: the debugger is
// not started then.
func debuggerPlan(name string, t dbgInferior, args []string, g *Globals, app *App, cfg *config.Config) (plan.Plan, []string, error) {
	var p plan.Plan
	t, args, ob, err := bundleTarget(app, t, args)
	if err != nil {
		return p, nil, fmt.Errorf("%s: %w", name, err)
	}
	if ob != nil {
		p, err = bundlePlan(app.Ctx, t, ob, g, app, cfg)
	} else {
		p, _, err = buildPlan(app.Ctx, t, g, app, cfg)
	}
	if err != nil {
		return p, nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, args, app.Ctx.Err()
}

// Run starts gdb with pyattach's script.
func (c *GDBCmd) Run(g *Globals, app *App, cfg *config.Config) error {
	if dapInterpreter(c.Args) {
		return c.runGDBDAP(g, app, cfg)
	}
	t, err := parseGDBArgs(c.Args, target.IsPID)
	if err != nil {
		return withHint(err, "pyattach passes everything after \"gdb\" to gdb; check gdb's own options with: gdb --help")
	}
	p, args, err := debuggerPlan("gdb", t, c.Args, g, app, cfg)
	if err != nil {
		return err
	}
	c.Args = args
	sc, err := gdbgen.Generate(p)
	if err != nil {
		return withHint(fmt.Errorf("gdb: %w", err), "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
	}
	gdb, err := findDebugger(app.Env, "gdb")
	if err != nil {
		return err
	}
	early, late, err := scriptPaths(app.dirs(), g.Script, "gdb", sc.Early, sc.Late)
	if err != nil {
		return err
	}
	// gdb opens -ix and -x files by name as given, after tilde expansion
	// (a "~" after a blank too): refuse a name it would read as another.
	for _, f := range []string{early, late} {
		if f == "" {
			continue
		}
		if _, err := gdbgen.SourceLine(f); err != nil {
			return withHint(fmt.Errorf("gdb: %w", err), scriptPathHint)
		}
	}
	argv := []string{gdb}
	if p.NoDWARF {
		argv = append(argv, "-readnever")
	}
	argv = append(argv, "-ix", early)
	if late != "" {
		argv = append(argv, "-x", late)
	}
	argv = append(argv, c.Args...)
	if g.Print {
		fmt.Fprintf(app.Stdout, "# %s (gdb -ix)\n%s", early, sc.Early)
		if late != "" {
			fmt.Fprintf(app.Stdout, "# %s (gdb -x)\n%s", late, sc.Late)
		}
		fmt.Fprintf(app.Stdout, "# command line\n%s\n", shquote.Join(argv))
		return nil
	}
	return execDebugger(gdb, argv, app.Env)
}

// Run starts lldb with pyattach's script.
func (c *LLDBCmd) Run(g *Globals, app *App, cfg *config.Config) error {
	t, err := parseLLDBArgs(c.Args)
	if err != nil {
		return withHint(err, "pyattach passes everything after \"lldb\" to lldb; check lldb's own options with: lldb --help")
	}
	if err := checkLLDBArgs(c.Args); err != nil {
		return withHint(err, "lldb pastes the program and its arguments into its own commands; start the program yourself and attach with: pyattach lldb -p PID")
	}
	p, args, err := debuggerPlan("lldb", t, c.Args, g, app, cfg)
	if err != nil {
		return err
	}
	c.Args = args
	lldb, err := findDebugger(app.Env, doctor.LLDBNames...)
	if err != nil {
		return err
	}
	pyCtx, cancel := context.WithTimeout(app.Ctx, debuggerProbeTimeout)
	p.LLDBPythonPath = debuggers.LLDBPythonDir(pyCtx, debuggers.Run, app.Env, lldb)
	cancel()
	sc, err := lldbgen.Generate(p)
	if err != nil {
		return withHint(fmt.Errorf("lldb: %w", err), "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
	}
	before, after, err := scriptPaths(app.dirs(), g.Script, "lldb", sc.Before, sc.After)
	if err != nil {
		return err
	}
	// lldb's driver pastes -S/-s file names into a command between single
	// quotes, unescaped; -O/-o carry a command quoted exactly instead.
	// Each script is run quietly (its commands not echoed, its errors
	// shown) through a one-line wrapper file.
	wrapBefore, err := lldbgen.QuietSource(before)
	if err != nil {
		return withHint(fmt.Errorf("lldb: %w", err), scriptPathHint)
	}
	wrapAfter := ""
	if after != "" {
		if wrapAfter, err = lldbgen.QuietSource(after); err != nil {
			return withHint(fmt.Errorf("lldb: %w", err), scriptPathHint)
		}
	}
	qBefore, qAfter, err := scriptPaths(app.dirs(), "", "lldb", wrapBefore, wrapAfter)
	if err != nil {
		return err
	}
	srcBefore, err := lldbgen.QuietSourceCommand(qBefore)
	if err != nil {
		return withHint(fmt.Errorf("lldb: %w", err), scriptPathHint)
	}
	argv := []string{lldb, "-O", srcBefore}
	if after != "" {
		srcAfter, err := lldbgen.QuietSourceCommand(qAfter)
		if err != nil {
			return withHint(fmt.Errorf("lldb: %w", err), scriptPathHint)
		}
		argv = append(argv, "-o", srcAfter)
	}
	argv = append(argv, c.Args...)
	env := lldbgen.Env(p, app.Env)
	server, err := lldbServerFor(p, lldb, app.Env)
	if err != nil {
		return err
	}
	if server != "" {
		env = append(env, lldbServerEnv+"="+server)
	}
	if g.Print {
		fmt.Fprintf(app.Stdout, "# %s (lldb -O)\n%s", before, sc.Before)
		if after != "" {
			fmt.Fprintf(app.Stdout, "# %s (lldb -o)\n%s", after, sc.After)
		}
		fmt.Fprintf(app.Stdout, "# command line\n")
		if p.LLDBPythonPath != "" {
			fmt.Fprintf(app.Stdout, "PYTHONPATH=%s ", shquote.Quote(environ.Env(env).Get("PYTHONPATH")))
		}
		if server != "" {
			fmt.Fprintf(app.Stdout, "%s=%s ", lldbServerEnv, shquote.Quote(server))
		}
		fmt.Fprintf(app.Stdout, "%s\n", shquote.Join(argv))
		return nil
	}
	return execDebugger(lldb, argv, env)
}

// scriptPaths writes the two parts of a script and returns their paths:
// to FILE and FILE.late (or FILE.after) with --script, else into the
// cache, named by the hash of their content. The directory must be one
// only the user (or root) can change, so that nobody can replace a
// script between pyattach writing it and the debugger reading it: the
// cache's is made private (safefs.PrivateDir), --script's is checked.
func scriptPaths(dirs environ.Dirs, script, kind, first, second string) (string, string, error) {
	var p1, p2 string
	suffix := map[string]string{"gdb": ".late", "lldb": ".after"}[kind]
	if script != "" {
		abs, err := filepath.Abs(script)
		if err != nil {
			return "", "", err
		}
		if _, err := safefs.PrivateDir(filepath.Dir(abs)); err != nil {
			return "", "", scriptDirError(script, err)
		}
		p1 = abs
		if second != "" {
			p2 = abs + suffix
		}
	} else {
		dir, err := safefs.PrivateDir(dirs.CacheHome, environ.Name, "scripts")
		if err != nil {
			return "", "", scriptCacheError(err)
		}
		sum := sha256.Sum256([]byte(first + "\x00" + second))
		base := filepath.Join(dir, kind+"-"+hex.EncodeToString(sum[:8]))
		p1 = base + ".early." + kind
		if kind == "lldb" {
			p1 = base + ".before.lldb"
		}
		if second != "" {
			p2 = base + suffix + "." + kind
		}
	}
	for _, f := range []struct{ path, text string }{{p1, first}, {p2, second}} {
		if f.path == "" {
			continue
		}
		if err := safefs.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			err = fmt.Errorf("write %s: %w", f.path, err)
			if script != "" {
				return "", "", scriptDirError(script, err)
			}
			return "", "", scriptCacheError(err)
		}
	}
	return p1, p2, nil
}

// scriptCacheError is the error for a script cache that cannot be made
// or written.
func scriptCacheError(err error) error {
	err = fmt.Errorf("cannot write the script cache: %w", err)
	if errors.Is(err, saferead.ErrUntrusted) {
		return withHint(err, "another user could replace the scripts the debugger runs; remove what they own there, or set XDG_CACHE_HOME to a directory of your own, or pass --script FILE in a directory only you can write")
	}
	return withHint(err, "set XDG_CACHE_HOME to a writable directory of your own (export XDG_CACHE_HOME=$(mktemp -d)), or pass --script FILE to write the script elsewhere")
}

// scriptDirError is the error for a --script FILE that cannot be
// written safely.
func scriptDirError(script string, err error) error {
	err = fmt.Errorf("--script %s: %w", script, err)
	if errors.Is(err, saferead.ErrUntrusted) {
		return withHint(err, "another user could replace the script before the debugger reads it; give --script a file in a directory only you (or root) can write, or leave --script out to use pyattach's private cache")
	}
	return withHint(err, "give --script a file in a directory you can write, or leave --script out to use pyattach's cache")
}

// writeFileAtomic writes data to name (making its directory, 0755, when
// missing) with safefs.WriteFile, so that name is never half-written.
func writeFileAtomic(name string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	if err := safefs.WriteFile(name, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// execDebugger replaces pyattach with the debugger, so that the terminal,
// signals and the exit code are the debugger's own. pyattach's handling
// of SIGINT and SIGTERM is undone first: the debugger starts with the
// dispositions pyattach was started with (an ignored SIGINT, as a shell
// gives a background job, stays ignored).
func execDebugger(path string, argv, env []string) error {
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	// The mask of the thread that calls execve is the debugger's; once
	// os/signal has handled these signals, Go may leave them blocked on
	// it (seen with Go 1.26), and gdb would then never see a Ctrl-C.
	runtime.LockOSThread()
	unblockSignals(syscall.SIGINT, syscall.SIGTERM)
	err := syscall.Exec(path, argv, env)
	return fmt.Errorf("start %s: %w", path, err)
}

// debuggerProbeTimeout bounds `lldb -P`, run before lldb starts.
const debuggerProbeTimeout = 10 * time.Second
