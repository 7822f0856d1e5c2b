package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/pyattach/pyattach/cmd/internal/debuginfo"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/debuginfod"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/environ"
	"github.com/pyattach/pyattach/detect/pyext"
	"github.com/pyattach/pyattach/detect/safefs"
)

// DebuginfoCmd is `pyattach debuginfo`.
type DebuginfoCmd struct {
	Target string `arg:"" help:"A PID, or any ELF file (a Python executable, a venv directory, a library, any program)."`
	JSON   bool   `help:"Print one JSON object (fields in README.md)."`
}

// Help is shown by `pyattach debuginfo --help`.
func (c *DebuginfoCmd) Help() string {
	return `For every module of the target (the executable, libpython, extension
modules, libc...), where its debug information is, found the way gdb finds
it: embedded DWARF, <debugdir>/.build-id/xx/rest.debug, .gnu_debuglink (CRC
checked), the debuginfod cache, then debuginfod servers ($DEBUGINFOD_URLS,
unless --offline). Also the CPython gdb extension (py-bt, py-list,
py-locals) that matches the interpreter, and an lldb one if installed.

Examples:
  pyattach debuginfo 12345
  pyattach --offline debuginfo .venv
  pyattach --debug-dir ~/debug debuginfo --json /usr/bin/python3.11`
}

// The findings' types live in cmd/internal/debuginfo, shared with doctor.
type (
	DebugInfo       = debuginfo.Info
	DebuginfodState = debuginfo.DebuginfodState
	ModuleDebug     = debuginfo.Module
	Extensions      = debuginfo.Extensions
)

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

// debugDirs is the search list: gdb's default, pyattach's store, the
// config file's, then --debug-dir, without duplicates. gdb auto-loads
// <debugdir>/<objfile>-gdb.py scripts from each (see codeKeys), so a
// directory that another user could change (safefs.CheckTrusted) is
// left out, and a warning says so; one that does not exist is kept
// (there is nothing in it to run or find).
func debugDirs(g *Globals, cfg *Config, own environ.Dirs) (dirs, warnings []string) {
	seen := map[string]bool{}
	for _, list := range [][]string{debugfile.DefaultDebugDirs, {storeDir(own)}, cfg.DebugDirs, g.DebugDir} {
		for _, d := range list {
			d = filepath.Clean(d)
			if seen[d] {
				continue
			}
			seen[d] = true
			if err := safefs.CheckTrusted(d, os.Geteuid()); errors.Is(err, safefs.ErrUntrusted) {
				warnings = append(warnings, fmt.Sprintf("ignored debug directory %s: %s (gdb would run the *-gdb.py scripts in it)", d, oneLine(err.Error())))
				continue
			}
			dirs = append(dirs, d)
		}
	}
	return dirs, warnings
}

// Run finds the debug information of every module of the target.
func (c *DebuginfoCmd) Run(g *Globals, app *App, cfg *Config) error {
	ctx := app.Ctx
	di, err := collectDebugInfo(ctx, c.Target, g, app, cfg)
	if err != nil {
		return fmt.Errorf("debuginfo %s: %w", c.Target, err)
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: print no half-filled table
	}
	if c.JSON {
		return writeJSON(app.Stdout, di)
	}
	printDebugInfo(app.Stdout, di)
	return nil
}

// collectDebugInfo resolves the target, lists its modules and finds
// their debug files and the extensions.
func collectDebugInfo(ctx context.Context, tgt string, g *Globals, app *App, cfg *Config) (*DebugInfo, error) {
	res, rerr := target.Resolve(ctx, tgt, target.Options{ProcRoot: g.ProcRoot, Env: app.Env, Cwd: app.Cwd})
	return debugInfoFor(ctx, tgt, res, rerr, g, app, cfg)
}

