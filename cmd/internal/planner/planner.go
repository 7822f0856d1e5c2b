package planner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/cmd/internal/walkerdir"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/dsym"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/rootfs"
)

// Inferior is what a debugger command line opens, in gdb's word: a
// process, a program (started by the debugger or not), a core, or a
// program and its core. (A target is the one string
// cmd/internal/target resolves to an interpreter; Build picks it from
// the inferior.)
type Inferior struct {
	PID     int
	Core    string
	Program string
	// Args are the program's arguments (gdb --args, lldb --).
	Args []string
	// Launch is true when the program is started by the debugger.
	Launch bool
}

// Options are the services and settings Build uses.
type Options struct {
	// Fast loads only what Python frames need (--fast).
	Fast bool
	// Resolve resolves a target (a PID or a file) to its interpreter.
	Resolve func(ctx context.Context, tgt string) (*target.Result, error)
	// Collect gathers the debug information of a resolved target; with
	// no target ("" and nil), the debug directories and the debuginfod
	// setting (debugsearch.Collector.For).
	Collect func(ctx context.Context, tgt string, res *target.Result) (*debugsearch.Info, error)
	// SourceRules are the source path rules for the target; nil: none.
	SourceRules func(ctx context.Context, res *target.Result, di *debugsearch.Info) ([]plan.SourceRule, error)
	// ReadCore reads a core file whose executable is on this machine;
	// nil: core.OpenIn with this machine's root.
	ReadCore func(path string) (*core.Info, error)
	// DataHome is the directory the stack walker is written under
	// ($XDG_DATA_HOME).
	DataHome string
	// UID is the user pyattach runs as: a target of another user, or in
	// a container, is foreign (target.Foreign).
	UID int
	// Warn, when not nil, receives what keeps a part of the plan out
	// without stopping the debugger (the walker cannot be written).
	Warn func(error)
	// MachO, when not nil, reports whether a program file is a Mach-O
	// module (macOS), and CollectMachO finds its .dSYMs
	// (debugsearch.Collector.CollectMachO): such a program gets a plan of
	// its own (see machO).
	MachO        func(path string) bool
	CollectMachO func(ctx context.Context, path string) (*debugsearch.Info, error)
	// LLDBFindsBesideDSYM: lldb finds X.dSYM beside X by itself (on
	// macOS); elsewhere every .dSYM is added with target symbols add.
	LLDBFindsBesideDSYM bool
}

// Build resolves what t opens and gathers everything the debugger needs
// for it; with no target, the plan of a debugger the user attaches from.
func Build(ctx context.Context, t Inferior, opts Options) (plan.Plan, *debugsearch.Info, error) {
	p := plan.Plan{PID: t.PID, Core: t.Core, Args: t.Args, Fast: opts.Fast}
	if t.Core != "" {
		if err := core.CheckRegular(t.Core); err != nil {
			return p, nil, err
		}
	}
	// What to resolve: the process, else the program, else the core's.
	tgt := ""
	var coreInfo *core.Info
	switch {
	case t.PID != 0:
		tgt = strconv.Itoa(t.PID)
	case t.Program != "" && t.Core == "" && opts.MachO != nil && opts.CollectMachO != nil && opts.MachO(t.Program):
		return machO(ctx, p, t, opts)
	case t.Program != "":
		tgt = t.Program
		if t.Core != "" {
			// PROGRAM CORE: the core still says whose files it may read
			// (none when it cannot be read: gdb says why).
			coreInfo, _ = readCore(opts)(t.Core)
		}
	case t.Core != "":
		info, err := readCore(opts)(t.Core)
		if err != nil {
			return p, nil, err
		}
		coreInfo = info
		tgt = info.Exe
		p.Findings = append(p.Findings, fmt.Sprintf("core %s was dumped by %s", t.Core, info.Exe))
	default:
		return targetless(ctx, p, opts)
	}
	if opts.Resolve == nil || opts.Collect == nil {
		return p, nil, errors.New("planner: Options.Resolve and Options.Collect are required")
	}
	p.Target = tgt
	res, rerr := opts.Resolve(ctx, tgt)
	if rerr != nil {
		return p, nil, fmt.Errorf("%s: %w", tgt, rerr)
	}
	di, err := opts.Collect(ctx, tgt, res)
	if err != nil {
		return p, nil, err
	}
	p, err = forResult(ctx, p, t, res, di, opts)
	if err != nil {
		return p, nil, err
	}
	if p.Walker != nil && t.PID == 0 && coreInfo != nil {
		// A core's source files are read as its user, when core.OpenIn
		// kept it; as anyone otherwise.
		p.Walker.Creds = (*plan.Creds)(coreInfo.Owner)
	}
	return p, di, nil
}

