package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/bundle"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/cmd/internal/zcore"
	"github.com/pyattach/pyattach/detect/core"
)

// ResolveCmd is `pyattach resolve`.
type ResolveCmd struct {
	Target  string `arg:"" help:"A PID, a core file, a Python executable, a virtualenv directory, or a script with a #! line."`
	JSON    bool   `help:"Print one JSON object (fields: pyattach help json)."`
	Verbose bool   `short:"v" help:"Also print how long each step took, start-up included, on stderr."`
}

// Run resolves the target and prints the result.
func (c *ResolveCmd) Run(g *Globals, app *App) error {
	opts := g.targetOptions(app)
	var tr *stepTimer
	if c.Verbose {
		tr = newStepTimer(app)
		opts.Trace = tr.mark
		defer tr.done()
	}
	res, err := resolveTarget(app, c.Target, opts)
	if err != nil {
		err = fmt.Errorf("resolve %s: %w", c.Target, err)
		// Name the user's venv in the hint's command when we know it.
		dir := ""
		if res != nil && res.Venv.Path != "" {
			dir = res.Venv.Path
		} else if st, serr := os.Stat(c.Target); serr == nil && st.IsDir() {
			dir = c.Target
		}
		err = inDir(err, dir)
		return err
	}
	tr.mark("resolved")
	if c.JSON {
		return writeJSON(app.Stdout, res)
	}
	printResult(app.Stdout, res)
	return nil
}

// stepTimer prints, for resolve -v, how long each step took on stderr.
type stepTimer struct {
	w    io.Writer
	last time.Time
	app  *App
}

// newStepTimer starts timing after what Main did: it prints the
// processor time used before Main (the runtime's and the packages'
// initialisation) and the time from Main to the command (the command
// line, the configuration, the build-id cache).
func newStepTimer(app *App) *stepTimer {
	t := &stepTimer{w: app.Stderr, app: app}
	fmt.Fprintf(t.w, "pyattach: resolve: %7.2f ms  start-up before main (processor time)\n", ms(app.startCPU))
	if !app.started.IsZero() {
		t.last = app.started
		app.buildIDs()
		t.mark("the command line, the configuration, the build-id cache")
	} else {
		t.last = time.Now()
	}
	return t
}

// mark ends a step.
func (t *stepTimer) mark(step string) {
	if t == nil {
		return
	}
	now := time.Now()
	fmt.Fprintf(t.w, "pyattach: resolve: %7.2f ms  %s\n", ms(now.Sub(t.last)), step)
	t.last = now
}