// debugInfoFor is collectDebugInfo for a target already resolved.
func debugInfoFor(ctx context.Context, tgt string, res *target.Result, rerr error, g *Globals, app *App, cfg *Config) (*DebugInfo, error) {
	python := rerr == nil
	if rerr != nil && !errors.Is(rerr, target.ErrNotPython) {
		return nil, rerr
	}
	di := &DebugInfo{Target: tgt}
	di.DebugDirs, di.Warnings = debugDirs(g, cfg, app.dirs())
	for _, w := range di.Warnings {
		fmt.Fprintf(app.Stderr, "pyattach: warning: %s\n", w)
	}
	var mods []debugfile.Module
	switch {
	case res != nil && res.TargetKind == target.KindPID:
		di.PID = res.PID
		di.Container = res.Container
		for _, m := range res.Modules {
			dm := debugfile.Module{Path: m.Path, Root: res.Root}
			if m.Path == res.Exe && res.Interpreter != "" && res.Interpreter != res.Exe {
				dm.Also = []string{res.Interpreter}
			}
			mods = append(mods, dm)
		}
	default:
		p, err := fileModule(tgt, res)
		if err != nil {
			return nil, err
		}
		m := debugfile.Module{Path: p}
		if res != nil && res.Interpreter != "" && res.Interpreter != p {
			m.Also = []string{res.Interpreter}
		}
		mods = append(mods, m)
		if python && res.Libpython != "" {
			mods = append(mods, debugfile.Module{Path: res.Libpython})
		}
	}
	if python {
		di.Interpreter = res.Interpreter
		py := res.Python
		di.Python = &py
	}

	client := debuginfod.FromEnv(app.Env, app.Stderr)
	di.Debuginfod = DebuginfodState{URLs: client.URLs, Cache: client.CacheDir, Offline: g.Offline || cfg.Offline}
	if progressWanted(app) {
		client.Progress = app.Stderr
	}
	loc := &debugfile.Locator{
		DebugDirs:  di.DebugDirs,
		Debuginfod: fetcher{client},
		Offline:    di.Debuginfod.Offline || len(client.URLs) == 0,
	}
	if res != nil && res.TargetKind == target.KindPID && res.Container {
		di.ContainerDebugDirs = loc.RootDirs(res.Root)
	}
	for _, r := range loc.LocateAll(ctx, mods, 8) {
		md := ModuleDebug{Path: r.Module.Path, Debug: r.Found}
		if r.Err != nil {
			md.Error = r.Err.Error()
		}
		if info := r.Module.Info; info != nil {
			md.BuildID = info.BuildID
			md.DebugLink = info.DebugLink
			md.DebugAltLink = info.DebugAltLink
		}
		di.Modules = append(di.Modules, md)
	}
	if python {
		di.Extensions = findExtensions(res, cfg, app)
	}
	return di, nil
}

// fileModule is the path of a file target's own module: the file itself,
// or a venv's bin/python, or a script's interpreter.
func fileModule(tgt string, res *target.Result) (string, error) {
	if res != nil && res.Exe != "" {
		return res.Exe, nil
	}
	abs, err := filepath.Abs(tgt)
	if err != nil {
		return "", err
	}
	if _, err := elfinfo.Open(abs, elfinfo.Options{}); err != nil {
		return "", fmt.Errorf("%s: %w", abs, err)
	}
	return abs, nil
}

// fetcher adapts the debuginfod client to the locator.
type fetcher struct{ c *debuginfod.Client }

func (f fetcher) Cached(id string) (string, bool) { return f.c.Cached(id, "debuginfo") }

