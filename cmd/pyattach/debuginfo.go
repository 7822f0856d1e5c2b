package main

import (
	"context"
	"fmt"
	"github.com/pyattach/pyattach/cmd/internal/bundle"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/pyoffsets"
	"github.com/pyattach/pyattach/venv/environ"
)

// DebuginfoCmd is `pyattach debuginfo`.
type DebuginfoCmd struct {
	Target string `arg:"" help:"A PID, a core file, or any ELF file (a Python executable, a venv directory, a library, any program), or a Mach-O file (its UUID and .dSYM per architecture)."`
	JSON   bool   `help:"Print one JSON object (fields: pyattach help json)."`
}

// storeDir is pyattach's private debug directory (symbols install).
func storeDir(dirs environ.Dirs) string { return dirs.Data("debug") }

// cacheDir is pyattach's cache (fetched extensions, scripts, sources).
func cacheDir(dirs environ.Dirs) string { return dirs.Cache() }

// privateCacheDir is cacheDir()/sub..., made or checked private (mode
// 0700, the user's own, reached through no other user's link) before
// anything is written there.
func privateCacheDir(dirs environ.Dirs, sub ...string) (string, error) {
	return safefs.PrivateDir(dirs.CacheHome, append([]string{environ.Name}, sub...)...)
}

// privateStoreDir is storeDir(), made or checked private.
func privateStoreDir(dirs environ.Dirs) (string, error) {
	return safefs.PrivateDir(dirs.DataHome, environ.Name, "debug")
}

// Run finds the debug information of every module of the target.
func (c *DebuginfoCmd) Run(g *Globals, app *App, cfg *Config) error {
	ctx := app.Ctx
	var res *target.Result
	var rerr error
	macho := debugsearch.IsMachO(c.Target, app.Cwd)
	switch {
	case macho:
		// A macOS module: no process, no Python to resolve.
	case bundle.IsBundle(c.Target):
		// A bundle: its core's modules, read where it was unpacked, with
		// its debug files as a debug directory.
		o, err := openBundle(app, c.Target)
		if err != nil {
			return err
		}
		res, rerr = resolveOpenedBundle(app, c.Target, o, g.targetOptions(app))
		if rerr != nil {
			return rerr
		}
		res.Container, res.Root = true, o.Root
		g2 := *g
		g2.DebugDir = append(append([]string(nil), g.DebugDir...), o.DebugDir)
		g = &g2
	default:
		res, rerr = resolveTarget(app, c.Target, g.targetOptions(app))
	}
	col := newCollector(g, app, cfg)
	// A download a bound stopped (too large, no space, cut) is an error
	// of the command, reported after the findings that stand.
	var stopped atomic.Int32
	warnStopped := col.DownloadFailed
	col.DownloadFailed = func(err error) {
		stopped.Add(1)
		warnStopped(err)
	}
	var di *debugsearch.Info
	var err error
	if macho {
		// Its .dSYM per architecture, found as lldb finds it.
		di, err = col.CollectMachO(c.Target)
	} else {
		di, err = col.Collect(ctx, c.Target, res, rerr)
	}
	if err != nil {
		return fmt.Errorf("debuginfo %s: %w", c.Target, err)
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: print no half-filled table
	}
	if c.JSON {
		err = writeJSON(app.Stdout, di)
	} else {
		printDebugInfo(app.Stdout, di)
	}
	if n := stopped.Load(); err == nil && n > 0 {
		err = fmt.Errorf("debuginfo %s: %d debuginfod download(s) stopped by a bound (warned above); nothing of them was kept", c.Target, n)
	}
	return err
}

// collectDebugInfo resolves the target, lists its modules and finds
// their debug files and the extensions.
func collectDebugInfo(ctx context.Context, tgt string, g *Globals, app *App, cfg *Config) (*debugsearch.Info, error) {
	res, rerr := resolveTarget(app, tgt, g.targetOptions(app))
	return debugInfoFor(ctx, tgt, res, rerr, g, app, cfg)
}

// debugInfoFor is collectDebugInfo for a target already resolved
// (debugsearch.Collector.Collect, wired to the flags, the environment and
// the configuration); warnings are printed as they are found.
func debugInfoFor(ctx context.Context, tgt string, res *target.Result, rerr error, g *Globals, app *App, cfg *Config) (*debugsearch.Info, error) {
	return newCollector(g, app, cfg).Collect(ctx, tgt, res, rerr)
}

// newCollector is the debug-information collector for this invocation.
func newCollector(g *Globals, app *App, cfg *Config) *debugsearch.Collector {
	opts := debugsearch.Options{
		Env:        app.Env,
		Home:       app.Env.Get("HOME"),
		Cwd:        app.Cwd,
		Offline:    g.Offline || cfg.Offline,
		StoreDir:   storeDir(app.dirs()),
		DebugDirs:  append(append([]string(nil), cfg.DebugDirs...), g.DebugDir...),
		CacheDir:   cacheDir(app.dirs()),
		Stderr:     app.Stderr,
		Extensions: cfg.Extensions,
		UID:        os.Geteuid(),
		Warn: func(w string) {
			fmt.Fprintf(app.Stderr, "pyattach: warning: %s\n", safetext.EscapeControls(w))
		},
		DownloadFailed: func(err error) { warn(app.Stderr, err) },
	}
	if progressWanted(app) {
		opts.Progress = app.Stderr
	}
	return debugsearch.New(opts)
}

