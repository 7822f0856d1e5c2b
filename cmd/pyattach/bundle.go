package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/bundle"
	"github.com/pyattach/pyattach/cmd/internal/bundle/archive"
	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/dump"
	"github.com/pyattach/pyattach/cmd/internal/gcore"
	"github.com/pyattach/pyattach/cmd/internal/planner"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/sources"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/venv/environ"
)

// BundleCmd packs a core with everything needed to debug it elsewhere.
type BundleCmd struct {
	Target        string `arg:"" help:"A PID (its core is taken and the process keeps running), or a core file; with --list, a bundle."`
	Output        string `short:"o" help:"The bundle to write (required unless --list)." placeholder:"FILE" type:"path"`
	List          bool   `help:"Print the manifest of the bundle TARGET."`
	JSON          bool   `help:"With --list: print the manifest as JSON."`
	Root          string `help:"For a core file: the directory standing for its process's / (a container's root, /proc/PID/root), where its files are read." placeholder:"DIR" type:"path"`
	NativeSources bool   `name:"native-sources" help:"Also pack the C source files of every thread's native frames, found under the --source trees (pyattach --source cpython=DIR bundle --native-sources PID -o FILE)."`
	MaxSize       string `name:"max-size" default:"16GiB" help:"Refuse to write (or, opening, to unpack) a bundle whose files add up to more than SIZE (bytes, or with K, M, G, KiB, MiB, GiB)." placeholder:"SIZE"`
}

// Help is the long help.
// takeCore writes the core of the live process pid to path, stopping it
// as briefly as it can, and says how long it was stopped: pyattach's own
// writer (cmd/internal/gcore), or gdb's gcore on an architecture the
// writer does not know.
func takeCore(ctx context.Context, procRoot string, pid int, path string) (time.Duration, error) {
	st, err := gcore.Take(ctx, pid, path, gcore.Options{ProcRoot: procRoot})
	if errors.Is(err, gcore.ErrUnsupported) {
		return gdbGcore(ctx, pid, path)
	}
	return st.Stopped, err
}

