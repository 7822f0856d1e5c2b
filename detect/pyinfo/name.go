package pyinfo

import (
	"path"
	"strings"

	"github.com/pyattach/pyattach/detect/pyversion"
)

// ParseName reads the version and ABI flags from the base name of a Python
// executable or of a libpython shared library:
//
//	python3.11       -> "3.11", ""
//	python3.11d      -> "3.11", "d"
//	python3.11-dbg   -> "3.11", "d"   (Debian's alias of python3.11d)
//	python3.6m       -> "3.6",  "m"
//	python3.13t      -> "3.13", "t"
//	libpython3.12.so.1.0  -> "3.12", ""
//	libpython3.13td.so    -> "3.13", "td"
//	libpython2.7.so.1.0   -> "2.7",  ""
//
// The version is major.minor only. ABI flags are returned in CPython's
// order (t, d, m, u) whatever their order in the name. Names without a
// minor version (python3, libpython3.so, the stable-ABI stub) and names
// of other files (python3.11-config, python3.11-gdb.py) are not matched.
// A name with a directory part is reduced to its base name first.
func ParseName(base string) (version, abiflags string, ok bool) {
	base = path.Base(base)
	rest, lib := strings.CutPrefix(base, "libpython")
	if !lib {
		var isExe bool
		rest, isExe = strings.CutPrefix(base, "python")
		if !isExe {
			return "", "", false
		}
	}
	version, rest, ok = cutMajorMinor(rest)
	if !ok {
		return "", "", false
	}
	flags, rest := cutFlags(rest)
	if lib {
		if !soSuffix(rest) {
			return "", "", false
		}
	} else {
		switch rest {
		case "":
		case "-dbg":
			flags += "d"
		default:
			return "", "", false
		}
	}
	abiflags, ok = pyversion.SortFlags(flags)
	if !ok {
		return "", "", false
	}
	return version, abiflags, true
}

// IsLibpython reports whether base names a libpython shared library that
// holds the interpreter runtime, such as libpython3.12.so.1.0 or
// libpython3.6m.so. The stable-ABI stub libpython3.so holds no runtime
// and is not matched.
func IsLibpython(base string) bool {
	if !strings.HasPrefix(path.Base(base), "libpython") {
		return false
	}
	_, _, ok := ParseName(base)
	return ok
}

// cutMajorMinor parses "M.m" (M is 2 or 3, m one or two digits) at the
// start of s and returns it and the rest of s.
func cutMajorMinor(s string) (version, rest string, ok bool) {
	if len(s) < 3 || (s[0] != '2' && s[0] != '3') || s[1] != '.' {
		return "", "", false
	}
	n := 0
	for n < len(s)-2 && isDigit(s[2+n]) {
		n++
	}
	if n < 1 || n > 2 || (n == 2 && s[2] == '0') {
		return "", "", false
	}
	return s[:2+n], s[2+n:], true
}

// cutFlags takes the ABI flag letters at the start of s.
func cutFlags(s string) (flags, rest string) {
	i := 0
	for i < len(s) && strings.IndexByte(pyversion.FlagOrder, s[i]) >= 0 {
		i++
	}
	return s[:i], s[i:]
}

// soSuffix reports whether s is ".so" optionally followed by numeric
// version parts (".so.1.0").
func soSuffix(s string) bool {
	rest, ok := strings.CutPrefix(s, ".so")
	if !ok {
		return false
	}
	for rest != "" {
		if rest[0] != '.' {
			return false
		}
		rest = rest[1:]
		n := 0
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		if n == 0 {
			return false
		}
		rest = rest[n:]
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// hasFlag reports whether the ABI flag string holds flag c.
func hasFlag(flags string, c byte) bool { return strings.IndexByte(flags, c) >= 0 }
