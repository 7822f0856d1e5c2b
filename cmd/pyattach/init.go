package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/initfiles"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/lldbgen"
)

// InitCmd is `pyattach init`.
type InitCmd struct {
	Dir    string `arg:"" optional:"" type:"path" help:"The project directory (default: the current one)."`
	GDB    bool   `name:"gdb" help:"Write DIR/.gdbinit (the default when no kind is chosen)."`
	LLDB   bool   `name:"lldb" help:"Write DIR/.lldbinit."`
	VSCode bool   `name:"vscode" help:"Add attach configurations (cppdbg, CodeLLDB, and the LLDB DAP extension running pyattach lldb-dap or pyattach gdb -i=dap) to DIR/.vscode/launch.json, keeping its other entries and comments."`
	Python string `help:"The project's interpreter (default: DIR/.venv/bin/python or DIR/venv/bin/python)." placeholder:"PATH"`
	Trust  bool   `help:"Add the one line that lets gdb load DIR/.gdbinit to your gdb init file (~/.config/gdb/gdbinit, or ~/.gdbinit when gdb reads that); with --lldb, the line that makes lldb read DIR/.lldbinit when it starts in DIR to ~/.lldbinit."`
}

// Run writes the files.
func (c *InitCmd) Run(g *Globals, app *App, cfg *config.Config) error {
	dir := c.Dir
	if dir == "" {
		dir = app.Cwd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := checkProjectDir(dir); err != nil {
		return err
	}
	if !c.GDB && !c.LLDB && !c.VSCode {
		c.GDB = true
	}
	python := c.Python
	if python == "" {
		for _, v := range []string{".venv", "venv"} {
			p := filepath.Join(dir, v, "bin", "python")
			if _, err := os.Stat(p); err == nil {
				python = p
				break
			}
		}
	}
	if python == "" {
		return withHint(fmt.Errorf("init %s: no .venv/bin/python or venv/bin/python there", dir),
			"name the interpreter: pyattach init --python PATH %s", shquote.Quote(dir))
	}
	// The files are read by a debugger that is given a process, core or
	// program later, of whatever interpreter: they hold only what does not
	// depend on one (the plan of a debugger started without a target).
	// The .gdbinit then runs pyattach for each target gdb loads; lldb's
	// walker reads the version from memory.
	p, _, err := buildPlan(app.Ctx, dbgInferior{}, g, app, cfg)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	p.Target = "any process, core or program the debugger loads in " + dir
	gdbinit := filepath.Join(dir, ".gdbinit")
	lldbinit := filepath.Join(dir, ".lldbinit")

	// Everything is worked out before anything is written: a name that
	// cannot be written exactly refuses the whole init.
	const renameHint = "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)"
	var gdbText, lldbText []byte
	var exe string
	if c.GDB || c.VSCode {
		if exe, err = initPyattachExe(); err != nil {
			return err
		}
		gp := p
		gp.Walker, gp.Findings = nil, nil // set up per target by the hook
		var b bytes.Buffer
		if err := gdbgen.Write(&b, gp); err != nil {
			return withHint(fmt.Errorf("init: %w", err), renameHint)
		}
		hook, err := gdbgen.ProjectInit(exe, shquote.Quote(dir))
		if err != nil {
			return withHint(fmt.Errorf("init: %w", err), "install pyattach under a plain absolute path (go install, or the release binary in /usr/local/bin)")
		}
		b.WriteString("\n" + hook)
		gdbText = b.Bytes()
	}
	if c.LLDB || c.VSCode {
		var b bytes.Buffer
		if err := lldbgen.Write(&b, p); err != nil {
			return withHint(fmt.Errorf("init: %w", err), renameHint)
		}
		lldbText = b.Bytes()
	}
	var launch initfiles.LaunchCommands
	if c.VSCode {
		if launch, err = initfiles.VSCodeCommands(python, gdbinit, lldbinit, exe); err != nil {
			return withHint(fmt.Errorf("init --vscode: %w", err),
				"VS Code's debuggers cannot be given this path exactly; move or rename the directory, or run init without --vscode")
		}
	}
	lt, err := c.lldbTrust(dir, lldbinit, app)
	if err != nil {
		return err
	}
	var trustLine, userInit, userTarget string
	var trustErr error
	const userInitHint = "gdb runs that file as you: fix its owner or mode, or add this line to your gdb init file yourself: %s"
	if c.GDB || c.VSCode {
		trustLine, trustErr = initfiles.SafePathLine(dir)
		if c.Trust {
			if trustErr != nil {
				return withHint(fmt.Errorf("init --trust: %w", trustErr),
					"gdb cannot be told to trust exactly this file; move or rename the directory (a name without ':' or line breaks)")
			}
			if err := saferead.CheckTrusted(dir, os.Geteuid()); err != nil {
				return withHint(fmt.Errorf("init --trust: %w", err),
					"gdb would run whatever another user writes to %s; make the directory yours and not writable by others (chmod go-w), or do not trust it", gdbinit)
			}
		}
		if userInit, err = initfiles.UserGDBInit(app.Env, app.Cwd); err != nil && c.Trust {
			return withHint(fmt.Errorf("init --trust: %w", err), "set HOME to your home directory")
		}
		if c.Trust {
			if userTarget, err = initfiles.UserInitTarget(userInit, os.Geteuid()); err != nil {
				return withHint(fmt.Errorf("init --trust: %w", err), userInitHint, trustLine)
			}
		}
	}

	if gdbText != nil {
		if err := writeFileAtomic(gdbinit, gdbText, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(app.Stdout, "wrote %s\n", gdbinit)
	}
	if lldbText != nil {
		if err := writeFileAtomic(lldbinit, lldbText, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(app.Stdout, "wrote %s\n", lldbinit)
	}
	if c.VSCode {
		lj := filepath.Join(dir, ".vscode", "launch.json")
		if err := os.Mkdir(filepath.Dir(lj), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("init: %w", err)
		}
		if err := initfiles.MergeLaunchJSON(lj, python, launch); err != nil {
			var ij *initfiles.InvalidJSONError
			if errors.As(err, &ij) {
				err = withHint(err, "fix it, or move it away and run pyattach init --vscode again")
			}
			return fmt.Errorf("init: %w", err)
		}
		fmt.Fprintf(app.Stdout, "updated %s\n", lj)
	}
	if c.GDB || c.VSCode {
		switch {
		case c.Trust:
			added, err := initfiles.AddTrustLine(userInit, userTarget, trustLine, "add-auto-load-safe-path "+gdbinit, "", os.Geteuid(), app.Stderr)
			if err != nil {
				return withHint(fmt.Errorf("init --trust: %w", err), userInitHint, trustLine)
			}
			if added {
				fmt.Fprintf(app.Stdout, "trusted %s in %s\n", gdbinit, userInit)
			} else {
				fmt.Fprintf(app.Stdout, "%s already trusts %s\n", userInit, gdbinit)
			}
		case trustErr != nil:
			fmt.Fprintf(app.Stderr, "warning: gdb loads %s only when trusted, and it cannot be trusted exactly (%v); move or rename the directory, or load it explicitly: gdb -x %s\n",
				gdbinit, trustErr, shquote.Quote(gdbinit))
		case userInit != "" && initfiles.HasLine(userInit, trustLine):
			// Trusted already: nothing is left to do.
		default:
			if userInit == "" {
				userInit = "~/.config/gdb/gdbinit"
			}
			fmt.Fprintf(app.Stdout, "gdb loads %s only when trusted; add this line to %s (or run again with --trust):\n  %s\n", gdbinit, userInit, trustLine)
		}
	}
	if c.LLDB {
		return lt.finish(c.Trust, dir, lldbinit, app)
	}
	return nil
}

// lldbTrustPlan is what init works out for lldb's reading of the
// project .lldbinit before anything is written.
type lldbTrustPlan struct {
	line   string // lldbgen.ProjectTrust's line, "" when err is set
	err    error  // why the line cannot be written
	user   string // the user init file lldb reads
	target string // the file to rewrite for it (--trust)
}

// lldbTrust works out the ~/.lldbinit line for c.LLDB, and refuses what
// --trust cannot do, as for gdb. Nothing is written.
func (c *InitCmd) lldbTrust(dir, lldbinit string, app *App) (lldbTrustPlan, error) {
	var lt lldbTrustPlan
	if !c.LLDB {
		return lt, nil
	}
	user, uerr := initfiles.UserLLDBInit(app.Env, app.Cwd)
	if uerr == nil && (initfiles.SameFile(user, lldbinit) || initfiles.SameFile(filepath.Join(filepath.Dir(user), ".lldbinit"), lldbinit)) {
		return lt, withHint(fmt.Errorf("init --lldb: %s is lldb's user init file, not a project's", lldbinit),
			"run init in the project's directory, not your home directory")
	}
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		lt.line, err = lldbgen.ProjectTrust(real)
	}
	lt.err = err
	lt.user = user
	if !c.Trust {
		return lt, nil
	}
	if lt.err != nil {
		return lt, withHint(fmt.Errorf("init --trust: %w", lt.err),
			"lldb cannot be told to read exactly this file; move or rename the directory (see the reason above)")
	}
	if err := saferead.CheckTrusted(dir, os.Geteuid()); err != nil {
		return lt, withHint(fmt.Errorf("init --trust: %w", err),
			"lldb would run whatever another user writes to %s; make the directory yours and not writable by others (chmod go-w), or do not trust it", lldbinit)
	}
	if uerr != nil {
		return lt, withHint(fmt.Errorf("init --trust: %w", uerr), "set HOME to your home directory")
	}
	if lt.target, err = initfiles.UserInitTarget(user, os.Geteuid()); err != nil {
		return lt, withHint(fmt.Errorf("init --trust: %w", err),
			"lldb runs that file as you: fix its owner or mode, or add this line to it yourself: %s", lt.line)
	}
	return lt, nil
}

// finish adds the line (trust) or says what is still needed; nothing
// once the user init file has the line.
func (lt lldbTrustPlan) finish(trust bool, dir, lldbinit string, app *App) error {
	switch {
	case trust:
		added, err := initfiles.AddTrustLine(lt.user, lt.target, lt.line, "", ": lldb reads "+lldbinit+" when it starts in "+dir, os.Geteuid(), app.Stderr)
		if err != nil {
			return withHint(fmt.Errorf("init --trust: %w", err),
				"lldb runs that file as you: fix its owner or mode, or add this line to it yourself: %s", lt.line)
		}
		if added {
			fmt.Fprintf(app.Stdout, "trusted %s in %s (lldb reads it when started in %s)\n", lldbinit, lt.user, dir)
		} else {
			fmt.Fprintf(app.Stdout, "%s already trusts %s\n", lt.user, lldbinit)
		}
	case lt.err != nil:
		fmt.Fprintf(app.Stderr, "warning: lldb reads %s only when told to, and it cannot be told exactly (%v); move or rename the directory, or load it explicitly: lldb -S %s\n",
			lldbinit, lt.err, shquote.Quote(lldbinit))
	case lt.user != "" && initfiles.HasLine(lt.user, lt.line):
		// Trusted already.
	default:
		fmt.Fprintf(app.Stdout, "lldb does not read %s by itself (it warns about it at every start); to have lldb read it when started there, run: pyattach init --lldb --trust %s\n",
			lldbinit, shquote.Quote(dir))
	}
	return nil
}

// initPyattachExe is the pyattach binary a project .gdbinit runs for
// each target: this one, by its resolved path. gdb runs it as the user
// who trusted the file, so it must be a file that only its owner (the
// user or root) can change.
func initPyattachExe() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", fmt.Errorf("init: cannot find pyattach's own binary: %w", err)
	}
	if err := saferead.CheckTrusted(exe, os.Geteuid()); err != nil {
		return "", withHint(fmt.Errorf("init: the project .gdbinit would run %s: %w", exe, err),
			"install pyattach where only you or root can change it (chmod go-w on the file and its directories)")
	}
	return exe, nil
}

// checkProjectDir refuses a project directory that is not there: a typo
// should not create a directory.
func checkProjectDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return withHint(fmt.Errorf("init %s: no such directory", dir),
			"check the name, or create the directory first: mkdir -p %s", shquote.Quote(dir))
	case err != nil:
		return fmt.Errorf("init: %w", err)
	case !st.IsDir():
		return withHint(fmt.Errorf("init %s: not a directory", dir), "name the project's directory")
	}
	return nil
}
