package elfinfo

import (
	"bytes"
	"debug/elf"
)

// FindSymbols returns the definitions of the symbols named in want from
// f's symbol table of type typ (elf.SHT_SYMTAB or elf.SHT_DYNSYM), as
// debug/elf's Symbols and DynamicSymbols would give them (Version and
// Library left empty): of each name, the first symbol whose section is
// not SHN_UNDEF. It reads the table and its strings once and
// makes a Symbol only of the names wanted: a libpython's .symtab holds
// tens of thousands of symbols, of which pyattach wants a handful.
// It returns elf.ErrNoSymbols when f has no such table, and a
// *FormatError for a table debug/elf would refuse.
func FindSymbols(f *elf.File, typ elf.SectionType, want map[string]bool) (found map[string]elf.Symbol, err error) {
	defer RecoverCorrupt(&err, "symbol table")
	s := f.SectionByType(typ)
	if s == nil {
		return nil, elf.ErrNoSymbols
	}
	data, err := s.Data()
	if err != nil {
		return nil, Corruptf(s.Name, int64(s.Offset), "cannot load symbol section: %v", err)
	}
	if len(data) == 0 {
		return nil, elf.ErrNoSymbols
	}
	size := elf.Sym32Size
	if f.Class == elf.ELFCLASS64 {
		size = elf.Sym64Size
	}
	if len(data)%size != 0 {
		return nil, Corruptf(s.Name, int64(s.Offset), "length of symbol section is not a multiple of %d", size)
	}
	if s.Link == 0 || int(s.Link) >= len(f.Sections) {
		return nil, Corruptf(s.Name, int64(s.Offset), "section has invalid string table link")
	}
	strs, err := f.Sections[s.Link].Data()
	if err != nil {
		return nil, Corruptf(s.Name, int64(s.Offset), "cannot load string table section: %v", err)
	}
	bo := f.ByteOrder
	found = map[string]elf.Symbol{}
	// The first entry is all zeros.
	for data = data[size:]; len(data) >= size; data = data[size:] {
		nameOff := uint64(bo.Uint32(data[0:4]))
		if nameOff >= uint64(len(strs)) {
			continue
		}
		end := bytes.IndexByte(strs[nameOff:], 0)
		if end < 0 {
			continue
		}
		name := strs[nameOff : nameOff+uint64(end)]
		if !want[string(name)] {
			continue
		}
		if _, dup := found[string(name)]; dup {
			continue
		}
		var sym elf.Symbol
		if size == elf.Sym64Size {
			sym.Info, sym.Other = data[4], data[5]
			sym.Section = elf.SectionIndex(bo.Uint16(data[6:8]))
			sym.Value, sym.Size = bo.Uint64(data[8:16]), bo.Uint64(data[16:24])
		} else {
			sym.Value, sym.Size = uint64(bo.Uint32(data[4:8])), uint64(bo.Uint32(data[8:12]))
			sym.Info, sym.Other = data[12], data[13]
			sym.Section = elf.SectionIndex(bo.Uint16(data[14:16]))
		}
		if sym.Section == elf.SHN_UNDEF {
			continue
		}
		sym.Name = string(name)
		found[sym.Name] = sym
	}
	return found, nil
}