// Run packs or lists a bundle.
func (c *BundleCmd) Run(g *Globals, app *App, cfg *config.Config) error {
	max, err := parseSize(c.MaxSize)
	if err != nil {
		return withHint(fmt.Errorf("--max-size %q: %w", c.MaxSize, err), "give a size such as 2GiB or 500M")
	}
	if c.List {
		return c.list(app, max)
	}
	if c.Output == "" {
		return withHint(errors.New("bundle: no output file"), "name it with -o: pyattach bundle %s -o FILE", c.Target)
	}
	ctx := app.Ctx
	out, err := filepath.Abs(c.Output)
	if err != nil {
		return err
	}
	opts := bundle.Options{
		Root:      c.Root,
		CreatedBy: "pyattach " + versionInfo(),
		MaxSize:   max,
		Resolve: func(ctx context.Context, exe, root string) (*target.Result, error) {
			return target.ResolveInRoot(ctx, exe, root, target.Options{ProcRoot: g.ProcRoot, Env: app.Env, Cwd: app.Cwd, NoModules: true})
		},
		Collect: func(ctx context.Context, res *target.Result) (*debugsearch.Info, error) {
			return newCollector(g, app, cfg).Collect(ctx, res.Exe, res, nil)
		},
		Sources: func(ctx context.Context, core, root string) ([]string, error) {
			return frameSources(ctx, core, root, g, app, cfg)
		},
		Warn: func(s string) { fmt.Fprintf(app.Stderr, "pyattach: warning: %s\n", safetext.EscapeControls(s)) },
	}
	if c.NativeSources {
		opts.NativeSources = func(ctx context.Context, core, root string, res *target.Result, di *debugsearch.Info) ([]bundle.NativeSource, error) {
			return nativeSources(ctx, core, root, res, di, g, app, cfg)
		}
	}
	if target.IsPID(c.Target) {
		pid, err := target.ParsePID(c.Target)
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		if err := proc.CheckPlatform(g.GOOS, pid); err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		if c.Root != "" {
			return withHint(errors.New("bundle: --root is for a core file"), "a live process's root is read through /proc: pyattach bundle %d -o FILE", pid)
		}
		dir, err := privateCacheDir(app.dirs(), "bundle-work")
		if err != nil {
			return scriptCacheError(err)
		}
		tmp, err := safefs.CreateTemp(dir)
		if err != nil {
			return err
		}
		tmp.Close()
		defer os.Remove(tmp.Name())
		stopped, err := takeCore(ctx, g.ProcRoot, pid, tmp.Name())
		if err != nil {
			return withHint(fmt.Errorf("bundle %d: cannot take its core: %w", pid, err), "run as the process's user or with sudo, or allow ptrace: echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope")
		}
		fmt.Fprintf(app.Stderr, "pyattach: process %d was stopped for %s while its core was taken\n", pid, stopped.Round(time.Millisecond))
		opts.Core, opts.PID, opts.Stopped = tmp.Name(), pid, stopped
		if root := filepath.Join(g.ProcRoot, strconv.Itoa(pid), "root"); inOtherRoot(g.ProcRoot, pid) {
			// The core's paths are as /proc/PID/maps reads from here: this
			// machine's for a chroot (its directory is reachable from
			// here), the process's own under pivot_root ("/" here).
			opts.SourceRoot = root
			if l, err := os.Readlink(root); err == nil && l == "/" {
				opts.Root = root
			}
		}
	} else {
		core, err := inflatedPath(app, c.Target)
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		opts.Core = core
		opts.SourceRoot = c.Root
	}
	if opts.SourceRoot != "" && opts.Root == "" {
		// A chroot's debug files are in its own debug directory.
		g2 := *g
		g2.DebugDir = append(append([]string(nil), g.DebugDir...), filepath.Join(opts.SourceRoot, "usr/lib/debug"))
		g = &g2
	}
	m, items, err := bundle.Plan(ctx, opts)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", c.Target, err)
	}
	if m.Total() > max {
		return withHint(fmt.Errorf("bundle %s: its files add up to %d bytes, over --max-size %s", c.Target, m.Total(), c.MaxSize), "raise the cap: pyattach bundle --max-size %dGiB ...", m.Total()>>30+1)
	}
	tf, err := safefs.CreateTemp(filepath.Dir(out))
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	defer tf.Cleanup()
	if err := bundle.Pack(ctx, tf, m, items, max); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("bundle %s: %w", c.Target, err)
	}
	if err := tf.Chmod(0o644); err != nil {
		return err
	}
	if err := tf.Commit(out); err != nil {
		return fmt.Errorf("bundle: write %s: %w", out, err)
	}
	st, _ := os.Stat(out)
	var size int64
	if st != nil {
		size = st.Size()
	}
	fmt.Fprintf(app.Stderr, "pyattach: wrote %s: %d files, %d bytes (%d uncompressed); %d missing (bundle --list says which)\n",
		safetext.EscapeControls(out), len(m.Entries), size, m.Total(), len(m.Missing))
	return nil
}

// inOtherRoot reports a process whose root is not pyattach's.
func inOtherRoot(procRoot string, pid int) bool {
	p, err := proc.New(procRoot).Process(pid)
	return err == nil && p.Container
}

// list prints a bundle's manifest.
func (c *BundleCmd) list(app *App, max int64) error {
	m, err := bundle.ReadManifest(c.Target, max)
	if err != nil {
		return bundleError(c.Target, err, true)
	}
	if c.JSON {
		return writeJSON(app.Stdout, m)
	}
	tw := tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
	row := func(format string, args ...any) {
		var b strings.Builder
		safetext.Fprintf(&b, format, args...)
		fmt.Fprintln(tw, b.String())
	}
	t := m.Target
	row("process\t%d  %s", t.PID, t.Exe)
	if t.Python != "" {
		row("python\t%s%s", t.Python, t.ABIFlags)
	}
	if t.Root != "" {
		row("root\t%s", t.Root)
	}
	if t.StoppedMillis != nil {
		row("stopped\t%d ms (core taken by pyattach)", *t.StoppedMillis)
	}
	row("packed by\t%s", m.CreatedBy)
	row("files\t%d, %d bytes uncompressed", len(m.Entries), m.Total())
	tw.Flush()
	fmt.Fprintln(app.Stdout)
	tw = tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
	row("KIND\tSIZE\tBUILD-ID\tNAME")
	for _, e := range m.Entries {
		row("%s\t%d\t%s\t%s", e.Kind, e.Size, short(e.BuildID), e.Name)
	}
	tw.Flush()
	if len(m.Missing) > 0 {
		fmt.Fprintln(app.Stdout)
		tw = tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
		row("MISSING\tPATH\tWHY")
		for _, x := range m.Missing {
			row("%s\t%s\t%s", x.Kind, x.Path, x.Reason)
		}
		tw.Flush()
	}
	return nil
}

