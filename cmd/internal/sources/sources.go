// Package sources maps a target's source files: the files its modules'
// DWARF names (detect/srcscan), the missing ones grouped and mapped onto
// local source trees by verified prefix rules (detect/srcmap), and the
// groups no tree holds fetched from debuginfod servers into pyattach's
// cache, laid out as recorded (Map, through a Fetcher). `pyattach
// srcmap` prints the Result; the debugger commands, doctor and bundle
// use its rules.
package sources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/srcmap"
	"github.com/pyattach/pyattach/detect/srcscan"
)

// Result is a target's source map: what `srcmap --json` prints.
type Result struct {
	Rules      []Rule       `json:"rules"`
	Unresolved []Unresolved `json:"unresolved"`
	// Modules lists the modules whose sources were read.
	Modules []string `json:"modules"`
	// Files are the source files their DWARF names, as it names them.
	Files []string `json:"-"`
}

// Rule is one verified prefix rule.
type Rule struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Resolved int    `json:"resolved"`
	Total    int    `json:"total"`
	// Via is "debuginfod" for a tree of files fetched from debuginfod
	// servers ("" for a local source root).
	Via string `json:"via,omitempty"`
}

// Unresolved is a group of missing files no root resolves.
type Unresolved struct {
	Prefix string `json:"prefix"`
	Layout string `json:"layout"`
	Files  int    `json:"files"`
	Hint   string `json:"hint"`
}

// Map scans the DWARF of the modules that matter, groups missing
// files and infers rules onto the roots.
func Map(ctx context.Context, res *target.Result, di *debugsearch.Info, roots []srcmap.Root, src Fetcher) (*Result, error) {
	out := &Result{Rules: []Rule{}, Unresolved: []Unresolved{}}
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
	missing := srcmap.Missing(files, RegularFile)
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
		rules, unres = srcmap.Infer(groups, roots, idx, RegularFile)
	} else {
		_, unres = srcmap.Infer(groups, nil, emptyIndex{}, RegularFile)
	}
	for _, r := range rules {
		out.Rules = append(out.Rules, Rule{From: r.From, To: r.To, Resolved: r.Resolved, Total: r.Total})
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
		out.Unresolved = append(out.Unresolved, Unresolved{Prefix: u.Prefix, Layout: u.Layout, Files: u.Files, Hint: u.Hint})
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
		if RegularFile(debugfile.HostPath(res.Root, f)) {
			in++
		}
	}
	if in == 0 {
		return ""
	}
	if res.HiddenRoot() {
		return fmt.Sprintf("%d of them are in the container, not on this machine, where gdb reads sources: copy them out (podman cp or docker cp CONTAINER:%s DIR) and pass pyattach --source DIR", in, g.Prefix)
	}
	return fmt.Sprintf("%d of them are in the container: pyattach --source %s", in, shquote.Quote(debugfile.HostPath(res.Root, g.Prefix)))
}

// Fetcher fetches one source file by the build-id of a module that
// names it (the debuginfod client).
type Fetcher interface {
	FetchSource(ctx context.Context, buildID, path string) (string, error)
	// SourcesDir is the private directory the fetched trees are laid
	// out in.
	SourcesDir() (string, error)
}

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
func fetchGroupSources(ctx context.Context, src Fetcher, g srcmap.Group, owner map[string]string) (Rule, bool) {
	id := ""
	for _, f := range g.Files {
		if owner[f] != "" {
			id = owner[f]
			break
		}
	}
	if !buildid.Valid(id) {
		return Rule{}, false
	}
	sources, err := src.SourcesDir()
	if err != nil {
		return Rule{}, false
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
		return Rule{}, false
	}
	return Rule{From: g.Prefix, To: inTree(base, g.Prefix), Resolved: resolved, Total: len(g.Files), Via: "debuginfod"}, true
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
	dst := inTree(base, recorded)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return safefs.WriteFile(dst, data, 0o644)
}

type emptyIndex struct{}

func (emptyIndex) Lookup(string) []string { return nil }

// RegularFile reports whether p is a regular file (after links).
func RegularFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
