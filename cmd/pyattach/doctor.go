package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/debuggers"
	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/doctor"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/srcmap"
)

// DoctorCmd is `pyattach doctor`.
type DoctorCmd struct {
	Target  string `arg:"" optional:"" help:"A PID, core file, interpreter, venv, script or Mach-O file to check (optional: without it, only the debuggers and ptrace are checked)."`
	JSON    bool   `help:"Print {checks: [{id, status, summary, fix, details}]}, notes included."`
	Verbose bool   `help:"Print the notes too: facts that change nothing pyattach gdb and lldb show (an -O3 build the walker reads, the distribution's C sources)."`
}

// Check is one finding of doctor (cmd/internal/doctor holds the checks).
type Check = doctor.Check

// Statuses of a check.
const (
	statusOK   = doctor.OK
	statusWarn = doctor.Warn
	statusFail = doctor.Fail
	statusSkip = doctor.Skip
	statusNote = doctor.Note
)

// Run runs the checks and prints them.
func (c *DoctorCmd) Run(g *Globals, app *App, cfg *Config) error {
	checks := doctor.Run(app.Ctx, doctorServices(g, app, cfg), c.Target)
	if c.JSON {
		if err := writeJSON(app.Stdout, struct {
			Checks []Check `json:"checks"`
		}{checks}); err != nil {
			return err
		}
	} else {
		printChecks(app.Stdout, checks, c.Verbose, colorWanted(app))
	}
	if doctor.Failed(checks) {
		return exitError(1)
	}
	return nil
}

// doctorServices wires doctor to this process: the real proc root,
// commands, network, and the target resolution and debug information
// collection of the other commands.
func doctorServices(g *Globals, app *App, cfg *Config) *doctor.Services {
	return &doctor.Services{
		ProcRoot: g.ProcRoot,
		GOOS:     g.GOOS,
		Env:      app.Env,
		Euid:     os.Geteuid(),
		UID:      os.Getuid(),
		Offline:  g.Offline || cfg.Offline,
		CacheDir: cacheDir(app.dirs()),
		Run:      debuggers.Run,
		HTTP:     http.DefaultClient,
		FindDebugger: func(names ...string) (string, error) {
			return findDebugger(app.Env, names...)
		},
		Resolve: func(ctx context.Context, tgt string) (*target.Result, error) {
			return resolveTarget(app, tgt, g.targetOptions(app))
		},
		DebugInfo: func(ctx context.Context, tgt string, res *target.Result) (*debugsearch.Info, error) {
			return debugInfoFor(ctx, tgt, res, nil, g, app, cfg)
		},
		Sources: func(_ context.Context, res *target.Result, di *debugsearch.Info) (*doctor.SourceMap, error) {
			roots, err := sourceRoots(g, cfg, app)
			if err != nil {
				return nil, &doctor.SourceRootsError{Err: err}
			}
			// Local files only, not bound by doctor's deadline: a large
			// DWARF scan takes what it takes.
			m, err := mapSources(app.Ctx, res, di, roots, nil)
			if err != nil {
				return nil, err
			}
			sm := &doctor.SourceMap{Modules: len(m.Modules), Rules: len(m.Rules)}
			for _, u := range m.Unresolved {
				sm.Unresolved = append(sm.Unresolved, doctor.SourceGroup{Prefix: u.Prefix, Files: u.Files, Hint: u.Hint,
					Shipped: srcmap.Shipped(srcmap.Unresolved{Prefix: u.Prefix, Layout: u.Layout})})
			}
			return sm, nil
		},
		Hint:    hintFor,
		IsMachO: func(tgt string) bool { return debugsearch.IsMachO(tgt, app.Cwd) },
		MachODebugInfo: func(_ context.Context, tgt string) (*debugsearch.Info, error) {
			return newCollector(g, app, cfg).CollectMachO(tgt)
		},
	}
}

// runCommand is doctor's Runner: it starts the command with env as its

// colorWanted: colour on a terminal, unless NO_COLOR is set.
func colorWanted(app *App) bool {
	if _, set := app.Env.Lookup("NO_COLOR"); set {
		return false
	}
	f, ok := app.Stdout.(*os.File)
	return ok && isTerminal(f)
}

// printChecks prints the checks in their order; notes only when
// verbose.
func printChecks(w io.Writer, checks []Check, verbose, color bool) {
	paint := func(s, code string) string {
		if !color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	for _, ch := range checks {
		if ch.Status == statusNote && !verbose {
			continue
		}
		label := map[string]string{statusOK: paint("ok  ", "32"), statusWarn: paint("WARN", "33"), statusFail: paint("FAIL", "31"), statusSkip: paint("skip", "2"), statusNote: paint("note", "2")}[ch.Status]
		// Summaries, details and fixes may name what a process controls
		// (its comm, command line, files): escaped where they need it.
		fmt.Fprintf(w, "%s  %-22s %s\n", label, ch.ID, safetext.EscapeControls(ch.Summary))
		for _, d := range ch.Details {
			fmt.Fprintf(w, "      - %s\n", safetext.EscapeControls(d))
		}
		if ch.Fix != "" && ch.Status != statusOK {
			for i, l := range strings.Split(ch.Fix, "\n") {
				prefix := "      fix: "
				if i > 0 {
					prefix = "           "
				}
				fmt.Fprintf(w, "%s%s\n", prefix, safetext.EscapeControls(l))
			}
		}
	}
}
