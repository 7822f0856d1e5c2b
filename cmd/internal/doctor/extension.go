package doctor

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/pyext"
	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/gdbgen"
)

// extensionChecks: found, its version, whether gdb's Python runs it, and
// whether plain gdb's safe path would decline it.
func (s *Services) extensionChecks(ctx context.Context, res *target.Result, di *debugsearch.Info) []Check {
	ex := di.Extensions
	var out []Check
	for _, t := range ex.GDBTried {
		if file, why, ok := strings.Cut(t, ": refused: "); ok && !foreignRefusal("refused: "+why) {
			out = append(out, Check{ID: "extension.refused", Status: Warn, Summary: fmt.Sprintf("%s is not used: %s", file, why),
				Fix: "pyattach runs no extension that another user could change: chmod go-w or chown it to root or yourself, or pyattach fetch-extension " + shquote.Quote(res.Target)})
		}
	}
	if ex.GDB == "" {
		st, what := Fail, "py-bt is undefined"
		if walkerCovers(res) {
			st, what = Warn, "plain gdb has no py-bt (pyattach's walker gives pyattach gdb and lldb one)"
		}
		looked := s.extensionPlaces(res, ex.GDBTried)
		var where []string
		for _, pl := range looked {
			where = append(where, pl.name)
		}
		return append(out, Check{ID: "extension", Status: st,
			Summary: fmt.Sprintf("no CPython gdb extension (python%s-gdb.py, libpython.py) for Python %s: %s; looked %s", cmp.Or(pyversion.MajorMinorOf(res.Python.Version), res.Python.Version), res.Python.Version, what, strings.Join(where, ", ")),
			Fix:     s.missingExtensionFix(res, looked), Details: placeDetails(looked)})
	}
	if !ex.GDBVersionMatch {
		of := "Python " + ex.GDBVersion
		if ex.GDBVersion == "" {
			of = "an unknown Python version"
		}
		out = append(out, Check{ID: "extension", Status: Fail, Summary: fmt.Sprintf("%s is for %s, the interpreter is %s: py-bt would misread frames", ex.GDB, of, res.Python.Version),
			Fix: "pyattach fetch-extension " + shquote.Quote(res.Target)})
	} else {
		out = append(out, Check{ID: "extension", Status: OK, Summary: fmt.Sprintf("%s (Python %s)", ex.GDB, ex.GDBVersion)})
	}
	for _, w := range ex.GDBWarnings {
		out = append(out, Check{ID: "extension.warning", Status: Warn, Summary: w, Fix: "pyattach fetch-extension " + shquote.Quote(res.Target)})
	}
	// ex.GDB passed saferead.CheckTrusted in pyext, and for a foreign
	// target (a container) it is a host file, never one under its root;
	// SourceLine refuses a name gdb would not read back as it is.
	source, serr := gdbgen.SourceLine(ex.GDB)
	if gdb, err := s.FindDebugger("gdb"); err == nil && serr == nil {
		o, _ := s.run(ctx, gdb, "-nx", "-batch", "-ex", "show auto-load safe-path", "-ex", source, "-ex", "help py-bt")
		if strings.Contains(o, `Undefined command: "py-bt"`) || strings.Contains(o, "Error occurred in Python") || strings.Contains(o, "Traceback (most recent call last)") {
			out = append(out, Check{ID: "extension.runs", Status: Fail, Summary: fmt.Sprintf("gdb's Python cannot run %s: %s", ex.GDB, safetext.Last(o)),
				Fix: "use the extension of the interpreter's own version: pyattach fetch-extension " + shquote.Quote(res.Target)})
		}
		if strings.Contains(o, "$debugdir:$datadir/auto-load") && !strings.HasPrefix(ex.GDB, debugsearch.GDBAutoLoadDir+"/") && !strings.HasPrefix(ex.GDB, "/usr/lib/debug/") {
			// The line names exactly that file, as gdb reads it back.
			fix := "pyattach gdb sources it explicitly"
			real := ex.GDB
			if r, err := filepath.EvalSymlinks(real); err == nil {
				real = r
			}
			if line, err := gdbgen.SafePathLine(real); err == nil {
				fix += "; for plain gdb add to ~/.config/gdb/gdbinit: " + line
			}
			out = append(out, Check{ID: "extension.safe-path", Status: Warn,
				Summary: fmt.Sprintf("plain gdb declines to auto-load %s: it is outside gdb's auto-load safe-path ($debugdir:$datadir/auto-load)", ex.GDB),
				Fix:     fix})
		}
	}
	return out
}

// extPlace is one kind of place the gdb extension was looked for,
// with the paths looked at there (as FindGDB tried them: host paths,
// under the root for a container).
type extPlace struct {
	kind  string // beside, distribution, build-tree, config, cache
	name  string
	paths []string
	// buildDir is the build tree that the installed sysconfig data
	// names (abs_builddir), for the build-tree place.
	buildDir string
}

