package pyext

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/pyinfo"
	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Sources of an extension, as reported in Extension.Source.
const (
	SourceDebian      = "debian-auto-load"
	SourceFedora      = "fedora-debug"
	SourceBeside      = "beside-binary"
	SourceBuildTree   = "build-tree"
	SourceConfig      = "config"
	SourceFetched     = "fetched"
	SourceSitePackage = "site-packages"
)

// Default search directories, used when Input leaves them empty.
var (
	DefaultDataDirs  = []string{"/usr/share/gdb"}
	DefaultDebugDirs = []string{"/usr/lib/debug"}
)

// Input describes the interpreter whose extension is wanted and where
// to look. Paths are as the process sees them.
type Input struct {
	// Interpreter is the real interpreter path as the process sees it
	// (/usr/bin/python3.11, ~/.pyenv/versions/3.12.1/bin/python3.12).
	Interpreter string
	// Libpython is the shared libpython in use, "" when static.
	Libpython string
	// Version is the interpreter's version, "3.11.2" or "3.11" or "";
	// when empty, the interpreter's or libpython's file name is used.
	Version string
	// ABIFlags are the interpreter's ABI flags: "", "d", "t", "m"...
	ABIFlags string
	// Root is "" or a container's root directory on the host
	// (/proc/PID/root): in-container paths are looked up there first.
	Root string
	// DataDirs are gdb's data directories (auto-load is
	// <datadir>/auto-load); default DefaultDataDirs.
	DataDirs []string
	// DebugDirs are gdb's debug directories; default DefaultDebugDirs.
	DebugDirs []string
	// Extra are host paths from the configuration file: files, or
	// directories holding *-gdb.py or libpython.py files.
	Extra []string
	// CacheDir is pyattach's cache directory; fetched extensions are
	// <CacheDir>/extensions/<X.Y.Z>/libpython.py. "" skips the cache.
	CacheDir string
	// UID is the current user's uid: a file is refused unless it and
	// every directory and link on its way are owned by UID or root and
	// writable by no one else (saferead.CheckTrusted).
	UID int
	// Foreign is set when the target's files are not the user's (a
	// container, another user's process: target.Foreign). Nothing under
	// Root is accepted then, whoever owns it (each file found there is
	// listed in tried as refused); a host or cached extension is accepted
	// only for the interpreter's exact version, and a cached one only
	// when it still has the SHA-256 recorded when it was fetched.
	Foreign bool
}

// Extension is a debugger extension found for an interpreter.
type Extension struct {
	// Path is the file as the process sees it (the host path unless the
	// process runs in a container root).
	Path string `json:"path"`
	// HostPath is the file to read or source on the host when it
	// differs from Path (inside a container root, symlinks resolved).
	HostPath string `json:"host_path,omitempty"`
	// Stub is the file gdb would auto-load when that file only points
	// at Path (it execs, sources or imports it).
	Stub string `json:"stub,omitempty"`
	// Version is the Python version the extension belongs to, as
	// precise as known: "3.11" from python3.11-gdb.py, "3.12.1" from
	// ~/.pyenv/versions/3.12.1/..., the fetched tag. For lldb it is
	// the cpython_lldb module's own version, when known.
	Version string `json:"version"`
	// Source says where it was found: SourceDebian, SourceFedora,
	// SourceBeside, SourceBuildTree, SourceConfig, SourceFetched or
	// (lldb) SourceSitePackage.
	Source string `json:"source"`
	// VersionMatch is true when Version has the interpreter's
	// major.minor; a different micro version is only a warning.
	VersionMatch bool `json:"version_match"`
	// Warnings say what is worth knowing: a version mismatch.
	Warnings []string `json:"warnings,omitempty"`
}

// candidate is one path to look at, with what its location says.
type candidate struct {
	path    string // target path; may hold a glob in its base name
	source  string
	version string // the version its location tells, "" if none
	glob    bool
}

