package srcscan

import (
	"fmt"

	"github.com/pyattach/pyattach/detect/dwarfform"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// DWARF constants this package needs.
const (
	tagCompileUnit = 0x11
	tagPartialUnit = 0x3c
	tagSkeletonCU  = 0x4a

	atName           = 0x03
	atStmtList       = 0x10
	atCompDir        = 0x1b
	atProducer       = 0x25
	atStrOffsetsBase = 0x72

	utCompile      = 0x01
	utPartial      = 0x03
	utSkeleton     = 0x04
	utSplitCompile = 0x05

	formImplicitConst = dwarfform.ImplicitConst
)

// maxAttrs bounds the attributes of one abbreviation.
const maxAttrs = 1024

// maxUnitDecls bounds the unit abbreviations kept in one scan.
const maxUnitDecls = 1 << 20

type attrSpec struct {
	attr, form uint64
}

// unit is what the first DIE of a compile unit says, strings still as
// references into the strtab.
type unit struct {
	compDir, name, producer int32
	stmt                    uint64
	hasStmt                 bool
}

// abbrevs reads and caches the unit abbreviations (compile, partial and
// skeleton unit tags only) of each abbreviation table a unit points at.
type abbrevs struct {
	sec    *section
	tables map[uint64]map[uint64][]attrSpec
	decls  int
	parsed uint64 // bytes parsed so far, bounded against overlapping tables
}

func (a *abbrevs) lookup(s *scanner, off, code uint64) ([]attrSpec, error) {
	t, ok := a.tables[off]
	if !ok {
		var err error
		if t, err = a.parse(s, off); err != nil {
			return nil, err
		}
		a.tables[off] = t
	}
	return t[code], nil
}

func (a *abbrevs) parse(s *scanner, off uint64) (map[uint64][]attrSpec, error) {
	if a.sec == nil {
		return nil, elfinfo.Corruptf(".debug_abbrev", -1, "missing, but .debug_info needs it")
	}
	if off >= a.sec.size {
		return nil, elfinfo.Corruptf(".debug_abbrev", int64(off), "abbreviation offset is outside the section")
	}
	r := &stream{s: a.sec, off: off, end: a.sec.size, bo: s.bo}
	defer func() { a.parsed += r.off - off }()
	if a.parsed > 4*a.sec.size+1<<20 {
		return nil, elfinfo.Corruptf(".debug_abbrev", int64(off), "overlapping abbreviation tables")
	}
	t := map[uint64][]attrSpec{}
	for r.off < r.end {
		code := r.ULEB()
		if code == 0 || r.err != nil {
			break
		}
		tag := r.ULEB()
		r.U8() // has children
		unitTag := tag == tagCompileUnit || tag == tagPartialUnit || tag == tagSkeletonCU
		var attrs []attrSpec
		for n := 0; r.err == nil; n++ {
			at, form := r.ULEB(), r.ULEB()
			if at == 0 && form == 0 {
				break
			}
			if n >= maxAttrs {
				return nil, r.corrupt("abbreviation with more than %d attributes", maxAttrs)
			}
			if form == formImplicitConst {
				r.ULEB() // the constant (signed; same encoded length)
			}
			if unitTag {
				attrs = append(attrs, attrSpec{at, form})
			}
		}
		if unitTag {
			if _, dup := t[code]; !dup {
				a.decls++
				if a.decls > maxUnitDecls {
					return nil, r.corrupt("more than %d unit abbreviations", maxUnitDecls)
				}
				if attrs == nil {
					attrs = []attrSpec{}
				}
				t[code] = attrs
			}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return t, nil
}

// scanInfo walks the units of .debug_info, reading each header and first
// DIE.
func (s *scanner) scanInfo() error {
	info := s.info
	for off := uint64(0); off < info.size; {
		r := &stream{s: info, off: off, end: info.size, bo: s.bo}
		length, offsz := dwarfform.InitialLength(r)
		if offsz == 0 {
			return elfinfo.Corruptf(".debug_info", int64(off), "unit has reserved length %#x", length)
		}
		if r.err != nil {
			return r.err
		}
		if length > info.size-r.off {
			return elfinfo.Corruptf(".debug_info", int64(off), "unit runs past the end of the section")
		}
		next := r.off + length
		r.end = next
		if err := s.unit(r, offsz); err != nil {
			return fmt.Errorf("unit at %#x: %w", off, err)
		}
		off = next
	}
	return nil
}

// unit decodes one unit header and its first DIE from r.
func (s *scanner) unit(r *stream, offsz int) error {
	version := r.Fixed(2)
	var abbrevOff, addrsz uint64
	switch version {
	case 2, 3, 4:
		abbrevOff = r.Fixed(offsz)
		addrsz = r.U8()
	case 5:
		ut := r.U8()
		addrsz = r.U8()
		abbrevOff = r.Fixed(offsz)
		switch ut {
		case utCompile, utPartial:
		case utSkeleton, utSplitCompile:
			r.Skip(8) // dwo_id
		default:
			return r.err // type units name no source files of their own
		}
	default:
		if r.err != nil {
			return r.err
		}
		return r.corrupt("unit has unsupported DWARF version %d", version)
	}
	code := r.ULEB()
	if r.err != nil || code == 0 {
		return r.err
	}
	attrs, err := s.abbrevs.lookup(s, abbrevOff, code)
	if err != nil || attrs == nil {
		return err // not a unit DIE: nothing to report
	}
	u := unit{compDir: -1, name: -1, producer: -1}
	strxBase := uint64(8)
	if offsz == 8 {
		strxBase = 16
	}
	var strx []int32
	for _, a := range attrs {
		switch a.attr {
		case atName, atCompDir, atProducer:
			ref, isStrx, ok := s.readString(r, a.form, offsz, addrsz, version)
			if !ok {
				break
			}
			i, err := s.strs.add(ref)
			if err != nil {
				return err
			}
			if isStrx {
				strx = append(strx, i)
			}
			switch a.attr {
			case atName:
				u.name = i
			case atCompDir:
				u.compDir = i
			default:
				u.producer = i
			}
		case atStmtList:
			switch a.form {
			case 0x17: // sec_offset
				u.stmt, u.hasStmt = r.Fixed(offsz), true
			case 0x06: // data4
				u.stmt, u.hasStmt = r.Fixed(4), true
			case 0x07: // data8
				u.stmt, u.hasStmt = r.Fixed(8), true
			case 0x0f: // udata
				u.stmt, u.hasStmt = r.ULEB(), true
			default:
				skipForm(r, a.form, offsz, addrsz, version)
			}
		case atStrOffsetsBase:
			if a.form == 0x17 {
				strxBase = r.Fixed(offsz)
			} else {
				skipForm(r, a.form, offsz, addrsz, version)
			}
		default:
			skipForm(r, a.form, offsz, addrsz, version)
		}
		if r.err != nil {
			return r.err
		}
	}
	for _, i := range strx {
		ref := &s.strs.refs[i]
		ref.off = strxBase + ref.off*uint64(offsz) // index -> offset; wraps harmlessly into "outside the section"
		ref.wide = offsz == 8
	}
	s.units = append(s.units, u)
	return nil
}

// readString reads a string-valued attribute. isStrx reports a
// .debug_str_offsets index still to be turned into an offset; ok is false
// when the form is one this package cannot follow (the value is skipped).
func (s *scanner) readString(r *stream, form uint64, offsz int, addrsz, version uint64) (ref sref, isStrx, ok bool) {
	switch form {
	case 0x08: // string
		return sref{kind: strInline, s: r.CStr()}, false, r.err == nil
	case 0x0e: // strp
		return sref{kind: strDebug, off: r.Fixed(offsz)}, false, r.err == nil
	case 0x1f: // line_strp
		return sref{kind: strLine, off: r.Fixed(offsz)}, false, r.err == nil
	case 0x1a, 0x25, 0x26, 0x27, 0x28: // strx, strx1..strx4
		var idx uint64
		switch form {
		case 0x1a:
			idx = r.ULEB()
		case 0x25:
			idx = r.Fixed(1)
		case 0x26:
			idx = r.Fixed(2)
		case 0x27:
			idx = r.Fixed(3)
		default:
			idx = r.Fixed(4)
		}
		return sref{kind: strOffsets, off: idx}, true, r.err == nil
	}
	// DW_FORM_GNU_strp_alt and friends live in the dwz file.
	skipForm(r, form, offsz, addrsz, version)
	return sref{}, false, false
}

// skipForm skips one attribute value of the given form.
func skipForm(r *stream, form uint64, offsz int, addrsz, version uint64) {
	if err := dwarfform.Skip(r, form, offsz, addrsz, version); err != nil {
		r.fail(r.corrupt("%v", err))
	}
}
