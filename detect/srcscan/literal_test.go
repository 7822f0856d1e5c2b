package srcscan

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"sort"
	"testing"
)

// Literal DWARF: a minimal ELF64 holding .debug_abbrev, .debug_info and
// .debug_line written byte by byte, so that the join is checked on exact
// unit names, directory tables and file tables, independent of what a
// compiler happens to emit.

// litUnit is one compile unit: its DW_AT_name, DW_AT_comp_dir and line
// table (directories and files, with DWARF 4 or 5 index rules).
type litUnit struct {
	version       int
	name, compDir string
	dirs          []string
	files         []litFile
}

type litFile struct {
	name string
	dir  byte
}

func cstr(b *bytes.Buffer, s string) { b.WriteString(s); b.WriteByte(0) }

// lineTable writes a line table header with no line program.
func (u litUnit) lineTable() []byte {
	var h bytes.Buffer // after header_length
	h.Write([]byte{1, 1, 1, 0xfb, 14, 13})
	h.Write([]byte{0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1})
	if u.version < 5 {
		for _, d := range u.dirs {
			cstr(&h, d)
		}
		h.WriteByte(0)
		for _, f := range u.files {
			cstr(&h, f.name)
			h.Write([]byte{f.dir, 0, 0})
		}
		h.WriteByte(0)
	} else {
		h.Write([]byte{1, 1, 0x08, byte(len(u.dirs))}) // path:string
		for _, d := range u.dirs {
			cstr(&h, d)
		}
		h.Write([]byte{2, 1, 0x08, 2, 0x0b, byte(len(u.files))}) // path:string, directory_index:data1
		for _, f := range u.files {
			cstr(&h, f.name)
			h.WriteByte(f.dir)
		}
	}
	var t bytes.Buffer
	binary.Write(&t, binary.LittleEndian, uint16(u.version))
	if u.version >= 5 {
		t.Write([]byte{8, 0}) // address_size, segment_selector_size
	}
	binary.Write(&t, binary.LittleEndian, uint32(h.Len()))
	t.Write(h.Bytes())
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, uint32(t.Len()))
	out.Write(t.Bytes())
	return out.Bytes()
}

// literalELF builds the sections for units and wraps them in an ELF64.
func literalELF(units []litUnit) []byte {
	// Abbreviation 1: DW_TAG_compile_unit, no children, name:string,
	// comp_dir:string, stmt_list:sec_offset.
	abbrev := []byte{1, 0x11, 0, 0x03, 0x08, 0x1b, 0x08, 0x10, 0x17, 0, 0, 0}
	var info, line bytes.Buffer
	for _, u := range units {
		var cu bytes.Buffer
		binary.Write(&cu, binary.LittleEndian, uint16(u.version))
		if u.version >= 5 {
			cu.Write([]byte{1, 8}) // DW_UT_compile, address_size
			binary.Write(&cu, binary.LittleEndian, uint32(0))
		} else {
			binary.Write(&cu, binary.LittleEndian, uint32(0))
			cu.WriteByte(8)
		}
		cu.WriteByte(1)
		cstr(&cu, u.name)
		cstr(&cu, u.compDir)
		binary.Write(&cu, binary.LittleEndian, uint32(line.Len()))
		line.Write(u.lineTable())
		binary.Write(&info, binary.LittleEndian, uint32(cu.Len()))
		info.Write(cu.Bytes())
	}
	secs := []struct {
		name string
		data []byte
	}{{"", nil}, {".debug_abbrev", abbrev}, {".debug_info", info.Bytes()}, {".debug_line", line.Bytes()}, {".shstrtab", nil}}
	var shstr bytes.Buffer
	nameOff := make([]uint32, len(secs))
	shstr.WriteByte(0)
	for i := 1; i < len(secs); i++ {
		nameOff[i] = uint32(shstr.Len())
		cstr(&shstr, secs[i].name)
	}
	secs[len(secs)-1].data = shstr.Bytes()
	var body bytes.Buffer
	body.Write(make([]byte, 64))
	offs := make([]uint64, len(secs))
	for i := 1; i < len(secs); i++ {
		offs[i] = uint64(body.Len())
		body.Write(secs[i].data)
	}
	for body.Len()%8 != 0 {
		body.WriteByte(0)
	}
	shoff := uint64(body.Len())
	le := binary.LittleEndian
	for i, s := range secs {
		typ := uint32(1) // SHT_PROGBITS
		switch {
		case i == 0:
			typ = 0
		case s.name == ".shstrtab":
			typ = 3 // SHT_STRTAB
		}
		binary.Write(&body, le, nameOff[i])
		binary.Write(&body, le, typ)
		binary.Write(&body, le, uint64(0)) // flags
		binary.Write(&body, le, uint64(0)) // addr
		binary.Write(&body, le, offs[i])
		binary.Write(&body, le, uint64(len(s.data)))
		binary.Write(&body, le, uint32(0)) // link
		binary.Write(&body, le, uint32(0)) // info
		binary.Write(&body, le, uint64(1)) // addralign
		binary.Write(&body, le, uint64(0)) // entsize
	}
	b := body.Bytes()
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[16:], 1)  // ET_REL
	le.PutUint16(b[18:], 62) // EM_X86_64
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[40:], shoff)
	le.PutUint16(b[52:], 64) // ehsize
	le.PutUint16(b[58:], 64) // shentsize
	le.PutUint16(b[60:], uint16(len(secs)))
	le.PutUint16(b[62:], uint16(len(secs)-1))
	return b
}