// FindGDB finds CPython's gdb extension for the interpreter in in, in
// the order the package documentation gives. It returns the best
// extension found (nil when none), and tried: every host path looked
// at and not chosen, in search order, as "PATH" when absent and
// "PATH: reason" when present but rejected or beaten by a closer
// version. The error is non-nil only for unusable input.
func FindGDB(in Input) (found *Extension, tried []string, err error) {
	if in.Interpreter == "" && in.Libpython == "" {
		return nil, nil, errors.New("find gdb extension: no interpreter or libpython given")
	}
	for _, p := range []string{in.Interpreter, in.Libpython, in.Root} {
		if p != "" && !path.IsAbs(p) {
			return nil, nil, fmt.Errorf("find gdb extension: %q is not an absolute path", p)
		}
	}
	interpVersion := in.Version
	if interpVersion == "" {
		for _, p := range []string{in.Interpreter, in.Libpython} {
			if v, _, ok := pyinfo.ParseName(p); ok && p != "" {
				interpVersion = v
				break
			}
		}
	}
	s := &search{in: in, interpVersion: interpVersion, seen: make(map[string]bool)}
	var places []place
	if in.Root != "" && filepath.Clean(in.Root) != "/" {
		places = append(places, place{root: in.Root})
	}
	places = append(places, place{})
	for _, pl := range places {
		for _, c := range s.systemCandidates(pl) {
			if s.look(pl, c) {
				return s.finish()
			}
		}
	}
	for _, c := range s.hostCandidates() {
		if s.look(place{}, c) {
			return s.finish()
		}
	}
	return s.finish()
}

type search struct {
	in            Input
	interpVersion string
	seen          map[string]bool // host paths already looked at
	best          *Extension
	bestRank      int
	bestTried     int // index in tried where best was recorded
	tried         []string
}

func (s *search) finish() (*Extension, []string, error) {
	if s.best == nil {
		return nil, s.tried, nil
	}
	tried := append(s.tried[:s.bestTried:s.bestTried], s.tried[s.bestTried+1:]...)
	return s.best, tried, nil
}

// objfiles returns the interpreter's and libpython's target paths, each
// as given and as its real path, without repeats.
func (s *search) objfiles(pl place) []string {
	var out []string
	for _, p := range []string{s.in.Interpreter, s.in.Libpython} {
		if p == "" {
			continue
		}
		out = appendNew(out, path.Clean(p))
		out = appendNew(out, pl.realPath(path.Clean(p)))
	}
	return out
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func orDefault(dirs, def []string) []string {
	if len(dirs) == 0 {
		return def
	}
	return dirs
}

// systemCandidates lists steps 1 to 4 of the search for one place.
func (s *search) systemCandidates(pl place) []candidate {
	var cs []candidate
	objs := s.objfiles(pl)
	for _, d := range orDefault(s.in.DataDirs, DefaultDataDirs) {
		for _, o := range objs {
			cs = append(cs, candidate{path: path.Join(d, "auto-load", o) + "-gdb.py", source: SourceDebian})
		}
	}
	for _, d := range orDefault(s.in.DebugDirs, DefaultDebugDirs) {
		for _, o := range objs {
			base := path.Join(d, o)
			cs = append(cs,
				candidate{path: base + "-gdb.py", source: SourceFedora},
				candidate{path: base + ".debug-gdb.py", source: SourceFedora},
				candidate{path: path.Dir(base) + "/" + globEscape(path.Base(base)) + "-*.debug-gdb.py", source: SourceFedora, glob: true},
			)
		}
		if s.in.Libpython == "" && s.interpVersion != "" {
			if v, ok := parseVersion(s.interpVersion); ok {
				lib := "libpython" + v.MajorMinor() + s.in.ABIFlags + ".so.1.0"
				cs = append(cs, candidate{path: path.Join(d, "usr/lib64", lib) + "-*.debug-gdb.py", source: SourceFedora, glob: true})
			}
		}
	}
	var minor string
	if v, ok := parseVersion(s.interpVersion); ok {
		minor = v.MajorMinor()
	}
	var interps []string
	if s.in.Interpreter != "" {
		interps = appendNew(interps, path.Clean(s.in.Interpreter))
		interps = appendNew(interps, pl.realPath(path.Clean(s.in.Interpreter)))
	}
	for _, ip := range interps {
		dir := path.Dir(ip)
		if minor != "" {
			if s.in.ABIFlags != "" {
				cs = append(cs, candidate{path: path.Join(dir, "python"+minor+s.in.ABIFlags+"-gdb.py"), source: SourceBeside})
			}
			cs = append(cs, candidate{path: path.Join(dir, "python"+minor+"-gdb.py"), source: SourceBeside})
		}
		if path.Base(ip) != "python" { // python-gdb.py is a build tree's
			cs = append(cs, candidate{path: ip + "-gdb.py", source: SourceBeside})
		}
	}
	if s.in.Libpython != "" {
		lp := path.Clean(s.in.Libpython)
		cs = append(cs, candidate{path: lp + "-gdb.py", source: SourceBeside})
		cs = append(cs, candidate{path: pl.realPath(lp) + "-gdb.py", source: SourceBeside})
	}
	for _, ip := range interps {
		cs = append(cs, candidate{path: path.Join(path.Dir(ip), "python-gdb.py"), source: SourceBuildTree})
	}
	// make install leaves python-gdb.py in the build tree, which the
	// installed sysconfig data names.
	for _, ip := range interps {
		if dir := installedBuildDir(pl, path.Dir(path.Dir(ip)), minor); dir != "" {
			cs = append(cs, candidate{path: path.Join(dir, "python-gdb.py"), source: SourceBuildTree})
		}
	}
	return cs
}

// maxSysconfigData bounds the read of a _sysconfigdata file (about 60 KB
// in CPython 3.13).
const maxSysconfigData = 1 << 20

var absBuilddirRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`'abs_builddir':\s*'([^'\\\n]+)'`) })

