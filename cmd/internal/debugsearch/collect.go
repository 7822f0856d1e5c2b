package debugsearch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"

	"github.com/pyattach/pyattach/cmd/internal/debuginfod"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/dsym"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/pyext"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv/environ"
)

// Options is what a Collector needs, filled by the command from its
// flags, the environment and the configuration.
type Options struct {
	// Env is the environment debuginfod's settings are read from
	// (DEBUGINFOD_URLS and the like).
	Env []string
	// Home is the user's home directory, whose user site-packages may
	// hold an lldb extension.
	Home string
	// Cwd is the directory a relative file target is read from ("": the
	// process's).
	Cwd string
	// Offline: no debuginfod server is asked.
	Offline bool
	// StoreDir is pyattach's private debug directory (symbols install),
	// searched after gdb's default.
	StoreDir string
	// DebugDirs are searched after StoreDir: the configuration's, then
	// the command line's.
	DebugDirs []string
	// CacheDir is pyattach's cache, where fetched extensions are.
	CacheDir string
	// Extensions are extension files or directories the configuration
	// names.
	Extensions []string
	// Progress, when not nil, receives debuginfod's progress bar (nil:
	// the debuginfod client's choice from Env).
	Progress io.Writer
	// Stderr is where DEBUGINFOD_PROGRESS, when set, sends progress.
	Stderr io.Writer
	// HTTP is the client for debuginfod requests; nil: the debuginfod
	// client's own.
	HTTP *http.Client
	// UID owns the files that may become debugger code (CheckTrusted).
	UID int
	// Warn, when not nil, is called with each warning as it is found
	// (they are also in Info.Warnings).
	Warn func(string)
	// DownloadFailed, when not nil, is called with each debuginfod
	// download refused or cut by a bound (debuginfod.ErrTooLarge,
	// ErrNoSpace, ErrCut); the error names the build-id and the
	// server. It is also the module's Debug.Err.
	DownloadFailed func(error)
}

// Collector finds the debug information of resolved targets.
type Collector struct {
	Options
}

// New returns a Collector for opts.
func New(opts Options) *Collector { return &Collector{Options: opts} }

// DebugDirs is the search list: gdb's default, the store, then
// Options.DebugDirs, without duplicates. gdb auto-loads
// <debugdir>/<objfile>-gdb.py scripts from each, so a directory that
// another user could change (saferead.CheckTrusted) is left out, with a
// warning; one that does not exist is kept (there is nothing in it to
// run or find).
func (c *Collector) DebugDirs() (dirs, warnings []string) {
	seen := map[string]bool{}
	for _, list := range [][]string{debugfile.DefaultDebugDirs, {c.StoreDir}, c.Options.DebugDirs} {
		for _, d := range list {
			if d == "" {
				continue
			}
			d = filepath.Clean(d)
			if seen[d] {
				continue
			}
			seen[d] = true
			if err := saferead.CheckTrusted(d, c.UID); errors.Is(err, saferead.ErrUntrusted) {
				warnings = append(warnings, fmt.Sprintf("ignored debug directory %s: %s (gdb would run the *-gdb.py scripts in it)", d, safetext.Fold(err.Error())))
				continue
			}
			dirs = append(dirs, d)
		}
	}
	return dirs, warnings
}

// client is the debuginfod client the options describe.
func (c *Collector) client() *debuginfod.Client {
	client := debuginfod.FromEnv(environ.Env(c.Env), c.Stderr)
	if c.Progress != nil {
		client.Progress = c.Progress
	}
	if c.HTTP != nil {
		client.HTTP = c.HTTP
	}
	return client
}

// For is Collect for a target resolved without error; with no target
// ("" and nil) it returns what does not depend on one: the debug
// directories and the debuginfod setting.
func (c *Collector) For(ctx context.Context, tgt string, res *target.Result) (*Info, error) {
	return c.Collect(ctx, tgt, res, nil)
}

