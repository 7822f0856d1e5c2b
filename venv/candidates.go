package venv

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/venv/environ"
)

// MaxCandidates bounds the list Candidates returns.
const MaxCandidates = 500

// DefaultSystemDirs are searched after PATH when Options.SystemDirs is nil.
var DefaultSystemDirs = []string{"/usr/bin", "/usr/local/bin"}

// Options says where to look for interpreters.
type Options struct {
	// Env is the environment, as os.Environ() gives it; nil means no
	// variables at all. PATH, HOME, PYENV_ROOT, PYENV_VERSION,
	// CONDA_PREFIX, UV_PYTHON_INSTALL_DIR and XDG_DATA_HOME are read
	// from here, never from the process. When a name repeats, the last
	// one wins, as in os/exec.
	Env environ.Env
	// ExtraDirs are searched right after the environment's own home,
	// before PATH.
	ExtraDirs []string
	// SystemDirs replaces DefaultSystemDirs when not nil (an empty,
	// non-nil slice searches none); tests use it to fake the system.
	SystemDirs []string
	// FindOriginal asks Resolve to look for an original of a binary that
	// is in no environment (a bare copy such as /tmp/python-copy)
	// instead of taking it as its own interpreter.
	FindOriginal bool
	// Dir is the working directory whose .python-version files select a
	// pyenv version when Resolve meets a pyenv shim; "" looks only at
	// PYENV_VERSION and $PYENV_ROOT/version.
	Dir string
	// ReadBuildID reads the build-id of the named file as
	// elfinfo.ReadBuildIDFile does (its errors included); nil is
	// elfinfo.ReadBuildIDFile. pyattach hands in one that remembers
	// build-ids across runs.
	ReadBuildID func(name string) (string, error)
}

// readBuildID is Options.ReadBuildID, or elfinfo.ReadBuildIDFile.
func (o Options) readBuildID(name string) (string, error) {
	if o.ReadBuildID != nil {
		return o.ReadBuildID(name)
	}
	return elfinfo.ReadBuildIDFile(name)
}

// home returns $HOME, "" when unset.
func (o Options) home() string { return o.Env.Home() }

// pyenvRoot returns $PYENV_ROOT, else $HOME/.pyenv, else "".
func (o Options) pyenvRoot() string {
	if r := o.Env.Get("PYENV_ROOT"); r != "" {
		return strings.TrimRight(r, "/")
	}
	if h := o.home(); h != "" {
		return filepath.Join(h, ".pyenv")
	}
	return ""
}

// uvDir returns uv's managed Python directory.
func (o Options) uvDir() string {
	if d := o.Env.Get("UV_PYTHON_INSTALL_DIR"); d != "" {
		return d
	}
	if d := o.Env.Get("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "uv", "python")
	}
	if h := o.home(); h != "" {
		return filepath.Join(h, ".local", "share", "uv", "python")
	}
	return ""
}

// pathDirs returns the PATH entries, without empty ones.
func (o Options) pathDirs() []string {
	return o.Env.List("PATH")
}

// Sources of candidates, reported as Resolution.Via.
const (
	viaSymlink   = "symlink"
	viaCfg       = "pyvenv.cfg"
	viaOrig      = "orig-prefix"
	viaCands     = "candidates"
	viaSelf      = "self"
	viaPyenvShim = "pyenv-shim"
)

type cand struct {
	path string
	via  string
}

// Candidates returns the ordered, de-duplicated list of existing
// interpreter files that may be the original of exe, a copy inside env
// (env may be nil for a bare copy):
//
//  1. pyvenv.cfg's executable and base-executable;
//  2. in pyvenv.cfg's home, or a virtualenv's <orig-prefix>/bin:
//     pythonX.Y, exe's base name, pythonX, python;
//  3. the same names in Options.ExtraDirs, each PATH entry (pyenv's shims
//     directory left out), then /usr/bin and /usr/local/bin;
//  4. $PYENV_ROOT/versions/*/bin (default $HOME/.pyenv), versions of
//     X.Y first, newest first;
//  5. uv's managed Pythons, $UV_PYTHON_INSTALL_DIR, else
//     $XDG_DATA_HOME/uv/python, else $HOME/.local/share/uv/python, each
//     */bin;
//  6. conda: $CONDA_PREFIX/bin, $HOME/miniconda3/bin,
//     $HOME/anaconda3/bin, $HOME/miniforge3/bin, /opt/conda/bin.
//
// X.Y comes from the env's version, else from exe's name (python3.12).
// When it is unknown, every pythonN[.M] binary of a directory is listed
// (newest first) instead of pythonX.Y; -config scripts, -gdb.py files and
// the like are never listed. Only files that exist are returned (symlinks
// are kept as found, not resolved), at most MaxCandidates of them.
func Candidates(env *Env, exe string, opts Options) []string {
	cs := candidates(env, exe, opts)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.path
	}
	return out
}

type candList struct {
	list []cand
	seen map[string]bool
}

func (l *candList) full() bool { return len(l.list) >= MaxCandidates }

// add appends path when it is a new, existing, non-directory file.
func (l *candList) add(path, via string) {
	if path == "" || l.full() || !filepath.IsAbs(path) {
		return
	}
	p := filepath.Clean(path)
	if l.seen[p] {
		return
	}
	l.seen[p] = true
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return
	}
	l.list = append(l.list, cand{p, via})
}

