package pyoffsets

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/pyinfo"
	"github.com/pyattach/pyattach/detect/pyversion"
)

// A Source is a build whose DWARF a table is generated from or checked
// against.
type Source struct {
	Kind     string // "pyenv" or "system"
	Path     string // the interpreter or libpython
	Debug    string // the file holding its DWARF (Path, or a separate file)
	BuildID  string
	Version  string // "3.11.7"
	ABIFlags string // "" or "d", "t", "td": the flags that change layouts
	// Extensions are the files holding the DWARF of the build's own
	// extension modules whose types the tables carry (_asyncio's TaskObj
	// and FutureObj), where the build has them as lib-dynload modules.
	Extensions []string
}

// extensionModules are the lib-dynload modules whose types the tables
// carry; a build that links one in has its types in its own DWARF.
var extensionModules = []string{"_asyncio"}

// Key is the table a source belongs to: "3.11", "3.11d", "3.13t".
func (s Source) Key() string { return pyversion.MajorMinorOf(s.Version) + s.ABIFlags }

// layoutFlags keeps the ABI flags that change struct layouts: d
// (Py_DEBUG, and with it Py_TRACE_REFS before 3.13) and t (free-threaded).
func layoutFlags(f string) string {
	var b strings.Builder
	for _, c := range f {
		if c == 't' || c == 'd' {
			b.WriteRune(c)
		}
	}
	s := b.String()
	if s == "dt" {
		s = "td"
	}
	return s
}

