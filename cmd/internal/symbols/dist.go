package symbols

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv"
)

// Dist is an installed distribution: the <name>-<version>.dist-info
// directory in a site-packages directory and its RECORD.
type Dist struct {
	// Name and Version are as written in the .dist-info directory's name.
	Name    string `json:"name"`
	Version string `json:"version"`
	// SitePackages is the directory that holds DistInfo; RECORD's paths
	// are relative to it.
	SitePackages string `json:"site_packages"`
	// DistInfo is the .dist-info directory's path.
	DistInfo string `json:"dist_info"`
	// Files are RECORD's rows.
	Files []RecordEntry `json:"files"`
}

// Lookup returns RECORD's row for rel, a "/"-separated path relative to
// SitePackages, compared after cleaning ("./a/b" is "a/b").
func (d *Dist) Lookup(rel string) (RecordEntry, bool) {
	rel = cleanSlash(rel)
	for _, e := range d.Files {
		if cleanSlash(e.Path) == rel {
			return e, true
		}
	}
	return RecordEntry{}, false
}

func cleanSlash(p string) string {
	return filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
}

// NotInstalledError says that no site-packages directory holds the
// distribution a debug zip was built for. It matches ErrNotInstalled.
type NotInstalledError struct {
	// Name and Version are the wanted distribution, from the zip's name.
	Name, Version string
	// Looked lists the site-packages directories searched.
	Looked []string
	// Installed lists the other versions found, as "<version> (<dist-info
	// path>)".
	Installed []string
}

func (e *NotInstalledError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s is not installed", e.Name, e.Version)
	if len(e.Installed) > 0 {
		fmt.Fprintf(&b, "; installed: %s %s", e.Name, strings.Join(e.Installed, ", "))
	}
	if len(e.Looked) == 0 {
		b.WriteString(" (no site-packages directory to look in)")
	} else {
		fmt.Fprintf(&b, " (looked in %s)", strings.Join(e.Looked, ", "))
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotInstalled) true.
func (e *NotInstalledError) Is(target error) bool { return target == ErrNotInstalled }

// FindDistribution finds the installed distribution that the debug zip
// zipName (only its base name is used: <wheel-stem>-debug-symbols.zip)
// was built for: <sp>/<name>-<version>.dist-info with a RECORD, in the
// first of sitePackages that has it. Names are compared after PEP 503
// normalisation, so the zip of "dd_trace" finds "dd-trace"'s dist-info.
//
// When none has it the error is a *NotInstalledError (ErrNotInstalled)
// naming the distribution, the directories searched and any other
// installed version. A zip name that does not parse wraps ErrNotDebugZip.
func FindDistribution(zipName string, sitePackages []string) (*Dist, error) {
	w, err := ParseDebugZipName(zipName)
	if err != nil {
		return nil, err
	}
	want := NormalizeName(w.Name)
	nie := &NotInstalledError{Name: w.Name, Version: w.Version}
	for _, sp := range sitePackages {
		nie.Looked = append(nie.Looked, sp)
		ents, err := os.ReadDir(sp)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("find %s %s: %w", w.Name, w.Version, err)
		}
		for _, ent := range ents {
			nv, ok := strings.CutSuffix(ent.Name(), ".dist-info")
			if !ok {
				continue
			}
			i := strings.LastIndexByte(nv, '-')
			if i <= 0 {
				continue
			}
			name, version := nv[:i], nv[i+1:]
			if NormalizeName(name) != want {
				continue
			}
			di := filepath.Join(sp, ent.Name())
			if !sameVersion(version, w.Version) {
				nie.Installed = append(nie.Installed, fmt.Sprintf("%s (%s)", version, di))
				continue
			}
			return readDist(sp, di, name, version)
		}
	}
	sort.Strings(nie.Installed)
	return nil, nie
}

