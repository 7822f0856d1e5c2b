package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/debuginfod"
	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/sources"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/srcmap"
	"github.com/pyattach/pyattach/venv/environ"
)

// SrcmapCmd is `pyattach srcmap`.
type SrcmapCmd struct {
	Target string `arg:"" help:"A PID, a core file, or an ELF or Mach-O file (interpreter, venv, extension module)."`
	JSON   bool   `help:"Print one JSON object: rules and unresolved groups."`
}

// Run maps the target's sources.
func (c *SrcmapCmd) Run(g *Globals, app *App, cfg *config.Config) error {
	ctx := app.Ctx
	var res *target.Result
	var di *debugsearch.Info
	var err error
	if debugsearch.IsMachO(c.Target, app.Cwd) {
		// A macOS module: the DWARF of its .dSYM (or of itself, or of
		// its debug map's objects) feeds the same inference.
		di, err = newCollector(g, app, cfg).CollectMachO(c.Target)
	} else {
		var rerr error
		res, rerr = resolveTarget(app, c.Target, g.targetOptions(app))
		di, err = debugInfoFor(ctx, c.Target, res, rerr, g, app, cfg)
	}
	if err != nil {
		return fmt.Errorf("srcmap %s: %w", c.Target, err)
	}
	roots, err := sourceRoots(g, cfg, app)
	if err != nil {
		return fmt.Errorf("srcmap: %w", err)
	}
	out, err := sources.Map(ctx, res, di, roots, sourceClient(di, app))
	if err != nil {
		return fmt.Errorf("srcmap %s: %w", c.Target, err)
	}
	if c.JSON {
		return writeJSON(app.Stdout, out)
	}
	printSrcmap(app.Stdout, out, len(roots))
	return nil
}

// sourceRoots gathers --source and the config file's [sources].
func sourceRoots(g *Globals, cfg *config.Config, app *App) ([]srcmap.Root, error) {
	home := app.Env.Get("HOME")
	var roots []srcmap.Root
	for _, s := range g.Source {
		name, dir, ok := strings.Cut(s, "=")
		if !ok {
			name, dir = "", s
		}
		dir = config.ExpandPath(dir, app.Cwd, home)
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() {
			return nil, withHint(fmt.Errorf("--source %s: %s is not a directory", s, dir), "give a source tree: --source DIR or --source NAME=DIR")
		}
		roots = append(roots, srcmap.Root{Name: name, Dir: dir})
	}
	names := make([]string, 0, len(cfg.Sources))
	for n := range cfg.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if st, err := os.Stat(cfg.Sources[n]); err == nil && st.IsDir() {
			roots = append(roots, srcmap.Root{Name: n, Dir: cfg.Sources[n]})
		}
	}
	return roots, nil
}

// debuginfodSources fetches sources from debuginfod into pyattach's
// cache.
type debuginfodSources struct {
	*debuginfod.Client
	dirs environ.Dirs
}

func (d debuginfodSources) SourcesDir() (string, error) { return privateCacheDir(d.dirs, "sources") }

// sourceClient is the debuginfod client for sources, or nil when no
// server may be asked.
func sourceClient(di *debugsearch.Info, app *App) sources.Fetcher {
	if di == nil || di.Debuginfod.Offline || len(di.Debuginfod.URLs) == 0 {
		return nil
	}
	return debuginfodSources{debuginfod.FromEnv(app.Env, app.Stderr), app.dirs()}
}

// sourceRules are the rules for a plan: nothing without source roots.
func sourceRules(res *target.Result, di *debugsearch.Info, g *Globals, cfg *config.Config, app *App) ([]plan.SourceRule, error) {
	// Without roots, nothing to map: gdb's own debuginfod client (on
	// when servers are set) fetches sources itself, and scanning on every
	// debugger start would cost time.
	roots, err := sourceRoots(g, cfg, app)
	if err != nil || len(roots) == 0 {
		return nil, err
	}
	m, err := sources.Map(app.Ctx, res, di, roots, sourceClient(di, app))
	if err != nil {
		return nil, err
	}
	var rules []plan.SourceRule
	for _, r := range m.Rules {
		rules = append(rules, plan.SourceRule{From: r.From, To: r.To})
	}
	return rules, nil
}

func printSrcmap(w io.Writer, out *sources.Result, nroots int) {
	// File names come from the modules' DWARF: escaped (safetext.Fprintf).
	if len(out.Rules) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FROM\tTO\tRESOLVED")
		for _, r := range out.Rules {
			safetext.Fprintf(tw, "%s\t%s\t%d/%d\n", r.From, r.To, r.Resolved, r.Total)
		}
		tw.Flush()
	} else if nroots == 0 {
		fmt.Fprintln(w, "no source roots given: --source DIR or --source NAME=DIR, or [sources] in the config file")
	} else {
		fmt.Fprintln(w, "no rule resolves any file under the given source roots")
	}
	for _, u := range out.Unresolved {
		safetext.Fprintf(w, "missing: %s (%s, %d files): %s\n", u.Prefix, layoutName(u.Layout), u.Files, u.Hint)
	}
	if len(out.Rules) == 0 && len(out.Unresolved) == 0 {
		safetext.Fprintf(w, "all source files of %d modules exist on this machine\n", len(out.Modules))
	}
}

func layoutName(l string) string {
	if l == "" {
		return "unknown layout"
	}
	return l
}