// readCore is opts.ReadCore, by default core.OpenIn on this machine.
func readCore(opts Options) func(string) (*core.Info, error) {
	if opts.ReadCore != nil {
		return opts.ReadCore
	}
	return func(path string) (*core.Info, error) { return core.OpenIn(path, "") }
}

// forResult fills p for a resolved target and its debug information.
func forResult(ctx context.Context, p plan.Plan, t Inferior, res *target.Result, di *debugsearch.Info, opts Options) (plan.Plan, error) {
	// The program file: for an attached process or a core, the real
	// interpreter (same build-id as a venv copy), so that the debugger's
	// own lookups by path work; a launched program stays as given, so
	// that its venv stays active.
	// A process whose root reads as "/" from here (pivot_root: podman,
	// docker) is debugged through gdb's default "target:" sysroot, which
	// reads its files inside its mount namespace: gdb canonicalises a
	// /proc/PID/root path and would land on the host's file of that name.
	hidden := res.HiddenRoot()
	if !t.Launch && t.Program == "" {
		switch {
		case hidden:
			p.Program = ""
		case res.Container:
			p.Program = res.ReadFrom
		case res.Embedded || res.ExeDeleted:
			p.Program = ""
		default:
			p.Program = res.Interpreter
		}
	}
	if res.Container && !hidden {
		p.Sysroot = res.Root
	}
	// A target whose files are not the user's gets no auto-loaded code
	// at all (gdbgen: set auto-load off); the extension FindExtensions
	// chose for it is the host's, sourced explicitly below.
	p.Foreign = target.Foreign(res, opts.UID)
	foreign := len(p.Foreign) > 0
	if res.Container && res.Root != "" && t.PID != 0 {
		// lldb has no "target:" and no sysroot for a local process: it
		// reads the process's files under its root (for a chroot too,
		// where it would load this machine's libraries of the same
		// names and unwind nothing), which the kernel resolves in its
		// namespace (see lldbgen), and its debug files in the root's
		// own debug directories.
		p.LLDBRoot, p.LLDBExe = res.Root, res.Exe
		for _, d := range di.DebugDirs {
			in := filepath.Join(res.Root, d)
			if st, err := os.Stat(in); err == nil && st.IsDir() {
				p.LLDBDebugDirs = append(p.LLDBDebugDirs, in)
			}
		}
	}
	for _, d := range debuggerDebugDirs(di.DebugDirs) {
		if hidden && rootfs.Under(d, res.Root) {
			// gdb looks under "target:" + each debug directory itself.
			continue
		}
		p.DebugDirs = append(p.DebugDirs, d)
	}
	p.Debuginfod = plan.Debuginfod{
		Enabled: len(di.Debuginfod.URLs) > 0 && !di.Debuginfod.Offline,
		URLs:    di.Debuginfod.URLs,
	}
	for _, m := range di.Modules {
		if f := symbolFileFor(m, res); f != "" {
			mod := m.Path
			if hidden && rootfs.Under(f, res.Root) {
				continue // the same realpath trap; gdb finds it through target:
			}
			if res.Container && !hidden {
				mod = filepath.Join(res.Root, m.Path)
			}
			p.SymbolFiles = append(p.SymbolFiles, plan.SymbolFile{Module: mod, File: f, ByContent: m.Debug.Via == debugfile.ViaContent})
		}
	}
	// The extension: left to gdb's auto-load when gdb will find it for
	// the program file, allowed as that one file when it sits beside the
	// binary, sourced explicitly otherwise.
	if ext := di.Extensions.GDB; ext != "" {
		host := ext
		prog := p.Program
		if real, err := filepath.EvalSymlinks(prog); err == nil {
			prog = real
		}
		// gdb also trusts the real path of a safe-path entry, read as a
		// pattern: name the real file, so that it is the entry itself.
		if real, err := filepath.EvalSymlinks(host); err == nil {
			host = real
		}
		switch {
		case foreign:
			// Nothing is auto-loaded for it: the host's own file (never
			// one of the same name under its root), sourced.
			p.GDBExtension = ext
		case prog != "" && host == debugsearch.GDBAutoLoadDir+prog+"-gdb.py":
			// gdb loads it itself from its default safe path.
		case prog != "" && host == prog+"-gdb.py":
			p.GDBAutoLoad = append(p.GDBAutoLoad, host)
		default:
			p.GDBExtension = host
		}
	}
	p.LLDBExtension = di.Extensions.LLDB
	// The walker adds py-bt where CPython's extension cannot answer; when
	// it cannot be written the debugger still starts, without it.
	var err error
	if p.Walker, err = WalkerFor(res, opts.DataHome); err != nil {
		if opts.Warn != nil {
			opts.Warn(err)
		}
		p.Walker = nil
	}
	if opts.SourceRules != nil {
		rules, err := opts.SourceRules(ctx, res, di)
		if err != nil {
			return p, err
		}
		p.SourceMap = rules
	}
	if opts.Fast && p.Walker != nil {
		// py-bt from memory: no DWARF to read, no extension that needs it.
		p.NoDWARF = true
		p.GDBExtension, p.GDBAutoLoad, p.SymbolFiles = "", nil, nil
	}
	if opts.Fast {
		p.FastLibs = fastLibs(res)
	}
	p.Findings = append(p.Findings, findings(res, di)...)
	if p.Walker != nil {
		p.Findings = append(p.Findings, "stack walker: "+p.Walker.Dir+" (py-bt from memory; CPython's extension answers instead when it reads every frame)")
	}
	return p, nil
}