// Collect lists the modules of a resolved target and finds their debug
// files and, for a Python target, its debugger extensions. rerr is the
// error Resolve returned: a target that is not Python (target.ErrNotPython)
// still has its modules' debug files listed; any other error is returned.
func (c *Collector) Collect(ctx context.Context, tgt string, res *target.Result, rerr error) (*Info, error) {
	python := rerr == nil && res != nil
	if rerr != nil && !errors.Is(rerr, target.ErrNotPython) {
		return nil, rerr
	}
	di := &Info{Target: tgt}
	di.DebugDirs, di.Warnings = c.DebugDirs()
	if c.Warn != nil {
		for _, w := range di.Warnings {
			c.Warn(w)
		}
	}
	client := c.client()
	di.Debuginfod = DebuginfodState{URLs: client.URLs, Cache: client.CacheDir, Offline: c.Offline}
	if tgt == "" && res == nil {
		return di, nil
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
	case res != nil && res.TargetKind == target.KindCore:
		// A core's NT_FILE note, its files read under its root (a
		// bundle's unpacked tree) when it has one.
		di.Container = res.Container
		mods = c.coreModules(res, di)
	default:
		p, err := c.fileModule(tgt, res)
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
	loc := &debugfile.Locator{
		DebugDirs:  di.DebugDirs,
		Debuginfod: fetcher{client, c.DownloadFailed},
		Offline:    di.Debuginfod.Offline || len(client.URLs) == 0,
	}
	if res != nil && (res.TargetKind == target.KindPID || res.TargetKind == target.KindCore) && res.Container {
		di.ContainerDebugDirs = loc.RootDirs(res.Root)
	}
	for _, r := range loc.LocateAll(ctx, mods, 8) {
		md := Module{Path: r.Module.Path, Debug: r.Found}
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
		di.Extensions = c.FindExtensions(res)
	}
	return di, nil
}

// IsMachO reports whether the file target tgt (relative to cwd) is a
// Mach-O file: its debug information is found by CollectMachO.
func IsMachO(tgt, cwd string) bool {
	if !filepath.IsAbs(tgt) && cwd != "" {
		tgt = filepath.Join(cwd, tgt)
	}
	f, err := saferead.Open(tgt)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		return false
	}
	return machoinfo.IsMachO(b[:])
}

// CollectMachO finds the .dSYM of the Mach-O file tgt for each of its
// architectures, in lldb's order (detect/dsym): beside it, in the debug
// directories, then in the store by UUID.
func (c *Collector) CollectMachO(tgt string) (*Info, error) {
	abs := tgt
	if !filepath.IsAbs(abs) && c.Cwd != "" {
		abs = filepath.Join(c.Cwd, abs)
	}
	abs, err := filepath.Abs(abs)
	if err != nil {
		return nil, err
	}
	info, err := machoinfo.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	di, err := c.Collect(context.Background(), "", nil, nil)
	if err != nil {
		return nil, err
	}
	di.Target = tgt
	loc := &dsym.Locator{DebugDirs: di.DebugDirs, Store: c.StoreDir}
	arches := loc.Locate(abs, info)
	m := Module{Path: abs, MachO: &MachO{Universal: info.Universal, Arches: arches}}
	m.Debug = debugfile.Found{Via: debugfile.ViaNone, Kind: debugfile.KindNone}
	if len(arches) > 0 {
		a := arches[0]
		switch a.Via {
		case dsym.ViaEmbedded:
			m.Debug = debugfile.Found{Via: debugfile.ViaEmbedded, Path: abs, Kind: debugfile.KindDWARF}
		case dsym.ViaBeside, dsym.ViaDebugDir, dsym.ViaStore:
			m.Debug = debugfile.Found{Via: debugfile.ViaDSYM, Path: a.DWARF, Kind: debugfile.KindDWARF}
		case dsym.ViaDebugMap:
			m.Debug = debugfile.Found{Via: debugfile.ViaDebugMap, Path: a.Objects[0], Kind: debugfile.KindDWARF}
		default:
			if info.Arches[0].Symtab {
				m.Debug.Kind = debugfile.KindSymtab
			}
		}
		for _, a := range arches {
			for _, r := range a.Rejected {
				m.Debug.Rejected = append(m.Debug.Rejected, debugfile.Rejection{Path: r.Path, Reason: r.Reason})
			}
		}
	}
	di.Modules = []Module{m}
	return di, nil
}

