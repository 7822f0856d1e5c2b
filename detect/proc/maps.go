package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrMalformedMaps is wrapped by every error ParseMaps returns for input
// that is not in the format of /proc/PID/maps.
var ErrMalformedMaps = errors.New("malformed maps")

// pathMax is Linux's PATH_MAX.
const pathMax = 4096

// MaxMapsLine bounds the length of one line of /proc/PID/maps that
// ParseMaps accepts. The fixed fields take at most 100 bytes and the
// padding pads them to 73 columns; the path is at most PATH_MAX bytes,
// but the kernel writes a newline in a name as the four bytes `\012`, so
// the bound allows for a path made of escapes, plus " (deleted)".
const MaxMapsLine = 4*pathMax + 256

// deletedSuffix is what the kernel appends to the path of a file that was
// unlinked while mapped (or exec'd).
const deletedSuffix = " (deleted)"

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start  uint64 `json:"start"`  // first address
	End    uint64 `json:"end"`    // first address after the mapping
	Offset uint64 `json:"offset"` // file offset of Start
	Perms  string `json:"perms"`  // e.g. "r-xp": read, write, exec, private (p) or shared (s)
	Dev    string `json:"dev"`    // device of the file, "major:minor" in hex, e.g. "fe:00"
	Inode  uint64 `json:"inode"`  // 0 for anonymous mappings
	// Path is the file name, as the process sees it (resolve it under
	// PID/root), or a pseudo path like "[heap]", "[vdso]", "[stack]",
	// "[anon:name]", or empty for an anonymous mapping. The kernel writes
	// a newline in a name as `\012` (and escapes nothing else, not even a
	// backslash); Path has the newline back. So a name that holds the
	// four characters `\012` itself reads as one with a newline: a caller
	// that must know the file opens it by mapping (Proc.OpenMapFile) or
	// compares Dev and Inode. Leading spaces of a name cannot be told
	// from the padding and are lost.
	Path string `json:"path"`
	// Deleted is true when the kernel marked the file " (deleted)": it
	// was unlinked (or replaced) after it was mapped. The suffix is
	// stripped from Path.
	Deleted bool `json:"deleted"`
}

// File reports whether m maps a file: a path that is no pseudo path
// ("[heap]", "[vdso]") and an inode.
func (m Mapping) File() bool {
	return m.Path != "" && !strings.HasPrefix(m.Path, "[") && m.Inode != 0
}

// MapsError is the error ParseMaps returns for a malformed line. It wraps
// ErrMalformedMaps.
type MapsError struct {
	Line   int    // 1-based line number
	Reason string // what is wrong, e.g. `bad permissions "rwz"`
}

func (e *MapsError) Error() string {
	return fmt.Sprintf("malformed maps line %d: %s", e.Line, e.Reason)
}

// Unwrap returns ErrMalformedMaps.
func (e *MapsError) Unwrap() error { return ErrMalformedMaps }

