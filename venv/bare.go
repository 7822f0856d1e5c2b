package venv

import (
	"os"
	"path/filepath"
	"strings"
)

// InPrefix reports whether exe sits where an installed interpreter sits:
// its directory's parent (the prefix) holds lib/pythonX.Y/os.py, the
// landmark CPython itself looks for. Debian's /usr/bin/python3.11, a
// pyenv or uv version and a conda env are in their prefix; a bare copy
// such as /opt/app/bin/python3 or /tmp/python3.11 is not, and is worth
// matching against the candidates (Options.FindOriginal).
func InPrefix(exe string) bool {
	prefix := filepath.Dir(filepath.Dir(exe))
	return len(globIn(filepath.Join(prefix, "lib", "python[23]*"), "os.py")) > 0
}

// globIn is filepath.Glob(filepath.Join(dirs, name)) for a plain name:
// the directories matching the pattern dirs that hold an entry name,
// found with one Lstat each instead of listing each directory (Glob
// reads every name in /usr/lib/python3.11 to find os.py there).
func globIn(dirs, name string) []string {
	ds, _ := filepath.Glob(dirs)
	var out []string
	for _, d := range ds {
		p := filepath.Join(d, name)
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// PrefixBin returns the bin directory of the installation a shared
// libpython belongs to (/p/lib/libpython3.12.so.1.0 gives /p/bin), or ""
// when lib is not in a directory named lib*: the place to look first for
// the original of a bare copy that loads this libpython.
func PrefixBin(lib string) string {
	dir := filepath.Dir(lib)
	if !strings.HasPrefix(filepath.Base(dir), "lib") {
		return ""
	}
	return filepath.Join(filepath.Dir(dir), "bin")
}