func (f fetcher) Fetch(ctx context.Context, ids []string) map[string]debugfile.FetchResult {
	out := map[string]debugfile.FetchResult{}
	for _, r := range f.c.Fetch(ctx, "debuginfo", ids) {
		out[r.BuildID] = debugfile.FetchResult{Path: r.Path, Err: r.Err}
	}
	return out
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

// findExtensions looks for the gdb and lldb extensions of the
// interpreter.
func findExtensions(res *target.Result, cfg *Config, app *App) Extensions {
	in := pyext.Input{
		Interpreter: res.Interpreter,
		Libpython:   res.Libpython,
		Version:     res.Python.Version,
		ABIFlags:    res.Python.ABIFlags,
		Extra:       cfg.Extensions,
		CacheDir:    cacheDir(app.dirs()),
		UID:         os.Geteuid(),
	}
	if res.Container {
		in.Root = res.Root
	}
	var ex Extensions
	found, tried, _ := pyext.FindGDB(in)
	ex.GDBTried = tried
	if found != nil {
		ex.GDB = found.Path
		ex.GDBVersion = found.Version
		ex.GDBVersionMatch = found.VersionMatch
		ex.GDBSource = found.Source
		ex.GDBWarnings = found.Warnings
	}
	var prefixes []string
	if res.Venv.Path != "" {
		prefixes = append(prefixes, res.Venv.Path)
	}
	prefixes = append(prefixes, filepath.Dir(filepath.Dir(res.Interpreter)))
	sp := pyext.SitePackages(prefixes, res.Python.Version, app.Env.Get("HOME"))
	lf, ltried, _ := pyext.FindLLDB(in, sp)
	ex.LLDBTried = ltried
	if lf != nil {
		ex.LLDB = lf.Path
	}
	return ex
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

func printDebugInfo(w io.Writer, di *DebugInfo) {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Path, short(m.BuildID), m.Debug.Via, m.Debug.Kind, file)
	}
	tw.Flush()
	for _, m := range di.Modules {
		for _, r := range m.Debug.Rejected {
			fmt.Fprintf(w, "warning: %s: rejected %s: %s\n", m.Path, r.Path, r.Reason)
		}
		if m.Debug.AltMissing && m.DebugAltLink != nil {
			fmt.Fprintf(w, "warning: %s: dwz file %s (build-id %s) not found: types and names may be missing\n", m.Path, m.DebugAltLink.Name, m.DebugAltLink.BuildID)
		}
	}
	fmt.Fprintln(w)
	if di.Python == nil {
		fmt.Fprintln(w, "python: not a Python target; no CPython extension to look for")
		return
	}
	ex := di.Extensions
	for _, t := range ex.GDBTried {
		if file, why, ok := strings.Cut(t, ": refused: "); ok {
			fmt.Fprintf(w, "warning: gdb extension: refused %s: %s\n", file, why)
		}
	}
	for _, t := range ex.LLDBTried {
		if file, why, ok := strings.Cut(t, ": refused: "); ok {
			fmt.Fprintf(w, "warning: lldb extension: refused %s: %s\n", file, why)
		}
	}
	if ex.GDB != "" {
		match := "matches"
		if !ex.GDBVersionMatch {
			match = "does NOT match"
		}
		fmt.Fprintf(w, "gdb extension:  %s (Python %s, %s %s)\n", ex.GDB, ex.GDBVersion, match, di.Python.Version)
		for _, wm := range ex.GDBWarnings {
			fmt.Fprintf(w, "warning: gdb extension: %s\n", wm)
		}
	} else {
		fmt.Fprintf(w, "gdb extension:  none found for Python %s; get it with: pyattach fetch-extension %s\n", di.Python.Version, di.Target)
	}
	if ex.LLDB != "" {
		fmt.Fprintf(w, "lldb extension: %s\n", ex.LLDB)
	} else {
		fmt.Fprintln(w, "lldb extension: none (no cpython_lldb module installed; pip install cpython-lldb adds py-bt to lldb)")
	}
	for _, d := range di.ContainerDebugDirs {
		fmt.Fprintf(w, "debug dir:      %s in the container (read from %s)\n", d.Dir, d.ReadFrom)
	}
	if len(di.Debuginfod.URLs) == 0 {
		fmt.Fprintln(w, "debuginfod:     no servers (DEBUGINFOD_URLS is empty); cache "+di.Debuginfod.Cache)
	} else if di.Debuginfod.Offline {
		fmt.Fprintf(w, "debuginfod:     offline; servers %s not asked\n", strings.Join(di.Debuginfod.URLs, " "))
	}
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
