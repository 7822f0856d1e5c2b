package pyinfo

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/pyversion"
)

// FormatHexVersion formats a PY_VERSION_HEX value (0xMMmmppLS: major,
// minor, micro, release level 0xA alpha, 0xB beta, 0xC candidate, 0xF
// final, serial) as CPython writes PY_VERSION: 0x030d00f0 is "3.13.0",
// 0x030e00a1 is "3.14.0a1", 0x030c00c2 is "3.12.0rc2". It reports false
// for values that cannot be a CPython version (major not 2 or 3, unknown
// release level, a final release with a serial, bits above 32 set).
func FormatHexVersion(v uint64) (string, bool) {
	if v>>32 != 0 {
		return "", false
	}
	major := v >> 24 & 0xff
	minor := v >> 16 & 0xff
	micro := v >> 8 & 0xff
	level := v >> 4 & 0xf
	serial := v & 0xf
	if major != 2 && major != 3 || minor > 99 || micro > 99 {
		return "", false
	}
	s := fmt.Sprintf("%d.%d.%d", major, minor, micro)
	switch level {
	case 0xa:
		return s + fmt.Sprintf("a%d", serial), true
	case 0xb:
		return s + fmt.Sprintf("b%d", serial), true
	case 0xc:
		return s + fmt.Sprintf("rc%d", serial), true
	case 0xf:
		if serial != 0 {
			return "", false
		}
		return s, true
	}
	return "", false
}

// versionTailRE matches a PY_VERSION string at the end of a NUL-terminated
// string, either as the whole string or after a character that cannot be
// part of a version (the linker's tail merging keeps "3.9.18" as the end
// of "/root/.pyenv/versions/3.9.18").
var versionTailRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^0-9.])([23]\.[0-9]{1,2}\.[0-9]{1,2}(?:(?:a|b|rc)[0-9]{1,2})?\+?)$`)
})

// tailKeep is how many trailing bytes of each string the scanner keeps. A
// PY_VERSION string is at most 12 bytes ("3.14.10rc10+"); one more byte
// of context tells a merged tail from a longer number.
const tailKeep = 16

// versionCandidate is a version string found in .rodata.
type versionCandidate struct {
	Version string // without a trailing "+"
	Whole   bool   // the string was exactly the version
}

// maxCandidates bounds how many version strings a scan collects.
const maxCandidates = 64

// scanVersionStrings reads r in chunks of chunk bytes (at most limit bytes
// in all) and returns the PY_VERSION-like strings found among its
// NUL-terminated strings, in file order. Only the last few bytes of each
// string are kept, so memory use does not depend on the input.
func scanVersionStrings(r io.Reader, limit int64, chunk int) ([]versionCandidate, error) {
	if chunk <= 0 {
		chunk = 64 << 10
	}
	buf := make([]byte, chunk)
	tail := make([]byte, 0, 2*tailKeep)
	truncated := false
	var found []versionCandidate
	add := func(seg []byte) {
		tail = append(tail, seg...)
		if len(tail) > tailKeep {
			tail = append(tail[:0], tail[len(tail)-tailKeep:]...)
			truncated = true
		}
	}
	r = io.LimitReader(r, limit)
	for len(found) < maxCandidates {
		n, err := r.Read(buf)
		b := buf[:n]
		for len(b) > 0 {
			i := bytes.IndexByte(b, 0)
			if i < 0 {
				add(b)
				break
			}
			add(b[:i])
			if c, ok := matchVersion(tail, truncated); ok && len(found) < maxCandidates {
				found = append(found, c)
			}
			tail, truncated = tail[:0], false
			b = b[i+1:]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return found, err
		}
	}
	return found, nil
}

// matchVersion checks one NUL-terminated string (or its last bytes, when
// truncated) for a PY_VERSION at its end.
func matchVersion(s []byte, truncated bool) (versionCandidate, bool) {
	if len(s) < 5 || !(isDigit(s[len(s)-1]) || s[len(s)-1] == '+') {
		return versionCandidate{}, false
	}
	m := versionTailRE().FindSubmatchIndex(s)
	if m == nil {
		return versionCandidate{}, false
	}
	v := strings.TrimSuffix(string(s[m[2]:m[3]]), "+")
	return versionCandidate{Version: v, Whole: !truncated && m[2] == 0}, true
}

// pickVersion chooses among scanned candidates: one that agrees with the
// major.minor hint (from the file names) first, whole strings before
// merged tails; without agreement, the first whole string, then the first
// tail, unless requireHint is set.
func pickVersion(cands []versionCandidate, hint string, requireHint bool) (string, bool) {
	type pass struct{ agree, whole bool }
	passes := []pass{{true, true}, {true, false}}
	if !requireHint {
		passes = append(passes, pass{false, true}, pass{false, false})
	}
	for _, p := range passes {
		if p.agree && hint == "" {
			continue
		}
		for _, c := range cands {
			if c.Whole == p.whole && (!p.agree || pyversion.MajorMinorOf(c.Version) == hint) {
				return c.Version, true
			}
		}
	}
	return "", false
}
