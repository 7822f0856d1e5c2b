package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/planner"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/venv/environ"
)

// gdbAutoLoadDir is where gdb auto-loads <objfile path>-gdb.py from.
const gdbAutoLoadDir = debugsearch.GDBAutoLoadDir

// buildPlan resolves what a debugger command line opens and gathers
// everything the debugger needs for it (planner.Build, wired to the
// flags, the environment and the configuration).
func buildPlan(ctx context.Context, t dbgTarget, g *Globals, app *App, cfg *Config) (plan.Plan, *debugsearch.Info, error) {
	return planner.Build(ctx, planner.Target(t), plannerOptions(g, app, cfg))
}

// plannerOptions are the planner's services for this invocation.
func plannerOptions(g *Globals, app *App, cfg *Config) planner.Options {
	return planner.Options{
		Fast: g.Fast,
		Resolve: func(ctx context.Context, tgt string) (*target.Result, error) {
			return target.Resolve(ctx, tgt, g.targetOptions(app))
		},
		Collect: func(ctx context.Context, tgt string, res *target.Result) (*debugsearch.Info, error) {
			return debugInfoFor(ctx, tgt, res, nil, g, app, cfg)
		},
		SourceRules: func(ctx context.Context, res *target.Result, di *debugsearch.Info) ([]plan.SourceRule, error) {
			return sourceRules(res, di, g, cfg, app)
		},
		MachO: func(p string) bool { return debugsearch.IsMachO(p, app.Cwd) },
		CollectMachO: func(ctx context.Context, p string) (*debugsearch.Info, error) {
			return newCollector(g, app, cfg).CollectMachO(p)
		},
		LLDBFindsBesideDSYM: runtime.GOOS == "darwin",
		DataHome:            app.dirs().DataHome,
		UID:                 os.Geteuid(),
		Warn: func(err error) {
			fmt.Fprintf(app.Stderr, "pyattach: warning: %s\n", safetext.EscapeControls(safetext.Fold(err.Error())))
			if h := hintFor(err); h != "" {
				fmt.Fprintf(app.Stderr, "  hint: %s\n", h)
			}
		},
	}
}

// hiddenRoot reports a process whose root reads as "/" from here.
func hiddenRoot(res *target.Result) bool { return planner.HiddenRoot(res) }

// readCoreInfo reads a core file whose executable is on this machine.
func readCoreInfo(path string) (*core.Info, error) { return planner.ReadCore(path) }

// findDebugger finds gdb or lldb on PATH (lldb may be lldb-14 and the
// like on Debian).
func findDebugger(env environ.Env, names ...string) (string, error) {
	for _, n := range names {
		if p, err := lookPath(env, n); err == nil {
			return p, nil
		}
	}
	return "", withHint(fmt.Errorf("%s is not installed: %w", names[0], exec.ErrNotFound),
		"install it: sudo apt-get install %s", names[0])
}