// debuggerDebugDirs are the debug directories handed to the debugger:
// those the collector kept (it checked them with saferead.CheckTrusted)
// that exist (one that does not exist yet could be made by someone else
// before gdb reads scripts from it), without gdb's own default.
func debuggerDebugDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); d != "/usr/lib/debug" && err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// targetless is the plan for a debugger started with no target (the
// user attaches from inside it): what does not depend on a target, the
// debug directories and the debuginfod setting, and the stack walker,
// which reads the version from memory when asked (Py_Version,
// _Py_DebugOffsets).
func targetless(ctx context.Context, p plan.Plan, opts Options) (plan.Plan, *debugsearch.Info, error) {
	if opts.Collect == nil {
		return p, nil, errors.New("planner: Options.Collect is required")
	}
	di, err := opts.Collect(ctx, "", nil)
	if err != nil {
		return p, nil, err
	}
	p.DebugDirs = debuggerDebugDirs(di.DebugDirs)
	p.Debuginfod = plan.Debuginfod{Enabled: len(di.Debuginfod.URLs) > 0 && !di.Debuginfod.Offline, URLs: di.Debuginfod.URLs}
	dir, err := walkerdir.Write(opts.DataHome)
	if err != nil {
		if opts.Warn != nil {
			opts.Warn(err)
		}
	} else {
		p.Walker = &plan.Walker{Dir: dir}
		p.Findings = append(p.Findings, "stack walker: "+dir+" (py-bt from memory, for the process you attach to)")
	}
	p.Findings = append(p.Findings, "no target: attach from inside the debugger (gdb: attach PID; lldb: process attach --pid PID)")
	return p, &debugsearch.Info{DebugDirs: di.DebugDirs}, nil
}