// bundleError is the one-line error for a bundle that cannot be read.
func bundleError(name string, err error, listing bool) error {
	switch {
	case errors.Is(err, archive.ErrTooLarge) && listing:
		return withHint(err, "if you trust its size, raise the cap: pyattach bundle --max-size 64GiB --list %s", name)
	case errors.Is(err, archive.ErrTooLarge):
		return withHint(err, "if you trust its size and have the room, raise the cap: PYATTACH_BUNDLE_MAX_SIZE=64GiB pyattach ...")
	case errors.Is(err, archive.ErrHostile):
		return withHint(err, "the bundle breaks the format's rules and was not unpacked; ask its sender for a new one (pyattach bundle PID -o FILE)")
	case errors.Is(err, archive.ErrNotBundle):
		return withHint(err, "give a file written by: pyattach bundle PID -o FILE")
	}
	return err
}

// openBundle unpacks a bundle into pyattach's cache (once).
func openBundle(app *App, name string) (*bundle.Opened, error) {
	dir, err := privateCacheDir(app.dirs(), "bundles")
	if err != nil {
		return nil, scriptCacheError(err)
	}
	o, err := bundle.Open(name, dir, bundleMaxSize(app.Env))
	if err != nil {
		return nil, bundleError(name, err, false)
	}
	return o, nil
}

// bundleMaxSize is the cap on what opening a bundle unpacks:
// $PYATTACH_BUNDLE_MAX_SIZE, else archive.DefaultMaxSize.
func bundleMaxSize(env environ.Env) int64 {
	if s := env.Get("PYATTACH_BUNDLE_MAX_SIZE"); s != "" {
		if n, err := parseSize(s); err == nil {
			return n
		}
	}
	return archive.DefaultMaxSize
}

// parseSize reads 123, 10K, 5M, 2G, 2GiB (powers of 1024).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if v, ok := strings.CutSuffix(t, u.suf); ok {
			t, mult = strings.TrimSpace(v), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, errors.New("not a size")
	}
	return n * mult, nil
}

// frameSources runs the walker on the core, as dump does, and returns
// the files of every thread's Python frames (bundle.FrameFiles).
func frameSources(ctx context.Context, core, root string, g *Globals, app *App, cfg *config.Config) ([]string, error) {
	o, err := dumpCore(ctx, core, root, false, g, app, cfg)
	if err != nil {
		return nil, err
	}
	return bundle.FrameFiles(o), nil
}

// nativeSources finds the C source files of every thread's native
// frames (dump --native on the core), chosen by
// bundle.ChooseNativeSources among the --source trees.
func nativeSources(ctx context.Context, core, root string, res *target.Result, di *debugsearch.Info, g *Globals, app *App, cfg *config.Config) ([]bundle.NativeSource, error) {
	o, err := dumpCore(ctx, core, root, true, g, app, cfg)
	if err != nil {
		return nil, err
	}
	names := bundle.NativeFrameFiles(o)
	if len(names) == 0 {
		return nil, nil
	}
	roots, err := sourceRoots(g, cfg, app)
	if err != nil {
		return nil, err
	}
	m, err := sources.Map(ctx, res, di, roots, nil)
	if err != nil {
		return nil, err
	}
	return bundle.ChooseNativeSources(names, m, roots), nil
}

// dumpCore runs dump --json (with --native when native) on a core
// whose files are under root, and returns what it found; a partial walk
// is kept.
func dumpCore(ctx context.Context, core, root string, native bool, g *Globals, app *App, cfg *config.Config) (*dump.Output, error) {
	var out bytes.Buffer
	svc := dumpServices(g, app, cfg)
	svc.Stdout = &out
	svc.Stderr = io.Discard
	svc.CoreRoot = root
	err := dump.Run(ctx, dump.Options{Target: core, JSON: true, Native: native, Timeout: time.Minute}, svc)
	if err != nil && !errors.Is(err, dump.ErrPartial) {
		return nil, err
	}
	var o dump.Output
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// gdbGcore takes a core the way gdb's gcore script does: gdb attaches,
// writes the core and detaches. The time from the attach to the detach
// (measured inside gdb) is how long the process was stopped.
func gdbGcore(ctx context.Context, pid int, path string) (time.Duration, error) {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		return 0, err
	}
	if strings.ContainsAny(path, "\n\"") {
		return 0, fmt.Errorf("%q cannot be passed to gdb", path)
	}
	cmd := exec.CommandContext(ctx, gdb, "-nx", "-batch", "-readnever",
		"-ex", "set pagination off", "-ex", "set auto-load off", "-ex", "set debuginfod enabled off",
		"-ex", "python import time", "-ex", "python pyattach_t0 = time.monotonic()",
		"-ex", "attach "+strconv.Itoa(pid),
		"-ex", "gcore "+path,
		"-ex", "detach",
		"-ex", "python print('pyattach-stopped %.6f' % (time.monotonic() - pyattach_t0))")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	b, err := cmd.CombinedOutput()
	var stopped time.Duration
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "pyattach-stopped "); ok {
			if f, perr := strconv.ParseFloat(strings.TrimSpace(v), 64); perr == nil {
				stopped = time.Duration(f * float64(time.Second))
			}
		}
	}
	st, serr := os.Stat(path)
	if err != nil || serr != nil || st.Size() == 0 || stopped == 0 {
		msg := strings.TrimSpace(string(b))
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		return 0, fmt.Errorf("gdb gcore failed: %s", safetext.EscapeControls(msg))
	}
	return stopped, nil
}

