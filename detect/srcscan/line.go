package srcscan

import (
	"sort"

	"github.com/pyattach/pyattach/detect/dwarfform"
	"github.com/pyattach/pyattach/detect/elfinfo"
)

// DW_LNCT content type codes of DWARF 5 line table entry formats.
const (
	lnctPath           = 1
	lnctDirectoryIndex = 2
)

// maxFormats bounds the entry formats of a DWARF 5 line table header.
const maxFormats = 64

type fileEntry struct {
	name int32 // strtab index, -1 for none
	dir  uint64
}

// lineTable is the header of one line program: its directory and file
// tables, strings still as strtab indexes.
type lineTable struct {
	version uint64
	dirs    []int32
	files   []fileEntry
}

// scanLines reads the header of every line table a unit points at, in
// offset order.
func (s *scanner) scanLines() error {
	var offs []uint64
	for _, u := range s.units {
		if u.hasStmt {
			offs = append(offs, u.stmt)
		}
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	for i, off := range offs {
		if i > 0 && off == offs[i-1] {
			continue
		}
		if s.line == nil {
			return elfinfo.Corruptf(".debug_line", -1, "missing, but a unit's DW_AT_stmt_list points at it")
		}
		t, err := s.lineHeader(off)
		if err != nil {
			return err
		}
		s.tables[off] = t
	}
	return nil
}

func (s *scanner) lineHeader(off uint64) (*lineTable, error) {
	sec := s.line
	if off >= sec.size {
		return nil, elfinfo.Corruptf(".debug_line", int64(off), "line table offset is outside the section")
	}
	r := &stream{s: sec, off: off, end: sec.size, bo: s.bo}
	length, offsz := dwarfform.InitialLength(r)
	if offsz == 0 {
		return nil, elfinfo.Corruptf(".debug_line", int64(off), "line table has reserved length %#x", length)
	}
	if r.err != nil {
		return nil, r.err
	}
	if length > sec.size-r.off {
		return nil, elfinfo.Corruptf(".debug_line", int64(off), "line table runs past the end of the section")
	}
	r.end = r.off + length
	t := &lineTable{version: r.Fixed(2)}
	if r.err == nil && (t.version < 2 || t.version > 5) {
		return nil, elfinfo.Corruptf(".debug_line", int64(off), "unsupported line table version %d", t.version)
	}
	var addrsz uint64 = 8
	if t.version >= 5 {
		addrsz = r.U8()
		r.U8() // segment selector size
	}
	hlen := r.Fixed(offsz)
	if r.err != nil {
		return nil, r.err
	}
	if hlen > r.end-r.off {
		return nil, r.corrupt("line table header length %d overruns the table", hlen)
	}
	r.end = r.off + hlen // the line program after the header is never read
	r.U8()               // minimum_instruction_length
	if t.version >= 4 {
		r.U8() // maximum_operations_per_instruction
	}
	r.U8() // default_is_stmt
	r.U8() // line_base
	r.U8() // line_range
	opcodeBase := r.U8()
	if opcodeBase > 0 {
		r.Skip(opcodeBase - 1) // standard_opcode_lengths
	}
	if t.version < 5 {
		for r.err == nil {
			d := r.CStr()
			if d == "" {
				break
			}
			i, err := s.strs.add(sref{kind: strInline, s: d})
			if err != nil {
				return nil, err
			}
			t.dirs = append(t.dirs, i)
		}
		for r.err == nil {
			name := r.CStr()
			if name == "" {
				break
			}
			dir := r.ULEB()
			r.ULEB() // modification time
			r.ULEB() // length
			i, err := s.strs.add(sref{kind: strInline, s: name})
			if err != nil {
				return nil, err
			}
			t.files = append(t.files, fileEntry{name: i, dir: dir})
		}
		if r.err != nil {
			return nil, r.err
		}
		return t, nil
	}
	for _, list := range []string{"directory", "file"} {
		nfmt := r.U8()
		if nfmt > maxFormats {
			return nil, r.corrupt("%d %s entry formats", nfmt, list)
		}
		formats := make([]attrSpec, nfmt)
		for i := range formats {
			formats[i] = attrSpec{attr: r.ULEB(), form: r.ULEB()}
		}
		count := r.ULEB()
		if r.err != nil {
			return nil, r.err
		}
		if count > 0 && (nfmt == 0 || count > r.end-r.off) {
			return nil, r.corrupt("%d %s entries do not fit in the header", count, list)
		}
		for n := uint64(0); n < count; n++ {
			start := r.off
			name := int32(-1)
			var dir uint64
			for _, f := range formats {
				switch f.attr {
				case lnctPath:
					ref, isStrx, ok := s.readString(r, f.form, offsz, addrsz, 5)
					if ok && !isStrx { // strx needs a unit's base: not followed
						i, err := s.strs.add(ref)
						if err != nil {
							return nil, err
						}
						name = i
					}
				case lnctDirectoryIndex:
					switch f.form {
					case 0x0b: // data1
						dir = r.Fixed(1)
					case 0x05: // data2
						dir = r.Fixed(2)
					case 0x0f: // udata
						dir = r.ULEB()
					default:
						skipForm(r, f.form, offsz, addrsz, 5)
					}
				default:
					skipForm(r, f.form, offsz, addrsz, 5)
				}
			}
			if r.err != nil {
				return nil, r.err
			}
			if r.off == start {
				return nil, elfinfo.Corruptf(".debug_line", int64(start), "empty %s entry", list)
			}
			if list == "directory" {
				t.dirs = append(t.dirs, name)
			} else {
				t.files = append(t.files, fileEntry{name: name, dir: dir})
			}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return t, nil
}