// coreModules are the files a core's process mapped, from its notes.
// A file that is gone from this machine, or is no longer the one the
// process mapped, is looked for by the build-id the core recorded
// (build-id directories, debuginfod), never by the file now at its path,
// and a warning says so.
func (c *Collector) coreModules(res *target.Result, di *Info) []debugfile.Module {
	var mods []debugfile.Module
	for _, m := range res.Modules {
		host, err := rootfs.HostPath(res.Root, m.Path)
		if err != nil {
			continue
		}
		if m.BuildID == "" {
			// Mapped data files (locale archives, caches) are no modules.
			if _, err := elfinfo.Open(host, elfinfo.Options{}); errors.Is(err, elfinfo.ErrNotELF) {
				continue
			}
		}
		dm := debugfile.Module{Path: m.Path, Root: res.Root}
		if m.Path == res.Exe && res.Interpreter != "" && res.Interpreter != res.Exe {
			dm.Also = []string{res.Interpreter}
		}
		if m.BuildID != "" {
			info, err := elfinfo.Open(host, elfinfo.Options{Producer: true})
			switch {
			case err != nil:
				dm.Info = &elfinfo.Info{BuildID: m.BuildID}
			case info.BuildID != m.BuildID:
				dm.Info = &elfinfo.Info{BuildID: m.BuildID}
				w := fmt.Sprintf("%s changed since the core was written (the core's build-id is %s, the file's %s): its debug file is looked for by the core's build-id", m.Path, m.BuildID, info.BuildID)
				di.Warnings = append(di.Warnings, w)
				if c.Warn != nil {
					c.Warn(w)
				}
			default:
				dm.Info = info
			}
		}
		mods = append(mods, dm)
	}
	return mods
}

// fileModule is the path of a file target's own module: the file itself,
// or a venv's bin/python, or a script's interpreter.
func (c *Collector) fileModule(tgt string, res *target.Result) (string, error) {
	if res != nil && res.Exe != "" {
		return res.Exe, nil
	}
	abs := tgt
	if !filepath.IsAbs(abs) && c.Cwd != "" {
		abs = filepath.Join(c.Cwd, abs)
	}
	abs, err := filepath.Abs(abs)
	if err != nil {
		return "", err
	}
	if _, err := elfinfo.Open(abs, elfinfo.Options{}); err != nil {
		return "", fmt.Errorf("%s: %w", abs, err)
	}
	return abs, nil
}

// fetcher adapts the debuginfod client to the locator, and reports the
// downloads a bound stopped to failed.
type fetcher struct {
	c      *debuginfod.Client
	failed func(error)
}

func (f fetcher) Cached(id string) (string, bool) { return f.c.Cached(id, "debuginfo") }

func (f fetcher) Fetch(ctx context.Context, ids []string) map[string]debugfile.FetchResult {
	out := map[string]debugfile.FetchResult{}
	for _, r := range f.c.Fetch(ctx, "debuginfo", ids) {
		out[r.BuildID] = debugfile.FetchResult{Path: r.Path, Err: r.Err}
		if f.failed != nil && r.Err != nil && ctx.Err() == nil &&
			(errors.Is(r.Err, debuginfod.ErrTooLarge) || errors.Is(r.Err, debuginfod.ErrNoSpace) || errors.Is(r.Err, debuginfod.ErrCut)) {
			f.failed(r.Err)
		}
	}
	return out
}

// FindExtensions looks for the gdb and lldb extensions of the
// interpreter.
func (c *Collector) FindExtensions(res *target.Result) Extensions {
	in := pyext.Input{
		Interpreter: res.Interpreter,
		Libpython:   res.Libpython,
		Version:     res.Python.Version,
		ABIFlags:    res.Python.ABIFlags,
		Extra:       c.Extensions,
		CacheDir:    c.CacheDir,
		UID:         c.UID,
		// A foreign target's own files are looked at (doctor lists them
		// as refused) but never chosen.
		Foreign: len(target.Foreign(res, c.UID)) > 0,
	}
	if res.Container {
		in.Root = res.Root
	}
	var ex Extensions
	found, tried, _ := pyext.FindGDB(in)
	ex.GDBTried = tried
	if found != nil {
		ex.GDB = found.Path
		if found.HostPath != "" {
			ex.GDB = found.HostPath // the file this machine sources
		}
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
	sp := pyext.SitePackages(prefixes, res.Python.Version, c.Home)
	lf, ltried, _ := pyext.FindLLDB(in, sp)
	ex.LLDBTried = ltried
	if lf != nil {
		ex.LLDB = lf.Path
	}
	return ex
}