// bundleTarget opens the bundle a debugger command line names as its
// core: the target and the arguments then name the unpacked core. A
// core that is no bundle comes back as it is, with a nil *Opened.
//
// A compressed core (inflateCore) is decompressed into the cache first,
// and the arguments name the decompressed file.
func bundleTarget(app *App, t dbgInferior, args []string) (dbgInferior, []string, *bundle.Opened, error) {
	if t.Core == "" {
		return t, args, nil, nil
	}
	if p, err := inflatedPath(app, t.Core); err != nil {
		return t, args, nil, err
	} else if p != t.Core {
		args, t.Core = replaceCoreArg(args, t.Core, p), p
		return t, args, nil, nil
	}
	if !bundle.IsBundle(t.Core) {
		return t, args, nil, nil
	}
	o, err := openBundle(app, t.Core)
	if err != nil {
		return t, args, nil, err
	}
	out := replaceCoreArg(args, t.Core, o.Core)
	t.Core = o.Core
	return t, out, o, nil
}

// replaceCoreArg is a debugger's command line args with the core file
// old, however it was given (CORE, --core=CORE, -core=CORE, -cCORE),
// replaced by new.
func replaceCoreArg(args []string, old, new string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == old {
			out[i] = new
			continue
		}
		for _, pre := range []string{"--core=", "-core=", "-c"} {
			if a == pre+old {
				out[i] = pre + new
			}
		}
	}
	return out
}

// bundlePlan is buildPlan for an unpacked bundle: the core's files are
// read under its root/, its debug files are a debug directory, and the
// target is foreign (nothing in it is auto-loaded). The bundle's own
// CPython extension replaces the host's only with --trust-bundle.
func bundlePlan(ctx context.Context, t dbgInferior, o *bundle.Opened, g *Globals, app *App, cfg *config.Config) (plan.Plan, error) {
	g2 := *g
	g2.DebugDir = append(append([]string(nil), g.DebugDir...), o.DebugDir)
	opts := plannerOptions(&g2, app, cfg)
	opts.ReadCore = func(path string) (*core.Info, error) { return core.OpenIn(path, o.Root) }
	opts.Resolve = func(ctx context.Context, tgt string) (*target.Result, error) {
		res, err := target.ResolveInRoot(ctx, tgt, o.Root, target.Options{ProcRoot: g.ProcRoot, Env: app.Env, Cwd: app.Cwd})
		if res != nil {
			res.Bundle = o.Bundle
		}
		return res, err
	}
	p, _, err := planner.Build(ctx, planner.Inferior(t), opts)
	if err != nil {
		return p, err
	}
	if g.TrustBundle {
		if o.GDBExtension == "" {
			return p, withHint(fmt.Errorf("--trust-bundle: %s holds no CPython gdb extension", o.Bundle), "leave --trust-bundle out: pyattach's walker answers py-bt")
		}
		p.GDBExtension, p.GDBAutoLoad = o.GDBExtension, nil
		p.Findings = append(p.Findings, "gdb extension: "+o.GDBExtension+" (from the bundle, trusted with --trust-bundle)")
	}
	p.SolibSearchPath = o.LibDirs()
	p.LLDBCoreSysroot = o.Root
	for _, r := range o.SourceRules() {
		p.SourceMap = append(p.SourceMap, plan.SourceRule{From: r[0], To: r[1]})
	}
	p.Findings = append(p.Findings, "bundle: "+o.Bundle+" unpacked in "+o.Dir)
	return p, nil
}
