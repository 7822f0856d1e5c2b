package pyoffsets

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"strings"
)

// ErrNoTypes means the DWARF lacks the interpreter's own types: it is
// not the debug information of a CPython build, or it holds line tables
// only (-g1).
var ErrNoTypes = errors.New("no CPython types in the DWARF")

// FromDWARF reads the offsets of fields and the sizes of sizes from d,
// the DWARF of a libpython or a static interpreter.
func FromDWARF(d *dwarf.Data) (map[string]int64, error) {
	out, err := fromDWARF(d)
	if err != nil {
		return nil, err
	}
	if _, ok := out["sizeof(PyObject)"]; !ok {
		return nil, ErrNoTypes
	}
	if _, ok := out["PyCodeObject.co_filename"]; !ok {
		return nil, ErrNoTypes
	}
	return out, nil
}

// fromDWARF reads what d has of fields and sizes: all of them from an
// interpreter's DWARF, an extension module's types from its own.
func fromDWARF(d *dwarf.Data) (map[string]int64, error) {
	want := map[string]bool{}
	for _, f := range fields {
		want[strings.SplitN(f, ".", 2)[0]] = true
	}
	for _, s := range sizes {
		want[s] = true
	}
	types, err := findTypes(d, want)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, f := range fields {
		name, path, _ := strings.Cut(f, ".")
		st := types[name]
		if st == nil {
			continue
		}
		m, ok := member(st, strings.Split(path, "."))
		if !ok {
			continue
		}
		if m.bitSize > 0 {
			out[f+":bit_offset"] = m.bit
			out[f+":bit_size"] = m.bitSize
			continue
		}
		out[f] = m.bit / 8
	}
	for _, s := range sizes {
		if st := types[s]; st != nil {
			out["sizeof("+s+")"] = st.ByteSize
		}
	}
	for _, e := range enums {
		for _, n := range e.Names {
			vals, err := Enumerators(d, n)
			if err != nil {
				continue // not in this build, or not in this file
			}
			for name, v := range vals {
				out[e.Key+"."+name] = v
			}
			break
		}
	}
	return out, nil
}

// findTypes returns the complete struct definition of every wanted name,
// a struct tag or a typedef of one. Only the top level of each unit is
// read: C types are defined there.
func findTypes(d *dwarf.Data, want map[string]bool) (map[string]*dwarf.StructType, error) {
	out := map[string]*dwarf.StructType{}
	r := d.Reader()
	for len(out) < len(want) {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("read DWARF: %w", err)
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == 0 {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if (e.Tag == dwarf.TagTypedef || e.Tag == dwarf.TagStructType) && want[name] && out[name] == nil {
			t, err := d.Type(e.Offset)
			if err == nil {
				if st, ok := structOf(t); ok && !st.Incomplete {
					out[name] = st
				}
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	return out, nil
}

// structOf follows typedefs and qualifiers to a struct or union.
func structOf(t dwarf.Type) (*dwarf.StructType, bool) {
	for i := 0; i < 16; i++ {
		switch v := t.(type) {
		case *dwarf.StructType:
			return v, true
		case *dwarf.TypedefType:
			t = v.Type
		case *dwarf.QualType:
			t = v.Type
		default:
			return nil, false
		}
	}
	return nil, false
}

// place is a member's position in bits from the start of the outer type.
type place struct {
	bit     int64
	bitSize int64 // 0 unless a bit field
}

// member finds path in st, looking through anonymous structs and unions
// as C does.
func member(st *dwarf.StructType, path []string) (place, bool) {
	for _, f := range st.Field {
		if f.Name == "" {
			inner, ok := structOf(f.Type)
			if !ok {
				continue
			}
			if p, ok := member(inner, path); ok {
				return place{bit: f.ByteOffset*8 + p.bit, bitSize: p.bitSize}, true
			}
			continue
		}
		if f.Name != path[0] {
			continue
		}
		here := place{bit: f.ByteOffset * 8}
		if f.BitSize > 0 {
			here = place{bit: fieldBit(f), bitSize: f.BitSize}
		}
		if len(path) == 1 {
			return here, true
		}
		inner, ok := structOf(f.Type)
		if !ok || here.bitSize > 0 {
			return place{}, false
		}
		p, ok := member(inner, path[1:])
		if !ok {
			return place{}, false
		}
		return place{bit: here.bit + p.bit, bitSize: p.bitSize}, true
	}
	return place{}, false
}

// fieldBit is a bit field's first bit, counted from the least significant
// bit of the struct's start as on a little-endian machine. DWARF 4 and
// later give DW_AT_data_bit_offset; DWARF 2 and 3 a DW_AT_bit_offset from
// the most significant bit of a storage unit of ByteSize bytes.
func fieldBit(f *dwarf.StructField) int64 {
	if f.DataBitOffset != 0 || f.BitOffset == 0 {
		return f.DataBitOffset
	}
	return f.ByteOffset*8 + f.ByteSize*8 - f.BitOffset - f.BitSize
}

// A DebugMember is one scalar member of _Py_DebugOffsets, the struct at
// the start of _PyRuntime from 3.13 on, named by its dotted path
// ("thread_state.current_frame").
type DebugMember struct {
	Name   string
	Offset int64
	Size   int64
}

// ErrNoDebugOffsets means the DWARF has no _Py_DebugOffsets (before 3.13).
var ErrNoDebugOffsets = errors.New("no _Py_DebugOffsets in the DWARF")

// DebugOffsets returns the members of _Py_DebugOffsets in memory order,
// nested structs flattened.
func DebugOffsets(d *dwarf.Data) ([]DebugMember, error) {
	types, err := findTypes(d, map[string]bool{"_Py_DebugOffsets": true})
	if err != nil {
		return nil, err
	}
	st := types["_Py_DebugOffsets"]
	if st == nil {
		return nil, ErrNoDebugOffsets
	}
	var out []DebugMember
	var walk func(prefix string, st *dwarf.StructType, base int64)
	walk = func(prefix string, st *dwarf.StructType, base int64) {
		for _, f := range st.Field {
			if inner, ok := structOf(f.Type); ok {
				walk(prefix+f.Name+".", inner, base+f.ByteOffset)
				continue
			}
			out = append(out, DebugMember{Name: prefix + f.Name, Offset: base + f.ByteOffset, Size: f.Type.Size()})
		}
	}
	walk("", st, 0)
	return out, nil
}

// Enumerators returns the constants of the C enum named enum (its tag
// or typedef name), by name.
func Enumerators(d *dwarf.Data, enum string) (map[string]int64, error) {
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("read DWARF: %w", err)
		}
		if e == nil {
			return nil, fmt.Errorf("no enum %s in the DWARF", enum)
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if (e.Tag == dwarf.TagEnumerationType || e.Tag == dwarf.TagTypedef) && name == enum {
			t, err := d.Type(e.Offset)
			if err == nil {
				for i := 0; i < 16; i++ {
					td, ok := t.(*dwarf.TypedefType)
					if !ok {
						break
					}
					t = td.Type
				}
				if et, ok := t.(*dwarf.EnumType); ok && len(et.Val) > 0 {
					out := map[string]int64{}
					for _, v := range et.Val {
						out[v.Name] = v.Val
					}
					return out, nil
				}
			}
		}
		if e.Tag != dwarf.TagCompileUnit && e.Children {
			r.SkipChildren()
		}
	}
}