// ParseMaps parses the text of /proc/PID/maps:
//
//	start-end perms offset dev inode    path
//	00400000-0041f000 r--p 00000000 fe:00 10166280   /usr/bin/python3.11
//
// A line that does not have this form, or is longer than MaxMapsLine,
// gives a *MapsError naming the line. Errors from r are returned wrapped.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	var maps []Mapping
	err := eachLine(r, "maps", func(b []byte) error {
		m, err := parseMapsLine(b)
		if err != nil {
			return err
		}
		maps = append(maps, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return maps, nil
}

// eachLine calls fn with each line of r, the text of maps or smaps
// (what). An error from fn, or a line longer than MaxMapsLine, gives a
// *MapsError naming the line; errors from r are returned wrapped.
func eachLine(r io.Reader, what string, fn func(b []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxMapsLine)
	sc.Split(splitLF)
	line := 0
	for sc.Scan() {
		line++
		if err := fn(sc.Bytes()); err != nil {
			return &MapsError{Line: line, Reason: err.Error()}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &MapsError{Line: line + 1, Reason: fmt.Sprintf("line longer than %d bytes", MaxMapsLine)}
		}
		return fmt.Errorf("read %s: %w", what, err)
	}
	return nil
}

// splitLF splits at '\n' only; unlike bufio.ScanLines it keeps a '\r',
// which may end a file name.
func splitLF(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// parseMapsLine parses one line; its errors are reasons for a MapsError.
func parseMapsLine(b []byte) (Mapping, error) {
	var m Mapping
	s := string(b)
	// field takes the next field off s, refused unless valid (when not
	// nil) accepts it.
	field := func(what string, valid func(string) bool) (string, error) {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return "", fmt.Errorf("missing %s", what)
		}
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			i = len(s)
		}
		f := s[:i]
		s = s[i:]
		if valid != nil && !valid(f) {
			return "", fmt.Errorf("bad %s %s", what, quote(f))
		}
		return f, nil
	}
	// number takes the next field off s and parses it.
	number := func(what string, parse func(string) (uint64, error)) (uint64, error) {
		f, err := field(what, nil)
		if err != nil {
			return 0, err
		}
		n, err := parse(f)
		if err != nil {
			return 0, fmt.Errorf("bad %s %s", what, quote(f))
		}
		return n, nil
	}

	addr, err := field("address range", nil)
	if err != nil {
		return m, err
	}
	lo, hi, ok := strings.Cut(addr, "-")
	if !ok {
		return m, fmt.Errorf("bad address range %s", quote(addr))
	}
	if m.Start, err = parseHex(lo); err != nil {
		return m, fmt.Errorf("bad start address %s", quote(lo))
	}
	if m.End, err = parseHex(hi); err != nil {
		return m, fmt.Errorf("bad end address %s", quote(hi))
	}
	if m.End < m.Start {
		return m, fmt.Errorf("end address before start %s", quote(addr))
	}

	if m.Perms, err = field("permissions", validPerms); err != nil {
		return m, err
	}

	if m.Offset, err = number("offset", parseHex); err != nil {
		return m, err
	}
	if m.Dev, err = field("device", validDev); err != nil {
		return m, err
	}
	if m.Inode, err = number("inode", parseDec); err != nil {
		return m, err
	}

	// The rest, after the padding, is the path, which may hold spaces.
	p := strings.TrimLeft(s, " ")
	if strings.HasSuffix(p, deletedSuffix) {
		p = strings.TrimSuffix(p, deletedSuffix)
		m.Deleted = true
	}
	m.Path = unescapeMapsPath(p)
	return m, nil
}

// unescapeMapsPath undoes the one escape the kernel applies to a file
// name in maps (seq_file_path with "\n" as the set to escape, in
// fs/proc/task_mmu.c): a newline is written as the octal escape `\012`.
func unescapeMapsPath(p string) string {
	return strings.ReplaceAll(p, `\012`, "\n")
}

// parseHex and parseDec take plain digits only: strconv.ParseUint with
// a base other than 0 refuses a sign, a "0x" prefix and underscores.
func parseHex(s string) (uint64, error) { return strconv.ParseUint(s, 16, 64) }

func parseDec(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }

func isHex(s string) bool {
	_, err := parseHex(s)
	return err == nil
}

func validPerms(s string) bool {
	return len(s) == 4 &&
		(s[0] == 'r' || s[0] == '-') &&
		(s[1] == 'w' || s[1] == '-') &&
		(s[2] == 'x' || s[2] == '-') &&
		(s[3] == 'p' || s[3] == 's')
}

func validDev(s string) bool {
	major, minor, ok := strings.Cut(s, ":")
	return ok && isHex(major) && isHex(minor)
}

// quote quotes s for an error message, cut to a readable length.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// Module is one file mapped into a process: an executable, a shared
// library, or some other mapped file (the maps cannot tell an ELF file
// from a data file; the caller checks).
type Module struct {
	Path    string `json:"path"`    // as the process sees it; open it with OpenInRoot
	Start   uint64 `json:"start"`   // lowest start address of its mappings
	Deleted bool   `json:"deleted"` // unlinked since it was mapped; open it with OpenMapFile
	Inode   uint64 `json:"inode"`
	Dev     string `json:"dev"`
}

// Modules returns the files mapped in maps, once each, in order of first
// appearance. A file is identified by path, device, inode and deleted
// mark, so an old deleted copy and a new file at the same path are two
// modules. Pseudo paths ("[heap]", "[vdso]", "[anon:...]"), anonymous
// mappings, device files (/dev/...), memfd files ("/memfd:..."), System V
// shared memory ("/SYSV00000000 (deleted)") and anon_inode entries are
// left out.
func Modules(maps []Mapping) []Module {
	type key struct {
		path    string
		dev     string
		inode   uint64
		deleted bool
	}
	var mods []Module
	index := make(map[key]int)
	for _, m := range maps {
		if !fileBacked(m) {
			continue
		}
		k := key{m.Path, m.Dev, m.Inode, m.Deleted}
		if i, ok := index[k]; ok {
			if m.Start < mods[i].Start {
				mods[i].Start = m.Start
			}
			continue
		}
		index[k] = len(mods)
		mods = append(mods, Module{Path: m.Path, Start: m.Start, Deleted: m.Deleted, Inode: m.Inode, Dev: m.Dev})
	}
	return mods
}

func fileBacked(m Mapping) bool {
	p := m.Path
	switch {
	case !strings.HasPrefix(p, "/"):
		return false // "", "[heap]", "anon_inode:...", ...
	case strings.HasPrefix(p, "/dev/"), strings.HasPrefix(p, "/memfd:"):
		return false
	case m.Deleted && isSysV(p):
		return false
	}
	return true
}

// isSysV reports whether p is the name the kernel gives a System V shared
// memory segment: "/SYSV" and eight hex digits.
func isSysV(p string) bool {
	rest, ok := strings.CutPrefix(p, "/SYSV")
	return ok && len(rest) == 8 && isHex(rest)
}