// Discover finds CPython 3 builds with DWARF on this machine: pyenv's
// versions (under pyenvRoot) with their embedded DWARF, and the system's
// /usr/bin/python3.* with separate debug files under debugDir. Sources are
// sorted pyenv first, then by version and path.
func Discover(pyenvRoot, debugDir string) []Source {
	var out []Source
	libs, _ := filepath.Glob(filepath.Join(pyenvRoot, "versions", "*", "lib", "libpython3.*.so.1.0"))
	for _, l := range libs {
		if s, ok := sourceOf("pyenv", l, debugDir); ok {
			out = append(out, s)
		}
	}
	exes, _ := filepath.Glob("/usr/bin/python3.*")
	for _, e := range exes {
		if fi, err := os.Lstat(e); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if s, ok := sourceOf("system", e, debugDir); ok {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind == "pyenv"
		}
		if out[i].Version != out[j].Version {
			return out[i].Version < out[j].Version
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// DefaultRoots is where scripts/make-roots.sh keeps the Debian roots it
// makes with debootstrap (Debian's own 3.13, 3.14, 3.15 and their -dbg
// packages); $PYATTACH_ROOTS moves them.
const DefaultRoots = "/var/cache/pyattach-test/roots"

// RootsDir is $PYATTACH_ROOTS, else DefaultRoots.
func RootsDir() string {
	if d := os.Getenv("PYATTACH_ROOTS"); d != "" {
		return d
	}
	return DefaultRoots
}

// DiscoverRoots finds the builds in the complete roots (those holding
// the pyattach-stamp that make-roots.sh writes last) under dir: each
// root's /usr/bin/python3.N and python3.Nd, and the free-threaded
// /usr/local/bin/python3.Nt make-roots.sh builds, with the separate debug files
// of that root's /usr/lib/debug. Kind is "root"; sources are sorted by
// version and path.
func DiscoverRoots(dir string) []Source {
	var out []Source
	stamps, _ := filepath.Glob(filepath.Join(dir, "*", "pyattach-stamp"))
	for _, st := range stamps {
		root := filepath.Dir(st)
		exes, _ := filepath.Glob(filepath.Join(root, "usr", "bin", "python3.*"))
		local, _ := filepath.Glob(filepath.Join(root, "usr", "local", "bin", "python3.*"))
		exes = append(exes, local...)
		for _, e := range exes {
			if fi, err := os.Lstat(e); err != nil || !fi.Mode().IsRegular() || !rootExe().MatchString(filepath.Base(e)) {
				continue
			}
			if s, ok := sourceOf("root", e, filepath.Join(root, "usr", "lib", "debug")); ok {
				out = append(out, s)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Version != out[j].Version {
			return out[i].Version < out[j].Version
		}
		return out[i].Path < out[j].Path
	})
	return out
}

var rootExe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^python3\.\d+t?d?$`) })

func sourceOf(kind, path, debugDir string) (Source, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Source{}, false
	}
	defer f.Close()
	ef, err := elfinfo.NewFile(f)
	if err != nil {
		return Source{}, false
	}
	facts, err := pyinfo.ReadELF(ef, nil, path)
	if err != nil || !facts.HasRuntime || facts.Version == "" || strings.HasPrefix(facts.Version, "2.") {
		return Source{}, false
	}
	id, _ := elfinfo.BuildIDOf(ef)
	s := Source{Kind: kind, Path: path, BuildID: id, Version: facts.Version, ABIFlags: layoutFlags(facts.ABIFlags)}
	if embedsDWARF(ef) {
		s.Debug = path
	} else if d := buildid.ID(id).DebugPath(debugDir); d != "" {
		if hasDWARF(d) {
			s.Debug = d
		}
	}
	if s.Debug == "" {
		return s, false
	}
	s.Extensions = extensionDebug(path, s.Version, s.ABIFlags, debugDir)
	return s, true
}

// extensionDebug finds the files with the DWARF of extensionModules for
// the interpreter or libpython at path: PREFIX/lib/python3.N[t]/lib-dynload/
// MODULE.cpython-3N[flags][m]-x86_64-linux-gnu.so, PREFIX being the directory above path's
// (bin/ or lib/), with the DWARF embedded or in a build-id file under
// debugDir. Modules not found are left out.
func extensionDebug(path, version, flags, debugDir string) []string {
	minor := pyversion.MajorMinorOf(version)
	tag := strings.ReplaceAll(minor, ".", "") + flags
	lib := minor
	if strings.Contains(flags, "t") {
		lib += "t"
	}
	dynload := filepath.Join(filepath.Dir(filepath.Dir(path)), "lib", "python"+lib, "lib-dynload")
	var out []string
	for _, m := range extensionModules {
		// Up to 3.7 the file names carry the m (pymalloc) flag too.
		for _, t := range []string{tag, tag + "m"} {
			so := filepath.Join(dynload, m+".cpython-"+t+"-x86_64-linux-gnu.so")
			if d := debugOf(so, debugDir); d != "" {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// debugOf is the file holding the DWARF of the ELF file at path (itself,
// or its build-id debug file under debugDir), "" when there is none.
func debugOf(path, debugDir string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	ef, err := elfinfo.NewFile(f)
	if err != nil {
		return ""
	}
	if embedsDWARF(ef) {
		return path
	}
	id, _ := elfinfo.BuildIDOf(ef)
	if d := buildid.ID(id).DebugPath(debugDir); d != "" && hasDWARF(d) {
		return d
	}
	return ""
}

func hasDWARF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	ef, err := elfinfo.NewFile(f)
	return err == nil && embedsDWARF(ef)
}

// dwarfOf is f.DWARF() with debug/dwarf's panics on bad input turned
// into an error.
func dwarfOf(f *elf.File) (d *dwarf.Data, err error) {
	defer elfinfo.RecoverCorrupt(&err, ".debug_info")
	return f.DWARF()
}

func embedsDWARF(f *elf.File) bool {
	s := f.Section(".debug_info")
	return s != nil && s.Type != elf.SHT_NOBITS
}

// Generate reads the offsets from a source's DWARF, then those its
// Extensions add (what the interpreter's own DWARF lacks).
func Generate(s Source) (map[string]int64, error) {
	d, err := openDWARF(s.Debug)
	if err != nil {
		return nil, err
	}
	m, err := FromDWARF(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Debug, err)
	}
	for _, e := range s.Extensions {
		d, err := openDWARF(e)
		if err != nil {
			return nil, err
		}
		more, err := fromDWARF(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		for k, v := range more {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
	}
	return m, nil
}

func openDWARF(path string) (*dwarf.Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ef, err := elfinfo.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d, err := dwarfOf(ef)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}