// progressWanted: a progress bar on a terminal, or when
// DEBUGINFOD_PROGRESS asks for one as elfutils' client does.
func progressWanted(app *App) bool {
	if app.Env.Get("DEBUGINFOD_PROGRESS") != "" {
		return true
	}
	f, ok := app.Stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	if id == "" {
		return "-"
	}
	return id
}

func printDebugInfo(w io.Writer, di *debugsearch.Info) {
	// Module paths come from the process's maps or the core's NT_FILE
	// note: every value is escaped (safetext.Fprintf).
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODULE\tBUILD-ID\tVIA\tKIND\tFILE")
	for _, m := range di.Modules {
		file := m.Debug.Path
		if m.Debug.Via == debugfile.ViaEmbedded {
			file = "(in the module)"
		}
		if m.Error != "" {
			file = "error: " + m.Error
		} else if m.Debug.Err != "" && m.Debug.Via == debugfile.ViaNone {
			file = "debuginfod: " + m.Debug.Err
		}
		id := short(m.BuildID)
		if m.MachO != nil && len(m.MachO.Arches) > 0 {
			id = m.MachO.Arches[0].UUID
		}
		safetext.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Path, id, m.Debug.Via, m.Debug.Kind, file)
	}
	tw.Flush()
	for _, m := range di.Modules {
		if m.MachO == nil {
			continue
		}
		for _, a := range m.MachO.Arches {
			where := string(a.Via)
			switch {
			case a.DWARF != "":
				where = fmt.Sprintf("%s (%s)", a.Bundle, a.Via)
			case len(a.Objects) > 0:
				where = fmt.Sprintf("%s (debug map: the object files still hold the DWARF)", strings.Join(a.Objects, " "))
			case a.Via == "none":
				where = "no .dSYM found (make one with dsymutil, or pyattach symbols install a macosx debug-symbols zip)"
			}
			safetext.Fprintf(w, "%s: %s UUID %s: %s\n", m.Path, a.CPU, a.UUID, where)
		}
	}
	for _, m := range di.Modules {
		for _, r := range m.Debug.Rejected {
			safetext.Fprintf(w, "warning: %s: rejected %s: %s\n", m.Path, r.Path, r.Reason)
		}
		if m.Debug.AltMissing && m.DebugAltLink != nil {
			safetext.Fprintf(w, "warning: %s: dwz file %s (build-id %s) not found: types and names may be missing\n", m.Path, m.DebugAltLink.Name, m.DebugAltLink.BuildID)
		}
	}
	fmt.Fprintln(w)
	if len(di.Modules) == 1 && di.Modules[0].MachO != nil {
		fmt.Fprintln(w, "python: a Mach-O file (macOS); no interpreter to resolve here")
		return
	}
	if di.Python == nil {
		fmt.Fprintln(w, "python: not a Python target; no CPython extension to look for")
		return
	}
	ex := di.Extensions
	for _, t := range ex.GDBTried {
		if file, why, ok := strings.Cut(t, ": refused: "); ok {
			safetext.Fprintf(w, "warning: gdb extension: refused %s: %s\n", file, why)
		}
	}
	for _, t := range ex.LLDBTried {
		if file, why, ok := strings.Cut(t, ": refused: "); ok {
			safetext.Fprintf(w, "warning: lldb extension: refused %s: %s\n", file, why)
		}
	}
	if ex.GDB != "" {
		match := "matches"
		if !ex.GDBVersionMatch {
			match = "does NOT match"
		}
		safetext.Fprintf(w, "gdb extension:  %s (Python %s, %s %s)\n", ex.GDB, ex.GDBVersion, match, di.Python.Version)
		for _, wm := range ex.GDBWarnings {
			safetext.Fprintf(w, "warning: gdb extension: %s\n", wm)
		}
	} else {
		safetext.Fprintf(w, "gdb extension:  none found for Python %s; get it with: pyattach fetch-extension %s\n", di.Python.Version, di.Target)
	}
	if ex.LLDB != "" {
		safetext.Fprintf(w, "lldb extension: %s\n", ex.LLDB)
	} else if di.Python != nil && pyoffsets.Supported(di.Python.Version, di.Python.ABIFlags) {
		// The walker reads this version's frames: pyattach lldb has
		// py-bt without any extension.
		fmt.Fprintln(w, "lldb extension: none needed: pyattach lldb's py-bt comes from pyattach's walker")
	} else {
		fmt.Fprintln(w, "lldb extension: none (no cpython_lldb module installed; pip install cpython-lldb adds py-bt to lldb)")
	}
	for _, d := range di.ContainerDebugDirs {
		safetext.Fprintf(w, "debug dir:      %s in the container (read from %s)\n", d.Dir, d.ReadFrom)
	}
	if len(di.Debuginfod.URLs) == 0 {
		safetext.Fprintf(w, "debuginfod:     no servers (DEBUGINFOD_URLS is empty); cache %s\n", di.Debuginfod.Cache)
	} else if di.Debuginfod.Offline {
		safetext.Fprintf(w, "debuginfod:     offline; servers %s not asked\n", strings.Join(di.Debuginfod.URLs, " "))
	}
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