// done prints the time since Main and the processor time in all.
func (t *stepTimer) done() {
	t.mark("output")
	if !t.app.started.IsZero() {
		fmt.Fprintf(t.w, "pyattach: resolve: %7.2f ms  since main; %.2f ms of processor time in all\n", ms(time.Since(t.app.started)), ms(cpuTime()))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// resolveTarget resolves what the user named, as every command that
// takes a target does: a bundle through its unpacked core and files
// (resolveBundle), a core file through the executable its notes name
// (resolveCore), anything else through target.Resolve.
func resolveTarget(app *App, tgt string, opts target.Options) (*target.Result, error) {
	if bundle.IsBundle(tgt) {
		return resolveBundle(app, tgt, opts)
	}
	zc, err := inflateCore(app, tgt)
	if err != nil {
		return nil, err
	}
	corePath := tgt
	if zc != nil {
		corePath = zc.Path
	}
	info, err := resolveCoreInfo(corePath)
	if err != nil {
		return nil, withHint(err, "the program must be on this machine at the path the core names; resolve a copy of it instead: pyattach resolve PROGRAM")
	}
	if info == nil && zc != nil {
		return nil, withHint(fmt.Errorf("%s is %s-compressed, but what it holds (%s) is not a core file", tgt, zc.Format, zc.Path), "give a core file, compressed or not: pyattach resolve CORE")
	}
	if info == nil {
		return target.Resolve(app.Ctx, tgt, opts)
	}
	res, err := resolveCore(app, tgt, info, opts)
	if err != nil {
		return nil, fmt.Errorf("core of %s: %w", info.Exe, err)
	}
	if zc != nil {
		res.Core.Compressed, res.Core.Decompressed = string(zc.Format), zc.Path
	}
	if n, ok := zcore.ParseName(filepath.Base(tgt)); ok {
		res.Core.Coredump = &target.CoredumpName{PID: n.PID, Comm: n.Comm, UID: n.UID, BootID: n.BootID, Time: n.Time}
	}
	return res, nil
}

// resolveCoreInfo reads tgt's notes when it is a core file: nil, nil
// when it is not one (a PID, a directory, a program, a script, a file
// that does not exist: target.Resolve says what it is); an error for a
// core whose executable is not here.
func resolveCoreInfo(tgt string) (*core.Info, error) {
	if target.IsPID(tgt) {
		return nil, nil
	}
	if st, err := os.Stat(tgt); err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	info, err := readCoreInfo(tgt)
	var ce *core.OpenError
	if errors.As(err, &ce) && ce.NotCore() {
		return nil, nil
	}
	return info, err
}

// resolveCore resolves the executable a core's notes name and tells
// what the core says of its process: its PID, command, the modules it
// mapped with their build-ids, and whether the executable here is the
// one it ran.
func resolveCore(app *App, path string, info *core.Info, opts target.Options) (*target.Result, error) {
	return resolveCoreIn(app, path, info, "", opts)
}

// resolveBundle is resolveCore for the core of a bundle, whose files are
// read where it was unpacked.
func resolveBundle(app *App, name string, opts target.Options) (*target.Result, error) {
	o, err := openBundle(app, name)
	if err != nil {
		return nil, err
	}
	return resolveOpenedBundle(app, name, o, opts)
}

// resolveOpenedBundle is resolveBundle for a bundle already opened (its
// file is hashed and checked once).
func resolveOpenedBundle(app *App, name string, o *bundle.Opened, opts target.Options) (*target.Result, error) {
	info, err := core.OpenIn(o.Core, o.Root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	res, err := resolveCoreIn(app, name, info, o.Root, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: core of %s: %w", name, info.Exe, err)
	}
	res.Bundle = name
	return res, nil
}

// resolveCoreIn is resolveCore for a core whose files are under root.
func resolveCoreIn(app *App, path string, info *core.Info, root string, opts target.Options) (*target.Result, error) {
	res, err := target.ResolveInRoot(app.Ctx, info.Exe, root, opts)
	if err != nil {
		return nil, err
	}
	res.Target, res.TargetKind = path, target.KindCore
	res.Core = &target.Core{Path: path, PID: info.PID, Comm: info.Comm, Args: info.Args, ExeBuildID: info.ExeBuildID}
	res.Modules = nil
	for _, f := range info.Files {
		res.Modules = append(res.Modules, target.Module{Path: f.Path, BuildID: f.BuildID, Deleted: f.Deleted})
	}
	if info.ExeBuildID != "" && res.ExeBuildID != "" && info.ExeBuildID != res.ExeBuildID {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s changed since the core was written: the core's build-id is %s, the file's %s; gdb will read the wrong symbols", info.Exe, info.ExeBuildID, res.ExeBuildID))
	}
	if info.Truncated {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s is truncated: the build-ids of modules in its lost part are missing", path))
	}
	return res, nil
}

func printResult(w io.Writer, r *target.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// Paths and names come from the process and its files: escaped.
	row := func(k, format string, args ...any) {
		var b strings.Builder
		safetext.Fprintf(&b, format, args...)
		fmt.Fprintf(tw, "%s\t%s\n", k, b.String())
	}
	switch r.TargetKind {
	case target.KindPID:
		row("process", "%d", r.PID)
	case target.KindScript:
		row("script", "%s  (%s)", r.Script, r.Shebang)
	case target.KindShim:
		row("pyenv shim", "%s", r.Shim)
	case target.KindVenv:
		row("venv", "%s", r.Target)
	case target.KindCore:
		row("core", "%s  (process %d, %s)", r.Core.Path, r.Core.PID, r.Core.Args)
		if r.Core.Compressed != "" {
			row("compressed", "%s, decompressed to %s", r.Core.Compressed, r.Core.Decompressed)
		}
		if n := r.Core.Coredump; n != nil {
			row("coredump name", "process %d (%s), uid %d, dumped %s", n.PID, safetext.Escape(n.Comm), n.UID, n.Time.Format(time.RFC3339))
		}
	}
	if r.Shim != "" && r.TargetKind != target.KindShim {
		row("pyenv shim", "%s", r.Shim)
	}
	if r.ShimVersion != "" {
		if r.ShimVersionFrom != "" {
			row("pyenv version", "%s  (set by %s)", r.ShimVersion, r.ShimVersionFrom)
		} else {
			row("pyenv version", "%s", r.ShimVersion)
		}
	}
	exe := r.Exe
	var notes []string
	if r.ExeDeleted {
		notes = append(notes, "deleted")
	}
	if r.Venv.Kind == "copies" {
		notes = append(notes, "venv copy")
	}
	if r.Embedded {
		notes = append(notes, "embeds Python")
	}
	if len(notes) > 0 {
		exe += "  (" + strings.Join(notes, ", ") + ")"
	}
	row("exe", "%s", exe)
	row("interpreter", "%s  (%s)", r.Interpreter, viaText(r))
	switch {
	case r.BuildID != "":
		row("build-id", "%s", r.BuildID)
	case r.MatchedBy == target.MatchedByContent:
		row("build-id", "none: the copy was matched by content (same size and SHA-256 of its loadable segments), not by build-id")
	default:
		row("build-id", "none")
	}
	if r.ReadFrom != "" {
		row("read from", "%s", r.ReadFrom)
	}
	py := r.Python.Version
	if py == "" {
		py = "unknown version"
	} else if r.Python.VersionSource != "" {
		py += " (from " + r.Python.VersionSource + ")"
	}
	var flavour []string
	if r.Python.ABIFlags != "" {
		flavour = append(flavour, "ABI flags "+r.Python.ABIFlags)
	}
	if r.Python.DebugBuild {
		flavour = append(flavour, "debug build (Py_DEBUG)")
	}
	if r.Python.FreeThreaded {
		flavour = append(flavour, "free-threaded")
	}
	if len(flavour) > 0 {
		py += ", " + strings.Join(flavour, ", ")
	}
	row("python", "%s", py)
	if r.Static {
		row("libpython", "none: the runtime is linked into the executable (static)")
	} else {
		id := "build-id " + r.LibpythonBuildID
		if r.LibpythonBuildID == "" {
			id = "no build-id"
		}
		row("libpython", "%s  (%s)", r.Libpython, id)
	}
	if r.Venv.Kind != "" && r.Venv.Kind != "none" {
		v := fmt.Sprintf("%s  (%s", r.Venv.Path, r.Venv.Kind)
		if r.Venv.Home != "" {
			v += ", home " + r.Venv.Home
		}
		row("venv", "%s)", v)
	}
	if r.Container {
		row("container", "yes: files read under %s", r.Root)
	}
	if e := r.ELF; e != nil {
		row("debug info", "%s", debugText(r))
	}
	switch r.TargetKind {
	case target.KindPID:
		row("modules", "%d mapped (--json lists them with build-ids)", len(r.Modules))
	case target.KindCore:
		row("modules", "%d mapped, from the core's notes (--json lists them with build-ids)", len(r.Modules))
	}
	tw.Flush()
	for _, wmsg := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", safetext.EscapeControls(wmsg))
	}
}

// same names what proved a copy to be its interpreter.
func same(r *target.Result) string {
	if r.MatchedBy == target.MatchedByContent {
		return "same content (no build-id: equal size and loadable segments)"
	}
	return "same build-id"
}

func viaText(r *target.Result) string {
	switch via := r.Via; via {
	case "self":
		return "the executable itself"
	case "symlink":
		if r.Venv.Kind == "symlinks" {
			return "the venv's symlink"
		}
		return "a symbolic link to it"
	case "pyvenv.cfg":
		return same(r) + ", found through pyvenv.cfg"
	case "orig-prefix":
		return same(r) + ", found through orig-prefix.txt"
	case "candidates":
		return same(r) + ", found among installed Pythons"
	case "pyenv":
		return "chosen by pyenv"
	case "libpython":
		return "the embedded interpreter's libpython"
	default:
		return via
	}
}

// debugText summarises the debug information of the file that holds
// the runtime.
func debugText(r *target.Result) string {
	e := r.ELF
	if r.LibpythonELF != nil {
		e = r.LibpythonELF
	}
	var parts []string
	switch {
	case e.DWARF:
		parts = append(parts, "DWARF embedded")
	case e.Symtab:
		parts = append(parts, "symbol table only")
	default:
		parts = append(parts, "stripped")
	}
	if e.DebugLink != nil {
		parts = append(parts, "separate file "+e.DebugLink.Name+" (.gnu_debuglink)")
	}
	if p := e.Producer; p != nil {
		s := p.Compiler + " " + p.Version
		if p.GLevel != "" {
			s += " -g" + p.GLevel
		}
		if p.OLevel != "" {
			s += " -O" + p.OLevel
		}
		if p.LTO {
			s += " LTO"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