func TestLiteralDWARF(t *testing.T) {
	const b = "/project/build/cmake.linux-x86_64-cpython-313/x._stack_v2"
	const echion = b + "/_deps/echion-src/echion"
	for _, c := range []struct {
		name string
		unit litUnit
		want []string
	}{
		{"cmake-dwarf4", litUnit{4, echion + "/frame.cc", b,
			[]string{echion, "sub", "/usr/include"},
			[]litFile{{"frame.cc", 1}, {"frame.h", 1}, {"<built-in>", 0}, {"x.h", 2}, {"/abs/y.h", 1}, {"z.c", 0}, {"stdio.h", 3}}},
			[]string{"/abs/y.h", b + "/sub/x.h", b + "/z.c", echion + "/frame.cc", echion + "/frame.h", "/usr/include/stdio.h"}},
		// DWARF 5: directory 0 is the compilation directory and file 0
		// the primary source file; a relative directory is under comp_dir.
		{"cmake-dwarf5", litUnit{5, echion + "/frame.cc", b,
			[]string{b, echion, "rel"},
			[]litFile{{echion + "/frame.cc", 0}, {"frame.cc", 1}, {"frame.h", 1}, {"<command-line>", 0}, {"h.h", 2}, {"k.c", 0}}},
			[]string{b + "/k.c", b + "/rel/h.h", echion + "/frame.cc", echion + "/frame.h"}},
		{"relative-dwarf5", litUnit{5, "../Modules/timemodule.c", "/build/p-3.11.2/build-static",
			[]string{"/build/p-3.11.2/build-static", "../Include"},
			[]litFile{{"../Modules/timemodule.c", 0}, {"object.h", 1}}},
			[]string{"/build/p-3.11.2/build-static/../Include/object.h", "/build/p-3.11.2/build-static/../Modules/timemodule.c"}},
		{"artificial", litUnit{5, "<artificial>", "/b", []string{"/b"}, []litFile{{"<artificial>", 0}, {"m.c", 0}}},
			[]string{"/b/m.c"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Scan(bytes.NewReader(literalELF([]litUnit{c.unit})))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Units) != 1 || res.Units[0].Name != c.unit.name || res.Units[0].CompDir != c.unit.compDir {
				t.Fatalf("units = %+v", res.Units)
			}
			sort.Strings(c.want)
			if !reflect.DeepEqual(res.Files, c.want) {
				t.Errorf("files:\n got %q\nwant %q", res.Files, c.want)
			}
		})
	}
}
