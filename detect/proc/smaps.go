package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Area is one mapping of /proc/PID/smaps: its maps line and the fields
// a core writer decides by.
type Area struct {
	Mapping
	// Rss is the "Rss:" field in bytes: the pages in memory. Anonymous
	// is the "Anonymous:" field: pages of the mapping that are the
	// process's own (written copies, for a private file mapping). Swap
	// is the "Swap:" field.
	Rss       uint64
	Anonymous uint64
	Swap      uint64
	// VmFlags are the two-letter flags of the "VmFlags:" line ("rd",
	// "wr", "io", "dd", ...), nil on kernels without that line.
	VmFlags []string
}

// Flag reports whether the VmFlags line holds f ("dd": VM_DONTDUMP).
func (a Area) Flag(f string) bool {
	for _, x := range a.VmFlags {
		if x == f {
			return true
		}
	}
	return false
}

// ParseSmaps parses the text of /proc/PID/smaps: a maps line (as
// ParseMaps reads it) per mapping, each followed by "Key: value" lines.
// Fields it does not know are ignored; a field before the first maps
// line, a malformed maps line or a bad number gives a *MapsError.
func ParseSmaps(r io.Reader) ([]Area, error) {
	var out []Area
	err := eachLine(r, "smaps", func(b []byte) error {
		key, rest, field := smapsField(b)
		if !field {
			m, err := parseMapsLine(b)
			if err != nil {
				return err
			}
			out = append(out, Area{Mapping: m})
			return nil
		}
		if len(out) == 0 {
			return fmt.Errorf("field %s before the first mapping", quote(key))
		}
		a := &out[len(out)-1]
		switch key {
		case "Rss", "Anonymous", "Swap":
			n, err := parseKB(rest)
			if err != nil {
				return fmt.Errorf("bad %s %s", key, quote(rest))
			}
			switch key {
			case "Rss":
				a.Rss = n
			case "Swap":
				a.Swap = n
			default:
				a.Anonymous = n
			}
		case "VmFlags":
			a.VmFlags = strings.Fields(rest)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// smapsField splits a "Key: value" line; a maps line (whose first word
// is an address range) is not one.
func smapsField(b []byte) (key, rest string, ok bool) {
	i := bytes.IndexByte(b, ':')
	if i <= 0 {
		return "", "", false
	}
	for _, c := range b[:i] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_') {
			return "", "", false
		}
	}
	return string(b[:i]), strings.TrimSpace(string(b[i+1:])), true
}

// parseKB parses "124 kB" into bytes.
func parseKB(s string) (uint64, error) {
	n, ok := strings.CutSuffix(s, " kB")
	if !ok {
		return 0, errors.New("no kB")
	}
	v, err := parseDec(strings.TrimSpace(n))
	if err != nil || v > 1<<53 {
		return 0, errors.New("bad number")
	}
	return v << 10, nil
}

// StatFields splits the text of PID/stat (or PID/task/TID/stat) into the
// command name and the fields after it, state first (field 3 of proc(5)
// is fields[0]). The comm may hold spaces and parentheses: it ends at
// the last ')'.
func StatFields(b []byte) (comm string, fields []string, err error) {
	s := string(b)
	open := strings.IndexByte(s, '(')
	end := strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", nil, errors.New("no (comm) field")
	}
	return s[open+1 : end], strings.Fields(s[end+1:]), nil
}

// StatInt is field i of fields (StatFields), or 0 when absent or not a
// number.
func StatInt(fields []string, i int) int64 {
	if i >= len(fields) {
		return 0
	}
	n, err := strconv.ParseInt(fields[i], 10, 64)
	if err != nil {
		return 0
	}
	return n
}