// installedBuildDir returns the build directory that an installed
// prefix's sysconfig data records ('abs_builddir' in
// <prefix>/lib/python<minor>*/_sysconfigdata_*.py), or "".
func installedBuildDir(pl place, prefix, minor string) string {
	if minor == "" {
		return ""
	}
	var files []string
	for _, d := range pl.glob(path.Join(prefix, "lib", "python"+minor+"*")) {
		files = append(files, pl.glob(path.Join(d, "_sysconfigdata_*.py"))...)
	}
	for _, f := range files {
		host, err := pl.hostPath(f)
		if err != nil {
			continue
		}
		fh, err := saferead.Open(host)
		if err != nil {
			continue
		}
		data, _ := io.ReadAll(io.LimitReader(fh, maxSysconfigData))
		fh.Close()
		if m := absBuilddirRe().FindSubmatch(data); m != nil && path.IsAbs(string(m[1])) {
			return path.Clean(string(m[1]))
		}
	}
	return ""
}

// hostCandidates lists steps 5 and 6: configured paths and the cache.
func (s *search) hostCandidates() []candidate {
	var cs []candidate
	for _, e := range s.in.Extra {
		if e == "" {
			continue
		}
		e = filepath.Clean(e)
		st, err := os.Stat(e)
		if err != nil || !st.IsDir() {
			cs = append(cs, candidate{path: e, source: SourceConfig})
			continue
		}
		cs = append(cs,
			candidate{path: path.Join(e, "libpython.py"), source: SourceConfig},
			candidate{path: e + "/*-gdb.py", source: SourceConfig, glob: true},
		)
	}
	if s.in.CacheDir == "" {
		return cs
	}
	ext := filepath.Join(s.in.CacheDir, "extensions")
	if exactVersion(s.interpVersion) {
		cs = append(cs, candidate{path: filepath.Join(ext, s.interpVersion, "libpython.py"), source: SourceFetched, version: s.interpVersion})
	}
	if v, ok := parseVersion(s.interpVersion); ok {
		// Other micro versions of the same X.Y, newest first.
		dirs := place{}.glob(ext + "/" + v.MajorMinor() + ".*")
		for i := len(dirs) - 1; i >= 0; i-- {
			if d := path.Base(dirs[i]); exactVersion(d) && d != s.interpVersion {
				cs = append(cs, candidate{path: path.Join(dirs[i], "libpython.py"), source: SourceFetched, version: d})
			}
		}
	}
	return cs
}

