package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/gdbgen"
)

// HookCmd is the hidden `pyattach __hook gdb --pid N|--core=FILE|--program=FILE`
// that a project .gdbinit written by `pyattach init` runs, by absolute
// path and with this fixed argv, whenever gdb has attached to a process
// or loaded a core or program. It writes the script that sets gdb up for
// that target (gdbgen.GenerateLoaded) into pyattach's private script
// cache and prints its path; gdb sources it. On failure it prints one
// line, the error and the command that fixes it, and exits 1.
type HookCmd struct {
	Debugger string `arg:"" enum:"gdb" help:"The debugger: gdb."`
	PID      int    `name:"pid" help:"The attached process."`
	Core     string `name:"core" help:"The loaded core file."`
	Program  string `name:"program" help:"The loaded program."`
}

// Run writes the script and prints its path.
func (c *HookCmd) Run(g *Globals, app *App, cfg *Config) error {
	path, err := c.script(g, app, cfg)
	if err != nil {
		line := safetext.Fold(err.Error())
		if h := hintFor(err); h != "" {
			line += "; " + strings.ReplaceAll(h, "\n", " ")
		}
		fmt.Fprintf(app.Stderr, "pyattach: %s\n", safetext.EscapeControls(line))
		return exitError(1)
	}
	fmt.Fprintln(app.Stdout, path)
	return nil
}

func (c *HookCmd) script(g *Globals, app *App, cfg *Config) (string, error) {
	var t dbgTarget
	what := ""
	switch {
	case c.PID > 0 && c.Core == "" && c.Program == "":
		t.PID = c.PID
		what = fmt.Sprintf("process %d", c.PID)
	case c.Core != "" && c.PID == 0:
		t.Core, t.Program = c.Core, c.Program
		what = "core " + c.Core
	case c.Program != "" && c.PID == 0:
		t.Program, t.Launch = c.Program, true
		what = "program " + c.Program
	default:
		return "", errors.New("__hook: give --pid, --core or --program")
	}
	p, _, err := buildPlan(app.Ctx, t, g, app, cfg)
	if err != nil {
		return "", fmt.Errorf("cannot set gdb up for %s: %w", what, err)
	}
	if c.Program != "" {
		p.Program = "" // gdb has its program already
	}
	text, err := gdbgen.GenerateLoaded(p)
	if err != nil {
		return "", withHint(fmt.Errorf("cannot set gdb up for %s: %w", what, err),
			"the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
	}
	path, _, err := scriptPaths(app.dirs(), "", "gdb", text, "")
	if err != nil {
		return "", err
	}
	if _, err := gdbgen.SourceLine(path); err != nil {
		return "", withHint(err, scriptPathHint)
	}
	return path, nil
}
