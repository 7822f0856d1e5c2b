package pyversion

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a parsed Python version. The zero Version is not valid;
// get one from Parse or MustParse.
type Version struct {
	// Flags are the ABI flags written after the version ("d" for
	// 3.11d, "td" for 3.13td or 3.13dt), sorted into configure's order;
	// "" for none.
	Flags string

	parts int    // how many numbers were written: 1, 2 or 3
	pre   string // PEP 440 pre-release: "a1", "b2", "rc1"; "" for none
	plus  bool   // a trailing "+": a build after the tagged release
	nums  [3]int // major, minor, micro; 0 where not written
}

// SyntaxError is the error Parse returns for a string that is not a
// Python version.
type SyntaxError struct {
	Input string // the string given to Parse
	Msg   string // what is wrong with it
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid Python version %q: %s", e.Input, e.Msg)
}

// maxDigits bounds each number, so that every part fits an int.
const maxDigits = 9

// FlagOrder is the order in which CPython's configure appends ABI flags:
// t (Py_GIL_DISABLED), d (Py_DEBUG), m (pymalloc, before 3.8), u (wide
// Unicode, 3.2).
const FlagOrder = "tdmu"

// versionInfoLevels maps sys.version_info's releaselevel to PEP 440.
var versionInfoLevels = map[string]string{"alpha": "a", "beta": "b", "candidate": "rc", "final": ""}

// Parse parses a Python version in one of the forms the package
// documentation lists.
func Parse(s string) (Version, error) {
	fail := func(msg string) (Version, error) { return Version{}, &SyntaxError{Input: s, Msg: msg} }
	var nums [3]uint64
	var v Version
	rest := s
	for v.parts < 3 {
		d := leadingDigits(rest)
		switch {
		case d == "":
			if v.parts == 0 {
				return fail("it does not start with a number")
			}
			return fail("no number after a dot")
		case len(d) > maxDigits:
			return fail("a number is too long")
		case len(d) > 1 && d[0] == '0':
			return fail("a number has a leading zero")
		}
		nums[v.parts], _ = strconv.ParseUint(d, 10, 64)
		v.parts++
		rest = rest[len(d):]
		if v.parts == 3 || !strings.HasPrefix(rest, ".") || !isDigit(rest, 1) {
			break
		}
		rest = rest[1:]
	}
	if v.parts == 3 {
		// sys.version_info's releaselevel and serial: ".final.0", ".candidate.1".
		if level, tail, ok := strings.Cut(strings.TrimPrefix(rest, "."), "."); ok && rest != "" && rest[0] == '.' {
			pep, known := versionInfoLevels[level]
			serial := leadingDigits(tail)
			if known && serial != "" && len(serial) == len(tail) && len(serial) <= maxDigits && (len(serial) == 1 || serial[0] != '0') {
				if pep == "" && serial != "0" {
					return fail("a final release has serial 0")
				}
				if pep != "" {
					v.pre = pep + serial
				}
				rest = ""
			}
		}
		for _, tag := range []string{"rc", "a", "b"} {
			if r, ok := strings.CutPrefix(rest, tag); ok {
				d := leadingDigits(r)
				if d == "" || len(d) > maxDigits || len(d) > 1 && d[0] == '0' {
					return fail("a pre-release needs a number without leading zeros after " + tag)
				}
				v.pre = tag + d
				rest = r[len(d):]
				break
			}
		}
		if r, ok := strings.CutPrefix(rest, "+"); ok {
			v.plus = true
			rest = r
		}
	}
	if rest != "" {
		if v.parts < 2 {
			return fail("ABI flags or a suffix need major.minor before them")
		}
		flags, ok := SortFlags(rest)
		if !ok {
			return fail(fmt.Sprintf("%q is neither a pre-release (a1, b2, rc1), a trailing +, nor ABI flags (%s, each at most once)", rest, FlagOrder))
		}
		v.Flags = flags
	}
	for i, n := range nums {
		v.nums[i] = int(n)
	}
	return v, nil
}