// readDist reads RECORD from the dist-info directory di.
func readDist(sp, di, name, version string) (*Dist, error) {
	rec := filepath.Join(di, "RECORD")
	f, err := saferead.Open(rec)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", name, version, err)
	}
	defer f.Close()
	files, err := ParseRecord(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rec, err)
	}
	return &Dist{Name: name, Version: version, SitePackages: sp, DistInfo: di, Files: files}, nil
}

// ErrNoSitePackages means no site-packages (or dist-packages) directory
// exists for an environment or interpreter.
var ErrNoSitePackages = errors.New("no site-packages directory")

// SitePackagesOf returns the existing site-packages directories of an
// environment, or of a plain interpreter when env is nil, in the order
// Python's site module puts them on sys.path:
//
//   - a venv, virtualenv or conda env: <env>/lib/pythonX.Y/site-packages,
//     X.Y from env.Version, else every lib/python* directory; then, when
//     pyvenv.cfg says include-system-site-packages, those of its base
//     interpreter (python when given, else <home>/pythonX.Y);
//   - an interpreter /P/bin/pythonX.Y: /P/lib/pythonX.Y/site-packages,
//     Debian's /P/local/lib/pythonX.Y/dist-packages,
//     /P/lib/python3/dist-packages and /P/lib/pythonX.Y/dist-packages.
//     X.Y comes from the file name (python3.11), else every
//     lib/python3.* directory.
//
// Directories that do not exist are left out; when none exists the error
// wraps ErrNoSitePackages and names the places looked at.
func SitePackagesOf(env *venv.Env, python string) ([]string, error) {
	var cands []string
	if env != nil {
		cands = append(cands, libDirs(env.Path, pyversion.MajorMinorOf(env.Version), "site-packages")...)
		if env.Cfg != nil && env.Cfg.IncludeSystemSitePackages {
			base := python
			if base == "" && env.Home != "" && pyversion.MajorMinorOf(env.Version) != "" {
				base = filepath.Join(env.Home, "python"+pyversion.MajorMinorOf(env.Version))
			}
			if base != "" {
				cands = append(cands, interpreterDirs(base)...)
			}
		}
	} else if python != "" {
		cands = interpreterDirs(python)
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c] {
			continue
		}
		seen[c] = true
		if fi, err := os.Stat(c); err == nil && fi.IsDir() {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		what := python
		if env != nil {
			what = env.Path
		}
		return nil, fmt.Errorf("%s: %w (looked for %s)", what, ErrNoSitePackages, strings.Join(cands, ", "))
	}
	return out, nil
}

// interpreterDirs lists the candidate directories of the interpreter at
// python (/P/bin/pythonX.Y), in sys.path order.
func interpreterDirs(python string) []string {
	prefix := filepath.Dir(filepath.Dir(python))
	// python3.11, python3.11d, python3.9-dbg (older Debian).
	xy := pyversion.MajorMinorOf(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(python), "python"), "-dbg"))
	var out []string
	out = append(out, libDirs(filepath.Join(prefix, "local"), xy, "dist-packages")...)
	out = append(out, filepath.Join(prefix, "lib", "python3", "dist-packages"))
	out = append(out, libDirs(prefix, xy, "dist-packages")...)
	out = append(out, libDirs(prefix, xy, "site-packages")...)
	return out
}

// libDirs returns <root>/lib/pythonX.Y/<leaf>, or, when xy is "", that
// path for every lib/pythonX.Y directory, sorted.
func libDirs(root, xy, leaf string) []string {
	if xy != "" {
		return []string{filepath.Join(root, "lib", "python"+xy, leaf)}
	}
	matches, _ := filepath.Glob(filepath.Join(root, "lib", "python[0-9]*"))
	sort.Strings(matches)
	var out []string
	for _, m := range matches {
		if v := strings.TrimPrefix(filepath.Base(m), "python"); pyversion.MajorMinorOf(v) == v {
			out = append(out, filepath.Join(m, leaf))
		}
	}
	return out
}
