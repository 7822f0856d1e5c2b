package srcmap

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Layouts a group of source paths can come from.
const (
	LayoutFetchContent = "cmake-fetchcontent"
	LayoutScikitBuild  = "scikit-build"
	LayoutPyenv        = "pyenv"
	LayoutDebian       = "debian"
	LayoutFedora       = "fedora"
	LayoutConda        = "conda"
	LayoutUnknown      = ""
)

// NameCPython is the Name of a group holding the interpreter's own sources.
const NameCPython = "cpython"

// Group is a set of missing source files from one source tree.
type Group struct {
	// Prefix is the directory the group's files lie under, as recorded
	// (a string prefix of every file, ".." never in it).
	Prefix string
	// Layout is the build layout the prefix comes from (Layout*
	// constants; "" when unknown).
	Layout string
	// Name says what the tree is: "echion" for _deps/echion-src,
	// "cpython" for interpreter trees, a Debian or Fedora package name;
	// "" when the layout does not tell.
	Name string
	// Version is the tree's version when the layout tells ("3.12.1" from
	// Python-3.12.1).
	Version string
	// Files are the group's paths, sorted.
	Files []string
}

// FileExists reports whether p names a regular file, resolving ".." and
// symbolic links through the file system as a debugger would.
func FileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Missing returns the absolute paths for which exists is false, sorted
// and without duplicates. Relative names (a compile unit without
// DW_AT_comp_dir) cannot be mapped and are left out. Compiler
// pseudo-files ("<built-in>", "<artificial>") never reach it: srcscan
// does not list them. A nil exists means FileExists.
func Missing(paths []string, exists func(string) bool) []string {
	if exists == nil {
		exists = FileExists
	}
	seen := make(map[string]bool, len(paths))
	var out []string
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || seen[p] {
			continue
		}
		seen[p] = true
		if !exists(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// GroupPaths groups absolute paths by the source tree they come from
// (see the package documentation for the layouts and the heuristic used
// for other paths). Groups are sorted by Prefix; files within a group are
// sorted and unique.
func GroupPaths(paths []string) []Group {
	byPrefix := map[string]*Group{}
	var generic []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		g, ok := classify(p)
		if !ok {
			generic = append(generic, p)
			continue
		}
		if have := byPrefix[g.Prefix]; have != nil {
			have.Files = append(have.Files, p)
			continue
		}
		g.Files = []string{p}
		byPrefix[g.Prefix] = &g
	}
	out := make([]Group, 0, len(byPrefix))
	for _, g := range byPrefix {
		out = append(out, *g)
	}
	out = append(out, clusters(generic)...)
	// A generic cluster may share its prefix with a layout group: merge.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Prefix < out[j].Prefix })
	merged := out[:0]
	for _, g := range out {
		if n := len(merged); n > 0 && merged[n-1].Prefix == g.Prefix {
			merged[n-1].Files = append(merged[n-1].Files, g.Files...)
			continue
		}
		merged = append(merged, g)
	}
	for i := range merged {
		sort.Strings(merged[i].Files)
	}
	return merged
}

// classify finds the known layout a path comes from.
func classify(p string) (Group, bool) {
	c := strings.Split(p, "/")
	for _, f := range []func([]string) (Group, bool){fetchContent, pyenv, debian, fedora, conda, scikitBuild} {
		if g, ok := f(c); ok {
			return g, true
		}
	}
	return Group{}, false
}

// plain reports whether a path component names a directory entry.
func plain(s string) bool { return s != "" && s != "." && s != ".." }

func joinComps(c []string) string {
	if len(c) == 1 && c[0] == "" {
		return "/"
	}
	return strings.Join(c, "/")
}

// fetchContent: .../_deps/<name>-src/<file>, the innermost one.
func fetchContent(c []string) (Group, bool) {
	for i := len(c) - 3; i >= 0; i-- {
		if c[i] != "_deps" {
			continue
		}
		name, ok := strings.CutSuffix(c[i+1], "-src")
		if !ok || !plain(name) || !plain(c[len(c)-1]) || hasDotDot(c[:i+2]) {
			continue
		}
		return Group{Prefix: joinComps(c[:i+2]), Layout: LayoutFetchContent, Name: name}, true
	}
	return Group{}, false
}

// pyenv: /tmp/python-build.<stamp>/<Name>-<version>/<file>.
func pyenv(c []string) (Group, bool) {
	for i := 1; i+2 < len(c); i++ {
		if !strings.HasPrefix(c[i], "python-build.") || !plain(c[i+1]) || hasDotDot(c[:i]) {
			continue
		}
		name, ver := splitNameVersion(c[i+1])
		if isCPython(name) {
			name = NameCPython
		}
		return Group{Prefix: joinComps(c[:i+2]), Layout: LayoutPyenv, Name: name, Version: ver}, true
	}
	return Group{}, false
}

// debian: /build/reproducible-path/<pkg>-<ver>/<file> or
// /build/<pkg>-<random>/<pkg>-<ver>/<file>.
func debian(c []string) (Group, bool) {
	if len(c) < 5 || c[0] != "" || c[1] != "build" || !plain(c[2]) || !plain(c[3]) {
		return Group{}, false
	}
	pkg, ver := splitNameVersion(c[3])
	if pkg == "" || ver == "" {
		return Group{}, false
	}
	if c[2] != "reproducible-path" && !strings.HasPrefix(c[2], pkg+"-") {
		return Group{}, false
	}
	name := pkg
	if isCPython(pkg) {
		name = NameCPython
	}
	return Group{Prefix: joinComps(c[:4]), Layout: LayoutDebian, Name: name, Version: ver}, true
}

// fedora: /builddir/build/BUILD/[<nvr>-build/]<name>-<ver>/<file> or
// /usr/src/debug/<name>-<ver>-<rel>.<arch>/<file>.
func fedora(c []string) (Group, bool) {
	if len(c) < 6 || c[0] != "" {
		return Group{}, false
	}
	switch {
	case c[1] == "builddir" && c[2] == "build" && c[3] == "BUILD" && plain(c[4]):
		n := 5
		if strings.HasSuffix(c[4], "-build") && len(c) > 6 && plain(c[5]) {
			n = 6
		}
		name, ver := splitNameVersion(c[n-1])
		if isCPython(name) {
			name = NameCPython
		}
		return Group{Prefix: joinComps(c[:n]), Layout: LayoutFedora, Name: name, Version: ver}, true
	case c[1] == "usr" && c[2] == "src" && c[3] == "debug" && plain(c[4]):
		name, ver := splitNVR(c[4])
		if isCPython(name) {
			name = NameCPython
		}
		return Group{Prefix: joinComps(c[:5]), Layout: LayoutFedora, Name: name, Version: ver}, true
	}
	return Group{}, false
}

var condaStamp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+)_([0-9]{9,})$`) })

// conda: <root>/<pkg>_<timestamp>/work/<file> ($SRC_DIR), and the
// environments conda-build makes beside it.
func conda(c []string) (Group, bool) {
	for i := 1; i+1 < len(c); i++ {
		m := condaStamp().FindStringSubmatch(c[i])
		if m == nil || hasDotDot(c[:i]) {
			continue
		}
		next := c[i+1]
		sub := i+2 < len(c) && (next == "work" || strings.HasPrefix(next, "_h_env") || strings.HasPrefix(next, "_build_env") || strings.HasPrefix(next, "_test_env"))
		anchored := c[i-1] == "conda-bld" || c[i-1] == "build_artifacts" || (i == 2 && c[1] == "croot")
		if !sub && !anchored {
			continue
		}
		n := i + 1
		if sub {
			n = i + 2
		}
		name := ""
		if next == "work" {
			name = m[1]
			if isCPython(name) {
				name = NameCPython
			}
		}
		return Group{Prefix: joinComps(c[:n]), Layout: LayoutConda, Name: name}, true
	}
	return Group{}, false
}

// scikitBuild: cibuildwheel mounts the project at /project.
func scikitBuild(c []string) (Group, bool) {
	if len(c) < 3 || c[0] != "" || c[1] != "project" {
		return Group{}, false
	}
	n := 2
	switch {
	case c[2] == "build" && len(c) > 4 && plain(c[3]):
		n = 4
	case c[2] == "_skbuild" && len(c) > 5 && plain(c[3]) && c[4] == "cmake-build":
		n = 5
	}
	return Group{Prefix: joinComps(c[:n]), Layout: LayoutScikitBuild}, true
}

func hasDotDot(c []string) bool {
	for _, s := range c {
		if s == ".." {
			return true
		}
	}
	return false
}

// splitNameVersion splits "python3.11-3.11.2" at the last "-" that is
// followed by a digit.
func splitNameVersion(s string) (name, version string) {
	for i := len(s) - 2; i > 0; i-- {
		if s[i] == '-' && s[i+1] >= '0' && s[i+1] <= '9' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// splitNVR splits an rpm name-version-release.arch.
func splitNVR(s string) (name, version string) {
	parts := strings.Split(s, "-")
	if len(parts) < 3 {
		return splitNameVersion(s)
	}
	return strings.Join(parts[:len(parts)-2], "-"), parts[len(parts)-2]
}

var cpythonName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(c?python|python-split|python[23](\.[0-9]+)?)$`)
})

