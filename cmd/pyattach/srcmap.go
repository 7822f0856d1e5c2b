package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pyattach/pyattach/cmd/internal/debuginfod"
	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/srcmap"
	"github.com/pyattach/pyattach/detect/srcscan"
	"github.com/pyattach/pyattach/venv/environ"
)

// SrcmapCmd is `pyattach srcmap`.
type SrcmapCmd struct {
	Target string `arg:"" help:"A PID, a core file, or an ELF or Mach-O file (interpreter, venv, extension module)."`
	JSON   bool   `help:"Print one JSON object: rules and unresolved groups."`
}

// SrcmapResult is what `srcmap --json` prints.
type SrcmapResult struct {
	Rules      []SrcRule       `json:"rules"`
	Unresolved []SrcUnresolved `json:"unresolved"`
	// Modules lists the modules whose sources were read.
	Modules []string `json:"modules"`
	// Files are the source files their DWARF names, as it names them.
	Files []string `json:"-"`
}

// SrcRule is one verified prefix rule.
type SrcRule struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Resolved int    `json:"resolved"`
	Total    int    `json:"total"`
	// Via is "debuginfod" for a tree of files fetched from debuginfod
	// servers ("" for a local source root).
	Via string `json:"via,omitempty"`
}

// SrcUnresolved is a group of missing files no root resolves.
type SrcUnresolved struct {
	Prefix string `json:"prefix"`
	Layout string `json:"layout"`
	Files  int    `json:"files"`
	Hint   string `json:"hint"`
}