// extensionPlaces sorts what the gdb extension search tried into the
// places it stands for, in search order: beside the binary, the
// distribution's debug package (gdb's auto-load and debug
// directories), the build tree `make install` leaves (named by the
// installed sysconfig data's abs_builddir), the config file's
// extensions, and pyattach's cache. Every place is listed, including
// one with nothing to look at (no sysconfig data naming a build tree).
func (s *Services) extensionPlaces(res *target.Result, tried []string) []extPlace {
	root := ""
	if res.Container {
		root = res.Root
	}
	in := func(p string) string {
		if root == "" {
			return p
		}
		return filepath.Join(root, p)
	}
	var binDirs []string
	for _, p := range []string{res.Interpreter, res.Libpython} {
		if p == "" {
			continue
		}
		// A container's interpreter is looked for under its root, then
		// at the same path here.
		binDirs = append(binDirs, in(filepath.Dir(p)), filepath.Dir(p))
		if r, err := filepath.EvalSymlinks(debugfile.HostPath(root, p)); err == nil {
			binDirs = append(binDirs, filepath.Dir(r))
		}
	}
	var sys []string
	for _, d := range append(append([]string{}, pyext.DefaultDataDirs...), pyext.DefaultDebugDirs...) {
		sys = append(sys, in(d), d)
	}
	cache := filepath.Join(s.CacheDir, "extensions")
	places := []extPlace{
		{kind: "beside", name: "beside the binary"},
		{kind: "distribution", name: "the distribution's debug package"},
		{kind: "build-tree", name: "the make install build tree (sysconfig abs_builddir)"},
		{kind: "config", name: "the config file's extensions"},
		{kind: "cache", name: "pyattach's cache"},
	}
	add := func(kind, p string) {
		for i := range places {
			if places[i].kind == kind {
				places[i].paths = append(places[i].paths, p)
				if kind == "build-tree" && places[i].buildDir == "" {
					// As the process sees it: a fix names it so.
					places[i].buildDir = stripRootDir(root, filepath.Dir(p))
				}
			}
		}
	}
	for _, t := range tried {
		p, _, _ := strings.Cut(t, ": ")
		switch {
		case rootfs.Under(p, cache):
			add("cache", p)
		case slices.ContainsFunc(sys, func(d string) bool { return rootfs.Under(p, d) }):
			add("distribution", p)
		case filepath.Base(p) == "python-gdb.py" && !slices.ContainsFunc(binDirs, func(d string) bool { return filepath.Dir(p) == d }):
			add("build-tree", p)
		case slices.ContainsFunc(binDirs, func(d string) bool { return filepath.Dir(p) == d }):
			add("beside", p)
		default:
			add("config", p)
		}
	}
	var out []extPlace
	for _, pl := range places {
		if pl.kind == "config" && len(pl.paths) == 0 {
			continue // no extensions configured
		}
		if pl.kind == "cache" && len(pl.paths) == 0 {
			pl.paths = []string{filepath.Join(cache, cmp.Or(res.Python.Version, "X.Y.Z"), "libpython.py")}
		}
		out = append(out, pl)
	}
	return out
}

// stripRootDir is p, a host path, as a process with root sees it.
func stripRootDir(root, p string) string {
	if root != "" && rootfs.Under(p, root) {
		return "/" + strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
	}
	return p
}

// placeDetails is one line per place: what was looked at there.
func placeDetails(places []extPlace) []string {
	var out []string
	for _, pl := range places {
		switch {
		case pl.kind == "build-tree" && pl.buildDir == "":
			out = append(out, pl.name+": no installed sysconfig data names a build tree")
		case pl.kind == "build-tree":
			out = append(out, fmt.Sprintf("%s: %s, named by sysconfig, has no python-gdb.py (the build tree was removed or moved)", pl.name, pl.buildDir))
		default:
			out = append(out, fmt.Sprintf("%s: %s", pl.name, strings.Join(pl.paths, ", ")))
		}
	}
	return out
}

// missingExtensionFix names what brings the gdb extension, matching
// why it is missing: an interpreter of a distribution package gets the
// package that ships the extension (inside the container when the
// process runs in one); any other gets CPython's libpython.py of its
// exact version, fetched by pyattach; a `make install` whose build tree
// is gone is told so.
func (s *Services) missingExtensionFix(res *target.Result, places []extPlace) string {
	if res.Container {
		// The container's own package would not help: pyattach never runs
		// a file of the container's (see Security).
		return "pyattach fetch-extension " + shquote.Quote(res.Target) + " (CPython's libpython.py of Python " + res.Python.Version +
			", checked by its SHA-256; the container's own extension is never run as your code); the walker gives py-bt meanwhile"
	}
	prefix := "sudo "
	if exists(s.sysFile(res, "/etc/debian_version")) {
		for _, p := range []string{res.Interpreter, res.Libpython} {
			if p == "" {
				continue
			}
			if py := debianPythonPkg().FindStringSubmatch(dpkgOwner(s.sysFile(res, "/var/lib/dpkg/info"), p)); py != nil {
				return prefix + "apt-get install " + strings.TrimPrefix(py[1], "lib") + "-dbg (it ships the extension gdb auto-loads)"
			}
		}
	}
	if exists(s.sysFile(res, "/etc/fedora-release")) && strings.HasPrefix(res.Interpreter, "/usr/bin/python3") {
		return prefix + "dnf debuginfo-install python3 (its debuginfo package ships the extension)"
	}
	fix := "pyattach fetch-extension " + shquote.Quote(res.Target) + " (downloads CPython's libpython.py of Python " + res.Python.Version + " into pyattach's cache)"
	for _, pl := range places {
		if pl.kind == "build-tree" && pl.buildDir != "" {
			fix += fmt.Sprintf("; or rebuild and keep the build tree at %s: make install leaves python-gdb.py there", pl.buildDir)
		}
	}
	return fix
}
