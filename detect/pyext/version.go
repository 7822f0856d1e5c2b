package pyext

import (
	"fmt"
	"path"
	"strings"

	"github.com/pyattach/pyattach/detect/pyinfo"
	"github.com/pyattach/pyattach/detect/pyversion"
)

// parseVersion parses an interpreter's or extension's version through
// pyversion ("3.11", "3.11.2", "3.13.0+", "3.13.0rc1", "3.13t"); it
// needs major.minor at least.
func parseVersion(s string) (pyversion.Version, bool) {
	v, err := pyversion.Parse(s)
	return v, err == nil && v.HasMinor()
}

// exactVersion reports whether s is a version a CPython tag can name:
// X.Y.Z, optionally with an a/b/rc pre-release tag (3.13.0rc1), written
// the way pyversion writes it.
func exactVersion(s string) bool {
	v, err := pyversion.Parse(s)
	return err == nil && v.Tagged() && v.String() == s
}

// versionInDirs looks for an X.Y.Z version in the directory components
// of p, nearest first: a component that is a version (pyenv's
// versions/3.12.1, the cache's extensions/3.12.1) or that starts with
// "Python-", "python-" or "cpython-" followed by one (a source tree,
// uv's cpython-3.12.1-linux-x86_64-gnu).
func versionInDirs(p string) string {
	dir := path.Dir(p)
	for dir != "/" && dir != "." && dir != "" {
		c := path.Base(dir)
		for _, prefix := range []string{"", "Python-", "python-", "cpython-"} {
			if rest, ok := strings.CutPrefix(c, prefix); ok {
				if v := pyversion.Leading(rest); v != "" {
					return v
				}
			}
		}
		dir = path.Dir(dir)
	}
	return ""
}

// versionFromName reads the version from an extension's file name:
// "3.11" from python3.11-gdb.py, python3.11d-gdb.py, python3.11-dbg-gdb.py
// or libpython3.11.so.1.0-gdb.py; "3.12.1" from Fedora's
// libpython3.12.so.1.0-3.12.1-1.fc39.x86_64.debug-gdb.py. It returns ""
// for names that tell nothing (python-gdb.py, libpython.py).
func versionFromName(base string) string {
	s := strings.TrimSuffix(base, "-gdb.py")
	if s == base {
		return ""
	}
	s = strings.TrimSuffix(s, ".debug")
	if v, _, ok := pyinfo.ParseName(s); ok {
		return v
	}
	// Fedora: <objfile>-<version>-<release>.<arch>.debug. The objfile
	// may itself hold a dash (python3.11-dbg), so try every dash.
	for i := strings.IndexByte(s, '-'); i > 0; {
		if v, _, ok := pyinfo.ParseName(s[:i]); ok {
			if full := pyversion.Leading(s[i+1:]); strings.HasPrefix(full, v+".") {
				return full
			}
			return v
		}
		j := strings.IndexByte(s[i+1:], '-')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return ""
}

// refineVersion combines a version read from a file name with a more
// precise one from elsewhere: the precise one wins when both agree on
// major.minor, the name's otherwise.
func refineVersion(name, other string) string {
	if other == "" {
		return name
	}
	if name == "" {
		return other
	}
	a, okA := parseVersion(name)
	b, okB := parseVersion(other)
	if !okA || !okB || a.MajorMinor() != b.MajorMinor() {
		return name
	}
	if b.HasPatch() && !a.HasPatch() {
		return other
	}
	return name
}

// Match ranks, best first.
const (
	rankExact       = iota // same X.Y.Z
	rankMinor              // same X.Y, micro unknown on one side
	rankMicroDiffer        // same X.Y, different Z
	rankUnknown            // the extension's or the interpreter's version is unknown
	rankMismatch           // another X.Y
)

// compareVersions ranks an extension's version against the
// interpreter's and says what is worth a warning. ABI flags, a trailing
// "+" and pre-release tags do not change the rank: an extension from
// 3.14.0a1's tree serves a 3.14.0 interpreter as well as 3.14.0's.
func compareVersions(ext, interp string) (rank int, match bool, warning string) {
	e, okE := parseVersion(ext)
	i, okI := parseVersion(interp)
	switch {
	case !okI:
		return rankUnknown, false, "the interpreter's version is unknown: cannot tell whether this extension matches it"
	case !okE:
		return rankUnknown, false, fmt.Sprintf("the extension's version is unknown: cannot tell whether it matches interpreter %s", interp)
	case e.MajorMinor() != i.MajorMinor():
		return rankMismatch, false, fmt.Sprintf("version %s does not match interpreter %s", ext, interp)
	case e.HasPatch() && i.HasPatch() && e.Patch() != i.Patch():
		return rankMicroDiffer, true, fmt.Sprintf("version %s is not the interpreter's exact version %s (same %s; py-bt usually works, a mismatch can misread frames)", ext, interp, i.MajorMinor())
	case e.HasPatch() && i.HasPatch():
		return rankExact, true, ""
	}
	return rankMinor, true, ""
}