// binNameRE matches interpreter names worth trying in a directory:
// python3, python3.12, python3.13t, python2.7, python3.11d; not
// python3.12-config, python3.12-gdb.py or python3-dbg.
var binNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^python[0-9]+(\.[0-9]+)?[a-z]?$`) })

func candidates(env *Env, exe string, opts Options) []cand {
	l := &candList{seen: map[string]bool{}}
	xy := ""
	if env != nil {
		xy = pyversion.MajorMinorOf(env.Version)
	}
	base := ""
	if exe != "" {
		base = filepath.Base(exe)
		if xy == "" {
			// python3.11, python3.11d, python3.9-dbg (older Debian).
			xy = pyversion.MajorMinorOf(strings.TrimSuffix(strings.TrimPrefix(base, "python"), "-dbg"))
		}
	}

	// inDir adds the interpreter names of dir.
	inDir := func(dir, via string) {
		if dir == "" || l.full() {
			return
		}
		if xy != "" {
			l.add(filepath.Join(dir, "python"+xy), via)
		} else {
			for _, n := range versionedBins(dir) {
				l.add(filepath.Join(dir, n), via)
			}
		}
		if base != "" && base != "." && base != string(filepath.Separator) {
			l.add(filepath.Join(dir, base), via)
		}
		if major, _, ok := strings.Cut(xy, "."); ok {
			l.add(filepath.Join(dir, "python"+major), via)
		} else {
			l.add(filepath.Join(dir, "python3"), via)
		}
		l.add(filepath.Join(dir, "python"), via)
	}

	if env != nil {
		via := viaCands
		switch {
		case env.Cfg != nil:
			via = viaCfg
			l.add(env.Cfg.Executable, via)
			l.add(env.Cfg.BaseExecutable, via)
		case env.OrigPrefix != "":
			via = viaOrig
			l.add(filepath.Join(env.OrigPrefix, "bin", "python"+xy), via)
		}
		if env.Kind != KindConda {
			inDir(env.Home, via)
		}
	}
	for _, d := range opts.ExtraDirs {
		inDir(d, viaCands)
	}
	root := opts.pyenvRoot()
	shims := ""
	if root != "" {
		shims = filepath.Join(root, "shims")
	}
	for _, d := range opts.pathDirs() {
		if filepath.Clean(d) == shims || strings.HasSuffix(filepath.Clean(d), "/pyenv-virtualenv/shims") {
			continue
		}
		inDir(d, viaCands)
	}
	sys := opts.SystemDirs
	if sys == nil {
		sys = DefaultSystemDirs
	}
	for _, d := range sys {
		inDir(d, viaCands)
	}
	if root != "" {
		for _, d := range versionDirs(filepath.Join(root, "versions"), xy) {
			inDir(filepath.Join(d, "bin"), viaCands)
		}
	}
	if uv := opts.uvDir(); uv != "" {
		for _, d := range versionDirs(uv, xy) {
			inDir(filepath.Join(d, "bin"), viaCands)
		}
	}
	var conda []string
	if p := opts.Env.Get("CONDA_PREFIX"); p != "" {
		conda = append(conda, filepath.Join(p, "bin"))
	}
	if h := opts.home(); h != "" {
		for _, n := range []string{"miniconda3", "anaconda3", "miniforge3"} {
			conda = append(conda, filepath.Join(h, n, "bin"))
		}
	}
	if opts.SystemDirs == nil {
		conda = append(conda, "/opt/conda/bin")
	}
	for _, d := range conda {
		inDir(d, viaCands)
	}
	return l.list
}

// versionedBins returns the names in dir that binNameRE accepts, newest
// version first.
func versionedBins(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() || !binNameRE().MatchString(e.Name()) {
			continue
		}
		names = append(names, e.Name())
	}
	sort.SliceStable(names, func(i, j int) bool {
		return compareVersions(versionIn(names[i]), versionIn(names[j])) > 0
	})
	return names
}

// versionDirs lists the subdirectories of dir (pyenv's versions, uv's
// cpython-X.Y.Z-...): those whose version is xy.* first, then the rest,
// each newest first.
func versionDirs(dir, xy string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var match, rest []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if !isDir(p) {
			continue
		}
		if xy != "" && pyversion.MajorMinorOf(versionIn(e.Name())) == xy {
			match = append(match, p)
		} else {
			rest = append(rest, p)
		}
	}
	byVersion := func(s []string) {
		sort.SliceStable(s, func(i, j int) bool {
			return compareVersions(versionIn(filepath.Base(s[i])), versionIn(filepath.Base(s[j]))) > 0
		})
	}
	byVersion(match)
	byVersion(rest)
	return append(match, rest...)
}

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]+(\.[0-9]+)+`) })

// versionIn returns the first dotted number in s: "3.12.1" in
// "cpython-3.12.1-linux-x86_64-gnu", "3.12" in "python3.12".
func versionIn(s string) string {
	if m := versionRE().FindString(s); m != "" {
		return m
	}
	return leadingDigits(strings.TrimPrefix(s, "python"))
}

// compareVersions compares two versions as pyversion orders them
// (3.9 < 3.9.0 < 3.9.1 < 3.10); a version pyversion cannot parse sorts
// before every one it can.
func compareVersions(a, b string) int {
	va, errA := pyversion.Parse(a)
	vb, errB := pyversion.Parse(b)
	switch {
	case errA != nil && errB != nil:
		return 0
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	return va.Compare(vb)
}