// Run maps the target's sources.
func (c *SrcmapCmd) Run(g *Globals, app *App, cfg *Config) error {
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
	out, err := mapSources(ctx, res, di, roots, sourceClient(di, app))
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
func sourceRoots(g *Globals, cfg *Config, app *App) ([]srcmap.Root, error) {
	home := app.Env.Get("HOME")
	var roots []srcmap.Root
	for _, s := range g.Source {
		name, dir, ok := strings.Cut(s, "=")
		if !ok {
			name, dir = "", s
		}
		dir = expandPath(dir, app.Cwd, home)
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

// mapSources scans the DWARF of the modules that matter, groups missing
// files and infers rules onto the roots.
func mapSources(ctx context.Context, res *target.Result, di *debugsearch.Info, roots []srcmap.Root, src sourceFetcher) (*SrcmapResult, error) {
	out := &SrcmapResult{Rules: []SrcRule{}, Unresolved: []SrcUnresolved{}}
	seen := map[string]bool{}
	var files []string
	owner := map[string]string{} // source file -> build-id of a module naming it
	for i, m := range di.Modules {
		// A file target that is not Python: its own sources.
		if !(debugsearch.SourceModule(m.Path, res) || res == nil && i == 0) || m.Debug.Via == debugfile.ViaNone || m.Debug.Kind == debugfile.KindSymtab || m.Debug.Kind == debugfile.KindNone {
			continue
		}
		p := m.Debug.Path
		if m.Debug.Via == debugfile.ViaEmbedded && res != nil && res.Container {
			p = debugfile.HostPath(res.Root, m.Path)
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		sr, err := srcscan.ScanFile(p)
		if err != nil {
			return nil, fmt.Errorf("read sources of %s: %w", m.Path, err)
		}
		out.Modules = append(out.Modules, m.Path)
		files = append(files, sr.Files...)
		for _, f := range sr.Files {
			if _, ok := owner[f]; !ok && m.BuildID != "" {
				owner[f] = m.BuildID
			}
		}
	}
	out.Files = files
	missing := srcmap.Missing(files, fileExists)
	groups := srcmap.GroupPaths(missing)
	var idx *srcmap.FileIndex
	if len(roots) > 0 {
		var err error
		idx, err = srcmap.IndexRoots(roots, 500000)
		if err != nil {
			return nil, err
		}
	}
	var rules []srcmap.Rule
	var unres []srcmap.Unresolved
	if idx != nil {
		rules, unres = srcmap.Infer(groups, roots, idx, fileExists)
	} else {
		_, unres = srcmap.Infer(groups, nil, emptyIndex{}, fileExists)
	}
	for _, r := range rules {
		out.Rules = append(out.Rules, SrcRule{From: r.From, To: r.To, Resolved: r.Resolved, Total: r.Total})
	}
	for _, u := range unres {
		if src != nil {
			if r, ok := fetchGroupSources(ctx, src, groupOf(groups, u.Prefix), owner); ok {
				out.Rules = append(out.Rules, r)
				continue
			}
		}
		if res != nil && res.Container {
			if hint := inContainerHint(res, groupOf(groups, u.Prefix)); hint != "" {
				u.Hint = hint
			}
		}
		out.Unresolved = append(out.Unresolved, SrcUnresolved{Prefix: u.Prefix, Layout: u.Layout, Files: u.Files, Hint: u.Hint})
	}
	return out, nil
}

// inContainerHint says how to show a group's files that are missing
// here but present in the process's container (read under its root),
// or "" when they are not there either. gdb reads sources on this
// machine: a chroot's directory can be handed to --source as it is; a
// pivot_root container's (/proc/PID/root reads as "/") cannot, since
// gdb resolves that path to this machine's files, so they are copied
// out.
func inContainerHint(res *target.Result, g srcmap.Group) string {
	in := 0
	for _, f := range g.Files {
		if fileExists(debugfile.HostPath(res.Root, f)) {
			in++
		}
	}
	if in == 0 {
		return ""
	}
	if hiddenRoot(res) {
		return fmt.Sprintf("%d of them are in the container, not on this machine, where gdb reads sources: copy them out (podman cp or docker cp CONTAINER:%s DIR) and pass pyattach --source DIR", in, g.Prefix)
	}
	return fmt.Sprintf("%d of them are in the container: pyattach --source %s", in, shquote.Quote(debugfile.HostPath(res.Root, g.Prefix)))
}

// sourceFetcher fetches one source file by the build-id of a module that
// names it (the debuginfod client).
type sourceFetcher interface {
	FetchSource(ctx context.Context, buildID, path string) (string, error)
	// SourcesDir is the private directory the fetched trees are laid
	// out in.
	SourcesDir() (string, error)
}

// debuginfodSources fetches sources from debuginfod into pyattach's
// cache.
type debuginfodSources struct {
	*debuginfod.Client
	dirs environ.Dirs
}

func (d debuginfodSources) SourcesDir() (string, error) { return privateCacheDir(d.dirs, "sources") }

// maxFetchedSources bounds the files fetched for one group.
const maxFetchedSources = 2000

func groupOf(groups []srcmap.Group, prefix string) srcmap.Group {
	for _, g := range groups {
		if g.Prefix == prefix {
			return g
		}
	}
	return srcmap.Group{Prefix: prefix}
}

// fetchGroupSources asks debuginfod servers for the files of a group no
// source root resolves, and lays those it gets out under pyattach's
// cache (sources/<build-id>/<path as recorded>), so that one rule maps
// the group's prefix onto them. Directories named on the way (such as
// Debian's build-static before "..") are made too, so that the recorded
// paths resolve as written.
func fetchGroupSources(ctx context.Context, src sourceFetcher, g srcmap.Group, owner map[string]string) (SrcRule, bool) {
	id := ""
	for _, f := range g.Files {
		if owner[f] != "" {
			id = owner[f]
			break
		}
	}
	if !buildid.Valid(id) {
		return SrcRule{}, false
	}
	sources, err := src.SourcesDir()
	if err != nil {
		return SrcRule{}, false
	}
	base := filepath.Join(sources, id)
	resolved := 0
	for i, f := range g.Files {
		if i >= maxFetchedSources || ctx.Err() != nil {
			break
		}
		if owner[f] != id {
			continue
		}
		cached, err := src.FetchSource(ctx, id, f)
		if err != nil {
			continue
		}
		if err := placeSource(base, f, cached); err != nil {
			continue
		}
		resolved++
	}
	if resolved == 0 {
		return SrcRule{}, false
	}
	return SrcRule{From: g.Prefix, To: inTree(base, g.Prefix), Resolved: resolved, Total: len(g.Files), Via: "debuginfod"}, true
}

// inTree is p (absolute, as recorded) inside base, never outside it:
// ".." cannot climb above base. base is pyattach's private source cache,
// which holds no links (rootfs.Join).
func inTree(base, p string) string {
	return rootfs.Join(base, p)
}

// placeSource copies a fetched file to its recorded path inside base
// (through a temporary file), making every directory the recorded path
// names, so that "dir/../x.c" resolves in the tree as written.
func placeSource(base, recorded, cached string) error {
	parts := strings.Split(strings.TrimPrefix(recorded, "/"), "/")
	cur := "/"
	for _, c := range parts[:len(parts)-1] {
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		cur = filepath.Join(cur, c)
		if err := os.MkdirAll(inTree(base, cur), 0o755); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(cached)
	if err != nil {
		return err
	}
	return writeFileAtomic(inTree(base, recorded), data, 0o644)
}

// sourceClient is the debuginfod client for sources, or nil when no
// server may be asked.
func sourceClient(di *debugsearch.Info, app *App) sourceFetcher {
	if di == nil || di.Debuginfod.Offline || len(di.Debuginfod.URLs) == 0 {
		return nil
	}
	return debuginfodSources{debuginfod.FromEnv(app.Env, app.Stderr), app.dirs()}
}

type emptyIndex struct{}

func (emptyIndex) Lookup(string) []string { return nil }

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// sourceRules are the rules for a plan: nothing without source roots.
func sourceRules(res *target.Result, di *debugsearch.Info, g *Globals, cfg *Config, app *App) ([]plan.SourceRule, error) {
	// Without roots, nothing to map: gdb's own debuginfod client (on
	// when servers are set) fetches sources itself, and scanning on every
	// debugger start would cost time.
	roots, err := sourceRoots(g, cfg, app)
	if err != nil || len(roots) == 0 {
		return nil, err
	}
	m, err := mapSources(app.Ctx, res, di, roots, sourceClient(di, app))
	if err != nil {
		return nil, err
	}
	var rules []plan.SourceRule
	for _, r := range m.Rules {
		rules = append(rules, plan.SourceRule{From: r.From, To: r.To})
	}
	return rules, nil
}

func printSrcmap(w io.Writer, out *SrcmapResult, nroots int) {
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