// globEscape quotes the glob metacharacters in a literal path.
func globEscape(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(p)
}

// look examines candidate c in pl and reports whether the search is
// over (an exact-version match was found).
func (s *search) look(pl place, c candidate) bool {
	paths := []string{c.path}
	if c.glob {
		paths = pl.glob(c.path)
		if len(paths) == 0 {
			s.tried = append(s.tried, filepath.Join(pl.root, c.path))
			return false
		}
	}
	for _, p := range paths {
		if s.examine(pl, c, p) {
			return true
		}
	}
	return false
}

// examine looks at the target path p found through candidate c.
func (s *search) examine(pl place, c candidate, p string) bool {
	host, err := pl.hostPath(p)
	if err != nil {
		host = filepath.Join(pl.root, p)
	}
	if s.seen[host] {
		return false
	}
	s.seen[host] = true
	shown := host
	if pl.root != "" {
		shown = filepath.Join(pl.root, p)
	}
	reject := func(reason string) bool {
		if reason == "" {
			s.tried = append(s.tried, shown)
		} else {
			s.tried = append(s.tried, shown+": "+reason)
		}
		return false
	}
	head, err := readFileHead(host)
	if errors.Is(err, fs.ErrNotExist) {
		return reject("")
	}
	if err != nil {
		return reject(errText(err))
	}
	if s.in.Foreign && pl.root != "" {
		return reject(RefusedInRoot)
	}
	if why := untrusted(host, s.in.UID, "gdb"); why != "" {
		return reject(why)
	}
	if c.source == SourceFetched {
		if why := checkPinned(host, s.in.Foreign); why != "" {
			return reject(why)
		}
	}
	ext := &Extension{Path: p, Source: c.source}
	if pl.root != "" {
		ext.HostPath = host
	}
	real := p
	if !looksLikeLibpython(head) {
		targets := stubTargets(head, path.Dir(p))
		if len(targets) == 0 {
			return reject("not CPython's libpython.py (no class PyObjectPtr)")
		}
		var followed bool
		for _, t := range targets {
			th, err := pl.hostPath(t)
			if err != nil {
				continue
			}
			if th2, err := readFileHead(th); err == nil && looksLikeLibpython(th2) {
				if why := untrusted(th, s.in.UID, "gdb"); why != "" {
					return reject(fmt.Sprintf("it leads to %s: %s", th, why))
				}
				ext.Stub, ext.Path, real, host = p, t, t, th
				if pl.root != "" {
					ext.HostPath = th
				}
				followed = true
				break
			}
		}
		if !followed {
			return reject(fmt.Sprintf("not CPython's libpython.py and none of the files it names is (%s)", strings.Join(targets, ", ")))
		}
	}
	ext.Version = s.versionOf(pl, c, p, real)
	rank, match, warning := compareVersions(ext.Version, s.interpVersion)
	if s.in.Foreign && rank != rankExact {
		return reject(fmt.Sprintf("refused for this target: version %s is not the interpreter's exact version %s (the target's own copy is never run; run: pyattach fetch-extension --python-version %s)",
			orUnknown(ext.Version), orUnknown(s.interpVersion), orUnknown(s.interpVersion)))
	}
	ext.VersionMatch = match
	if warning != "" {
		ext.Warnings = append(ext.Warnings, warning)
	}
	if s.best == nil || rank < s.bestRank {
		if s.best != nil {
			s.tried[s.bestTried] += fmt.Sprintf(": version %s, beaten by %s", orUnknown(s.best.Version), shown)
		}
		s.best, s.bestRank, s.bestTried = ext, rank, len(s.tried)
		s.tried = append(s.tried, shown)
		return rank == rankExact
	}
	s.tried = append(s.tried, fmt.Sprintf("%s: version %s, %s was found first", shown, orUnknown(ext.Version), displayPath(s.best)))
	return false
}