func isCPython(name string) bool { return cpythonName().MatchString(name) }

// clusterDepth is how many leading directory components (not counting
// the root) identify a source tree under a path's top directories.
func clusterDepth(c []string) int {
	at := func(i int, s string) bool { return len(c) > i && c[i] == s }
	switch {
	case at(1, "home") && at(2, "runner") && at(3, "work"):
		return 5
	case at(1, "usr") && at(2, "local") && at(3, "src"):
		return 4
	case at(1, "home"), at(1, "Users"), at(1, "opt"), at(1, "srv"), at(1, "builds"), at(1, "__w"),
		at(1, "usr") && at(2, "src"):
		return 3
	}
	return 2
}

// clusters groups paths of no known layout (see the package doc).
func clusters(paths []string) []Group {
	type cluster struct {
		key   []string
		files []string
	}
	byKey := map[string]*cluster{}
	for _, p := range paths {
		c := strings.Split(p, "/")
		dir := c[:len(c)-1]
		if i := indexOf(dir, ".."); i >= 0 {
			dir = dir[:i]
		}
		n := clusterDepth(c)
		if len(c) > 0 && c[0] == "" {
			n++ // the empty component before an absolute path's first "/"
		}
		if len(dir) > n {
			dir = dir[:n]
		}
		k := strings.Join(dir, "/")
		if byKey[k] == nil {
			byKey[k] = &cluster{key: dir}
		}
		byKey[k].files = append(byKey[k].files, p)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kept []*cluster
	for _, k := range keys {
		cl := byKey[k]
		merged := false
		for _, m := range kept {
			if compPrefix(m.key, cl.key) {
				m.files = append(m.files, cl.files...)
				merged = true
				break
			}
		}
		if !merged {
			kept = append(kept, cl)
		}
	}
	out := make([]Group, 0, len(kept))
	for _, cl := range kept {
		out = append(out, Group{Prefix: commonDir(cl.files), Files: cl.files})
	}
	return out
}

func indexOf(c []string, s string) int {
	for i, x := range c {
		if x == s {
			return i
		}
	}
	return -1
}

// compPrefix reports whether a is a leading part of b, by components.
func compPrefix(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// commonDir is the longest common directory of paths, cut before the
// first "..", and raised until no path climbs above it with "..".
func commonDir(paths []string) string {
	var common []string
	for i, p := range paths {
		c := strings.Split(p, "/")
		dir := c[:len(c)-1]
		if i == 0 {
			common = append([]string(nil), dir...)
		}
		n := 0
		for n < len(common) && n < len(dir) && common[n] == dir[n] {
			n++
		}
		common = common[:n]
		if j := indexOf(common, ".."); j >= 0 {
			common = common[:j]
		}
		// The lowest depth the path reaches after its first ".." bounds
		// the prefix.
		depth, low, climbed := 0, len(c), false
		for _, s := range c {
			switch s {
			case "..":
				depth--
				climbed = true
			case ".", "":
				if depth == 0 && s == "" {
					depth = 1 // the leading "" of an absolute path
				}
				continue
			default:
				depth++
			}
			if climbed && depth < low {
				low = depth
			}
		}
		if climbed && low < len(common) {
			if low < 1 {
				low = 1
			}
			common = common[:low]
		}
	}
	return joinComps(common)
}
