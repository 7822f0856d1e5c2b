package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DefaultRoots is where scripts/make-roots.sh leaves its Debian roots;
// PYATTACH_ROOTS moves them (as pyoffsets.RootsDir reads it).
const DefaultRoots = "/var/cache/pyattach-test/roots"

// RootsDir is $PYATTACH_ROOTS, else DefaultRoots.
func RootsDir() string {
	if d := os.Getenv("PYATTACH_ROOTS"); d != "" {
		return d
	}
	return DefaultRoots
}

// Root is one Python version in one cached Debian root.
type Root struct {
	Minor string // "3.13", "3.13t"
	Suite string // "trixie"
	Dir   string // the root's directory on this machine
}

// Exe is the interpreter's path inside the root: Debian's packages in
// /usr/bin, the free-threaded build make-roots.sh makes in
// /usr/local/bin.
func (r Root) Exe() string {
	if strings.HasSuffix(r.Minor, "t") {
		return "/usr/local/bin/python" + r.Minor
	}
	return "/usr/bin/python" + r.Minor
}

// Roots reads the versions file make-roots.sh writes: one line per
// Python version, "VERSION SUITE", or "VERSION - REASON" when the mirror
// does not serve it (that version is left out, under CI too: the script
// said why). No usable root at all (no versions file, or every version
// left out or incomplete) is Missing, so a test never passes having
// checked nothing; a root that should be there and is incomplete is an
// error under CI=true and a log line elsewhere.
func Roots(t testing.TB) []Root {
	t.Helper()
	dir := RootsDir()
	b, err := os.ReadFile(filepath.Join(dir, "versions"))
	if err != nil {
		Missing(t, "no Debian roots in %s (%v); make them with: sudo scripts/make-roots.sh", dir, err)
	}
	var out []Root
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if f[1] == "-" {
			t.Logf("Python %s is not tested: %s", f[0], strings.Join(f[2:], " "))
			continue
		}
		r := Root{Minor: f[0], Suite: f[1], Dir: filepath.Join(dir, f[1])}
		if _, err := os.Stat(filepath.Join(r.Dir, "pyattach-stamp")); err != nil {
			if InCI() {
				t.Errorf("root %s for Python %s is incomplete: %v", r.Dir, r.Minor, err)
			} else {
				t.Logf("root %s for Python %s is incomplete; run sudo scripts/make-roots.sh", r.Dir, r.Minor)
			}
			continue
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		Missing(t, "no usable Debian root in %s; make them with: sudo scripts/make-roots.sh", dir)
	}
	return out
}