// MustParse is Parse for constants; it panics on an error.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// SortFlags returns the ABI flags of s in FlagOrder ("" for ""); false
// when s holds anything else or holds a flag twice.
func SortFlags(s string) (string, bool) {
	if len(s) > len(FlagOrder) {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(FlagOrder); i++ {
		switch strings.Count(s, FlagOrder[i:i+1]) {
		case 0:
		case 1:
			b.WriteByte(FlagOrder[i])
		default:
			return "", false
		}
	}
	if b.Len() != len(s) {
		return "", false
	}
	return b.String(), true
}

// Leading returns the "X.Y.Z" (with an a/b/rc pre-release tag, if
// any) at the start of s, or "" when s does not start with one. What
// follows must be the end of s or one of "-+_t.~".
func Leading(s string) string {
	end := 0
	for part := 0; part < 3; part++ {
		if part > 0 {
			if end >= len(s) || s[end] != '.' {
				return ""
			}
			end++
		}
		d := leadingDigits(s[end:])
		if d == "" || len(d) > 3 {
			return ""
		}
		end += len(d)
	}
	if major := s[0]; major != '2' && major != '3' || s[1] != '.' {
		return ""
	}
	for _, tag := range []string{"rc", "a", "b"} {
		if rest, ok := strings.CutPrefix(s[end:], tag); ok {
			if d := leadingDigits(rest); d != "" {
				end += len(tag) + len(d)
			}
			break
		}
	}
	if end < len(s) && !strings.ContainsRune("-+_t.~", rune(s[end])) {
		return ""
	}
	return s[:end]
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func leadingDigitsRev(s string) string {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[i:]
}

func isDigit(s string, i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }

// Major returns the major version: 3 for 3.11.2.
func (v Version) Major() int { return v.nums[0] }

// Minor returns the minor version, 0 when only the major was written.
func (v Version) Minor() int { return v.nums[1] }

// Patch returns the micro version, 0 when it was not written.
func (v Version) Patch() int { return v.nums[2] }

// HasMinor reports whether the minor version was written (3.11, not 3).
func (v Version) HasMinor() bool { return v.parts >= 2 }

// HasPatch reports whether the micro version was written (3.11.2, not 3.11).
func (v Version) HasPatch() bool { return v.parts >= 3 }

// Exact reports whether v names one CPython release: all three numbers
// (3.11.2, 3.13.0rc1), whatever follows them.
func (v Version) Exact() bool { return v.HasPatch() }

// Tagged reports whether v could name a tag in CPython's repository:
// all three numbers and perhaps a pre-release (v3.12.1, v3.13.0rc1), no
// trailing + and no ABI flags.
func (v Version) Tagged() bool { return v.HasPatch() && !v.plus && v.Flags == "" }

// Pre returns the PEP 440 pre-release ("a1", "b2", "rc1"), "" for none.
func (v Version) Pre() string { return v.pre }

// Plus reports whether the version ended with "+", as PY_VERSION does
// in a build from sources after a tag (3.11.2+).
func (v Version) Plus() bool { return v.plus }

// MajorMinor returns "major.minor" without anything after it: "3.11" for
// 3.11.2, 3.11d and 3.11.0rc1; "" when only the major was written.
func (v Version) MajorMinor() string {
	if !v.HasMinor() {
		return ""
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
}

// MajorMinorOf returns Parse(s).MajorMinor(): "3.11" for 3.11.2 or
// 3.11d, and "" when s does not parse or has no minor.
func MajorMinorOf(s string) string {
	v, err := Parse(s)
	if err != nil {
		return ""
	}
	return v.MajorMinor()
}

// Release returns the numbers as written, without pre-release, "+" or
// flags: "3.13.0" for 3.13.0rc1+, "3.11" for 3.11d.
func (v Version) Release() string {
	switch v.parts {
	case 0:
		return ""
	case 1:
		return strconv.Itoa(v.Major())
	case 2:
		return v.MajorMinor()
	}
	return fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch())
}

// AtLeast reports whether v is major.minor or later (3.13.0rc1 is at
// least 3.13).
func (v Version) AtLeast(major, minor int) bool {
	return v.Major() > major || v.Major() == major && v.Minor() >= minor
}

// Compare returns -1, 0 or +1 as v sorts before, with or after o: by
// the numbers first, then a pre-release before its release (3.13.0rc1 <
// 3.13.0 < 3.13.1; a < b < rc, then the pre-release's number), then as
// the package documentation says for versions equal so far.
func (v Version) Compare(o Version) int {
	for i := range v.nums {
		if c := cmpInt(v.nums[i], o.nums[i]); c != 0 {
			return c
		}
	}
	if c := comparePre(v.pre, o.pre); c != 0 {
		return c
	}
	if v.parts != o.parts {
		return cmpInt(v.parts, o.parts)
	}
	if v.plus != o.plus {
		if v.plus {
			return 1
		}
		return -1
	}
	return strings.Compare(v.Flags, o.Flags)
}

// comparePre orders two PEP 440 pre-releases ("a1", "b2", "rc10"; ""
// for a release, which sorts after all of them): by tag (a < b < rc),
// then by number.
func comparePre(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	an, bn := leadingDigitsRev(a), leadingDigitsRev(b)
	if c := strings.Compare(a[:len(a)-len(an)], b[:len(b)-len(bn)]); c != 0 {
		return c
	}
	// Parse allows no leading zeros: the longer number is the larger.
	if c := cmpInt(len(an), len(bn)); c != 0 {
		return c
	}
	return strings.Compare(an, bn)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// String returns v in PEP 440 form with its flags, as Parse reads it:
// "3.13.0rc1", "3.11.2+", "3.13td". The dotted sys.version_info form is
// written the PEP 440 way (3.12.1.final.0 as 3.12.1).
func (v Version) String() string {
	s := v.Release()
	if v.HasPatch() {
		s += v.pre
		if v.plus {
			s += "+"
		}
	}
	return s + v.Flags
}