// symbolFileFor returns a debug file the debugger would not find alone:
// one found through debuginfod (the debugger's own client may be off),
// a build-id-less module's twin found by content, or through .gnu_debuglink in a directory other than the module's own.
func symbolFileFor(m debugsearch.Module, res *target.Result) string {
	switch m.Debug.Via {
	case debugfile.ViaDebuginfod, debugfile.ViaDebuginfodCache, debugfile.ViaContent:
		// A twin matched by content: no build-id or debuglink leads the
		// debugger to it.
		return m.Debug.Path
	case debugfile.ViaDebugLink:
		dir := filepath.Dir(m.Path)
		if res.Container {
			dir = filepath.Join(res.Root, dir)
		}
		fdir := filepath.Dir(m.Debug.Path)
		if fdir != dir && fdir != filepath.Join(dir, ".debug") {
			return m.Debug.Path
		}
	}
	return ""
}

// fastLibs are the shared libraries Python frames need: libpython, libc
// and the dynamic loader.
func fastLibs(res *target.Result) []string {
	libs := []string{`/libc\.so`, `/ld-linux[^/]*\.so`}
	if res.Libpython != "" {
		libs = append([]string{regexp.QuoteMeta("/" + filepath.Base(res.Libpython))}, libs...)
	}
	return libs
}

// findings are the header comment's lines.
func findings(res *target.Result, di *debugsearch.Info) []string {
	var out []string
	out = append(out, fmt.Sprintf("interpreter: %s (build-id %s, via %s)", res.Interpreter, res.BuildID, res.Via))
	out = append(out, fmt.Sprintf("python: %s%s", res.Python.Version, map[bool]string{true: " debug build", false: ""}[res.Python.DebugBuild]))
	if res.Exe != res.Interpreter {
		out = append(out, fmt.Sprintf("executable: %s (%s venv)", res.Exe, res.Venv.Kind))
	}
	if res.Libpython != "" {
		out = append(out, "libpython: "+res.Libpython)
	}
	for _, m := range di.Modules {
		if m.Path == res.Exe || m.Path == res.Interpreter || m.Path == res.Libpython {
			out = append(out, fmt.Sprintf("debug info of %s: %s %s %s", m.Path, m.Debug.Via, m.Debug.Kind, m.Debug.Path))
		}
	}
	if di.Extensions.GDB != "" {
		out = append(out, fmt.Sprintf("gdb extension: %s (Python %s)", di.Extensions.GDB, di.Extensions.GDBVersion))
	} else {
		out = append(out, "gdb extension: none found; run: pyattach fetch-extension "+res.Target)
	}
	return out
}

// machO is the plan for a Mach-O program (a macOS module read on any
// host): its .dSYMs that lldb would not find alone as symbol files (by
// UUID, one per bundle), and the source rules its DWARF calls for. No
// Python is resolved: there is no process to read.
func machO(ctx context.Context, p plan.Plan, t Inferior, opts Options) (plan.Plan, *debugsearch.Info, error) {
	di, err := opts.CollectMachO(ctx, t.Program)
	if err != nil {
		return p, nil, err
	}
	p.Target = t.Program
	p.DebugDirs = debuggerDebugDirs(di.DebugDirs)
	seen := map[string]bool{}
	for _, m := range di.Modules {
		if m.MachO == nil {
			continue
		}
		for _, a := range m.MachO.Arches {
			switch {
			case a.DWARF == "" || seen[a.DWARF]:
				continue
			case a.Via == dsym.ViaBeside && opts.LLDBFindsBesideDSYM:
				p.Findings = append(p.Findings, fmt.Sprintf("%s (%s, UUID %s): lldb finds %s beside it", m.Path, a.CPU, a.UUID, a.Bundle))
				continue
			}
			seen[a.DWARF] = true
			p.SymbolFiles = append(p.SymbolFiles, plan.SymbolFile{Module: m.Path, File: a.DWARF, UUID: a.UUID})
			p.Findings = append(p.Findings, fmt.Sprintf("%s (%s, UUID %s): symbols from %s (%s)", m.Path, a.CPU, a.UUID, a.Bundle, a.Via))
		}
	}
	if opts.SourceRules != nil {
		rules, err := opts.SourceRules(ctx, nil, di)
		if err != nil {
			return p, nil, err
		}
		p.SourceMap = rules
	}
	return p, di, nil
}