func displayPath(e *Extension) string {
	if e.HostPath != "" {
		return e.HostPath
	}
	return e.Path
}

func orUnknown(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}

// errText is err's message without the path an *fs.PathError repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readFileHead reads the first sniffSize bytes of the regular file at
// host path p.
func readFileHead(p string) ([]byte, error) {
	f, _, err := saferead.OpenRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readHead(f)
}

// versionOf works out the version of the extension found at target
// path p (real is the file it leads to, when p is a stub).
func (s *search) versionOf(pl place, c candidate, p, real string) string {
	v := c.version
	for _, name := range []string{p, pl.realPath(p), real, pl.realPath(real)} {
		if v == "" {
			v = versionFromName(path.Base(name))
		}
	}
	for _, name := range []string{p, real, pl.realPath(real)} {
		v = refineVersion(v, versionInDirs(name))
	}
	switch c.source {
	case SourceDebian:
		if m, ok := parseVersion(v); ok && !m.HasPatch() {
			minor := m.MajorMinor()
			d := dpkgVersion(pl, p, minor)
			if d == "" && real != p {
				d = dpkgVersion(pl, real, minor)
			}
			v = refineVersion(v, d)
		}
	case SourceBeside, SourceBuildTree:
		if m, ok := parseVersion(v); !ok || !m.HasPatch() {
			v = refineVersion(v, s.patchlevel(pl, path.Dir(pl.realPath(p)), v))
		}
	}
	return v
}

// patchlevel reads PY_VERSION from the patchlevel.h that belongs to the
// installation or build tree holding directory dir: <prefix>/include/
// python<X.Y>*/patchlevel.h beside a bin directory, <dir>/Include/
// patchlevel.h in a build tree, or in the source tree that its Makefile
// names (srcdir=).
func (s *search) patchlevel(pl place, dir, v string) string {
	var files []string
	if m, ok := parseVersion(v); ok && path.Base(dir) == "bin" {
		inc := path.Join(path.Dir(dir), "include")
		minor := m.MajorMinor()
		if s.in.ABIFlags != "" {
			files = append(files, path.Join(inc, "python"+minor+s.in.ABIFlags, "patchlevel.h"))
		}
		files = append(files, path.Join(inc, "python"+minor, "patchlevel.h"))
		for _, d := range pl.glob(path.Join(inc, "python"+minor+"*")) {
			files = append(files, path.Join(d, "patchlevel.h"))
		}
	}
	files = append(files, path.Join(dir, "Include", "patchlevel.h"))
	if src := makefileSrcdir(pl, path.Join(dir, "Makefile")); src != "" {
		if !path.IsAbs(src) {
			src = path.Join(dir, src)
		}
		files = append(files, path.Join(src, "Include", "patchlevel.h"))
	}
	for _, f := range files {
		if got := readPatchlevel(pl, f); got != "" {
			return got
		}
	}
	return ""
}

// readPatchlevel returns PY_VERSION from the patchlevel.h at target
// path p ("3.13.0+" becomes "3.13.0").
func readPatchlevel(pl place, p string) string {
	return scanHead(pl, p, func(line string) (string, bool) {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "#define" && f[1] == "PY_VERSION" {
			return pyversion.Leading(strings.Trim(f[2], `"`)), true
		}
		return "", false
	})
}

// makefileSrcdir returns the srcdir= value of a CPython build's
// Makefile, "" when there is none.
func makefileSrcdir(pl place, p string) string {
	return scanHead(pl, p, func(line string) (string, bool) {
		rest, ok := strings.CutPrefix(line, "srcdir=")
		return strings.TrimSpace(rest), ok
	})
}

// scanHead returns match's value for the first line of the head of the
// file at target path p that it accepts, "" when none does or the file
// cannot be read.
func scanHead(pl place, p string, match func(line string) (string, bool)) string {
	h, err := pl.hostPath(p)
	if err != nil {
		return ""
	}
	head, err := readFileHead(h)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(head)))
	for sc.Scan() {
		if v, ok := match(sc.Text()); ok {
			return v
		}
	}
	return ""
}
