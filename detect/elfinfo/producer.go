package elfinfo

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/dwarfform"
)

// Producer is a parsed DW_AT_producer string, such as
// "GNU C11 12.2.0 -mtune=generic -march=x86-64 -g -O3 -flto".
type Producer struct {
	Raw      string `json:"raw"`
	Compiler string `json:"compiler"` // "GNU C11", "clang", ...
	Version  string `json:"version"`  // "12.2.0"
	// GLevel is the debug level: "0", "1", "2" (plain -g), "3", or "" when
	// the producer does not record it (clang does not).
	GLevel string `json:"g_level"`
	// OLevel is the optimisation level: "0", "1", "2", "3", "s", "z",
	// "fast", "g", or "" when not recorded.
	OLevel string `json:"o_level"`
	// LTO is true when -flto appears.
	LTO bool `json:"lto"`
}

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(\d+\.\d+(?:\.\d+)?)\b`) })

// ParseProducer parses a DW_AT_producer string. It never fails: fields it
// cannot find are left empty.
func ParseProducer(s string) Producer {
	p := Producer{Raw: s}
	fields := strings.Fields(s)
	// The compiler name is everything before the first version number.
	var name []string
	i := 0
	for ; i < len(fields); i++ {
		if versionRE().MatchString(fields[i]) && !strings.HasPrefix(fields[i], "-") {
			p.Version = versionRE().FindString(fields[i])
			i++
			break
		}
		if strings.HasPrefix(fields[i], "-") {
			break
		}
		name = append(name, fields[i])
	}
	p.Compiler = strings.Join(name, " ")
	if strings.HasSuffix(p.Compiler, " version") {
		p.Compiler = strings.TrimSuffix(p.Compiler, " version")
	}
	for _, f := range fields[i:] {
		switch {
		case f == "-g":
			p.GLevel = "2"
		case f == "-g0" || f == "-g1" || f == "-g2" || f == "-g3":
			p.GLevel = f[2:]
		case f == "-ggdb" || f == "-gdwarf" || strings.HasPrefix(f, "-gdwarf-"):
			if p.GLevel == "" {
				p.GLevel = "2"
			}
		case strings.HasPrefix(f, "-ggdb") && len(f) == 6 && f[5] >= '0' && f[5] <= '3':
			p.GLevel = f[5:]
		case f == "-O":
			p.OLevel = "1"
		case strings.HasPrefix(f, "-O") && len(f) > 2:
			p.OLevel = f[2:]
		case f == "-flto" || strings.HasPrefix(f, "-flto="):
			p.LTO = true
		case f == "-fno-lto":
			p.LTO = false
		}
	}
	// GCC writes "GNU GIMPLE" for the unit that LTO produced.
	if strings.Contains(p.Compiler, "GIMPLE") {
		p.LTO = true
	}
	return p
}

// DWARF constants used by the first-DIE reader.
const (
	dwTagCompileUnit = 0x11
	dwTagPartialUnit = 0x3c
	dwTagSkeletonCU  = 0x4a
	dwAtProducer     = 0x25
	dwUTCompile      = 0x01
	dwUTPartial      = 0x03
	dwUTSkeleton     = 0x04
	dwUTSplitCompile = 0x05
)

// maxDIEPrefix is how much of .debug_info is read to decode the first
// DIE; the DIE of a compile unit is a few dozen bytes.
const maxDIEPrefix = 4096

// firstProducer returns DW_AT_producer of the first compile unit.
func firstProducer(f *elf.File) (string, error) {
	info := f.Section(".debug_info")
	abbrev := f.Section(".debug_abbrev")
	if info == nil || abbrev == nil || info.Type == elf.SHT_NOBITS {
		return "", nil
	}
	head, err := readPrefix(info, 0, maxDIEPrefix)
	if err != nil {
		return "", err
	}
	str := func(sec string, off uint64) (string, error) {
		s := f.Section(sec)
		if s == nil {
			return "", Corruptf(".debug_info", -1, "a string in %s, which the file lacks", sec)
		}
		b, err := readPrefix(s, off, 4096)
		if err != nil {
			return "", err
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b), nil
	}
	abbrevAt := func(off uint64) ([]byte, error) { return readPrefix(abbrev, off, 64<<10) }
	return FirstDIEProducer(head, f.ByteOrder, abbrevAt, str)
}

// readPrefix reads up to n bytes of a section starting at off, through
// the decompressing reader when the section is compressed.
func readPrefix(s *elf.Section, off, n uint64) ([]byte, error) {
	r := s.Open()
	if _, err := r.Seek(int64(off), io.SeekStart); err != nil {
		return nil, Corruptf(s.Name, int64(off), "%v", err)
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, Corruptf(s.Name, int64(off), "%v", err)
	}
	return b, nil
}

// dreader decodes DWARF from b, the bytes of section sec from offset
// base on; its errors are *FormatErrors at the offset reached.
type dreader struct {
	b    []byte
	bo   binary.ByteOrder
	err  error
	sec  string
	base uint64
	size int // len(b) at the start
}

func newDreader(b []byte, bo binary.ByteOrder, sec string, base uint64) *dreader {
	return &dreader{b: b, bo: bo, sec: sec, base: base, size: len(b)}
}

// at returns the section offset of the next byte.
func (r *dreader) at() int64 { return int64(r.base) + int64(r.size-len(r.b)) }

func (r *dreader) fail(format string, args ...any) *FormatError {
	return Corruptf(r.sec, r.at(), format, args...)
}

func (r *dreader) short() {
	if r.err == nil {
		r.err = r.fail("DWARF unit is truncated")
	}
}

func (r *dreader) U8() uint64 {
	if len(r.b) < 1 {
		r.short()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return uint64(v)
}

func (r *dreader) Fixed(k int) uint64 {
	if len(r.b) < k {
		r.short()
		r.b = nil
		return 0
	}
	var v uint64
	switch k {
	case 2:
		v = uint64(r.bo.Uint16(r.b))
	case 3:
		if r.bo == binary.LittleEndian {
			v = uint64(r.b[0]) | uint64(r.b[1])<<8 | uint64(r.b[2])<<16
		} else {
			v = uint64(r.b[2]) | uint64(r.b[1])<<8 | uint64(r.b[0])<<16
		}
	case 4:
		v = uint64(r.bo.Uint32(r.b))
	case 8:
		v = r.bo.Uint64(r.b)
	default:
		for i := 0; i < k; i++ {
			v = v<<8 | uint64(r.b[i])
		}
	}
	r.b = r.b[k:]
	return v
}

func (r *dreader) ULEB() uint64 {
	var v uint64
	var shift uint
	for {
		if len(r.b) == 0 {
			r.short()
			return 0
		}
		c := r.b[0]
		r.b = r.b[1:]
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *dreader) Skip(k uint64) {
	if uint64(len(r.b)) < k {
		r.short()
		r.b = nil
		return
	}
	r.b = r.b[k:]
}

func (r *dreader) CStr() string {
	i := bytes.IndexByte(r.b, 0)
	if i < 0 {
		r.short()
		r.b = nil
		return ""
	}
	s := string(r.b[:i])
	r.b = r.b[i+1:]
	return s
}

// FirstDIEProducer decodes the first DIE of the first unit in head (a
// prefix of .debug_info) and returns its DW_AT_producer. abbrevAt returns
// the abbreviation table at an offset of .debug_abbrev; str returns the
// NUL-terminated string at an offset of the named string section
// (".debug_str" or ".debug_line_str"). It returns "" and no error when the
// DIE has no producer or uses a form that cannot be resolved from here
// (DW_FORM_strx, which needs the unit's string-offsets base).
func FirstDIEProducer(head []byte, bo binary.ByteOrder, abbrevAt func(uint64) ([]byte, error), str func(string, uint64) (string, error)) (string, error) {
	r := newDreader(head, bo, ".debug_info", 0)
	length, offsz := dwarfform.InitialLength(r)
	if offsz == 0 {
		return "", Corruptf(".debug_info", 0, "reserved unit length %#x", length)
	}
	version := r.Fixed(2)
	var abbrevOff, addrsz uint64
	switch {
	case version >= 2 && version <= 4:
		abbrevOff = r.Fixed(offsz)
		addrsz = r.U8()
	case version == 5:
		ut := r.U8()
		addrsz = r.U8()
		abbrevOff = r.Fixed(offsz)
		switch ut {
		case dwUTCompile, dwUTPartial:
		case dwUTSkeleton, dwUTSplitCompile:
			r.Skip(8)
		default:
			// Type units and others carry more header fields.
			return "", nil
		}
	default:
		return "", Corruptf(".debug_info", 0, "unsupported DWARF version %d", version)
	}
	if r.err != nil {
		return "", r.err
	}
	code := r.ULEB()
	if r.err != nil || code == 0 {
		return "", r.err
	}
	ab, err := abbrevAt(abbrevOff)
	if err != nil {
		return "", err
	}
	attrs, err := findAbbrev(ab, abbrevOff, code)
	if err != nil {
		return "", err
	}
	for _, a := range attrs {
		if a.attr == dwAtProducer {
			return readStringForm(r, a.form, offsz, str)
		}
		skipForm(r, a.form, a.implicit, offsz, addrsz, version)
		if r.err != nil {
			return "", r.err
		}
	}
	return "", nil
}

type abbrevAttr struct {
	attr, form uint64
	implicit   bool
}

// findAbbrev finds abbreviation code in b, the table at offset base of
// .debug_abbrev.
func findAbbrev(b []byte, base, code uint64) ([]abbrevAttr, error) {
	r := newDreader(b, nil, ".debug_abbrev", base)
	for len(r.b) > 0 {
		c := r.ULEB()
		if r.err != nil || c == 0 {
			break
		}
		tag := r.ULEB()
		r.U8() // children flag
		var attrs []abbrevAttr
		for {
			at := r.ULEB()
			form := r.ULEB()
			if r.err != nil {
				return nil, r.err
			}
			if at == 0 && form == 0 {
				break
			}
			implicit := form == 0x21 // DW_FORM_implicit_const
			if implicit {
				r.ULEB() // the value lives in the abbreviation (a signed LEB; its bytes are the same length)
			}
			attrs = append(attrs, abbrevAttr{attr: at, form: form, implicit: implicit})
			if len(attrs) > 1024 {
				return nil, r.fail("abbreviation %d has more than 1024 attributes", c)
			}
		}
		if c == code {
			if tag != dwTagCompileUnit && tag != dwTagPartialUnit && tag != dwTagSkeletonCU {
				return nil, nil
			}
			return attrs, nil
		}
	}
	return nil, Corruptf(".debug_abbrev", int64(base), "abbreviation %d not found", code)
}

func readStringForm(r *dreader, form uint64, offsz int, str func(string, uint64) (string, error)) (string, error) {
	switch form {
	case 0x08: // DW_FORM_string
		s := r.CStr()
		return s, r.err
	case 0x0e: // DW_FORM_strp
		off := r.Fixed(offsz)
		if r.err != nil {
			return "", r.err
		}
		return str(".debug_str", off)
	case 0x1f: // DW_FORM_line_strp
		off := r.Fixed(offsz)
		if r.err != nil {
			return "", r.err
		}
		return str(".debug_line_str", off)
	case 0x1f01, 0x1f21: // GNU_strp_alt: lives in the dwz file
		return "", nil
	default: // strx forms need DW_AT_str_offsets_base
		return "", nil
	}
}

func skipForm(r *dreader, form uint64, implicit bool, offsz int, addrsz, version uint64) {
	if implicit {
		return
	}
	if err := dwarfform.Skip(r, form, offsz, addrsz, version); err != nil && r.err == nil {
		r.err = r.fail("%w", err)
	}
}
