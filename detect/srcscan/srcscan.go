package srcscan

import (
	"debug/elf"
	"encoding/binary"
	"io"
	"sort"
	"strings"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Unit is what the first DIE of a compile unit says about it. Strings the
// scan cannot follow (DW_FORM_GNU_strp_alt, pointing into a dwz file) are
// empty.
type Unit struct {
	CompDir  string `json:"comp_dir"`
	Name     string `json:"name"`
	Producer string `json:"producer"`
}

// Result is what Scan found.
type Result struct {
	// Units are the compile, partial and skeleton units in .debug_info
	// order.
	Units []Unit `json:"units"`
	// Files are the unique source paths of all line tables and unit
	// names, as gdb joins them: an absolute file name as is; else
	// include_directories[dir] (itself relative to comp_dir when
	// relative) + "/" + name; ".." components are kept. Compiler
	// pseudo-files ("<built-in>", "<command-line>", "<artificial>") are
	// left out. Sorted.
	Files []string `json:"files"`
}

// ScanFile scans the ELF file at path.
func ScanFile(path string) (*Result, error) {
	f, err := saferead.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Scan(f)
}

// Scan reads the compile units and line table headers of the ELF module
// or separate debug file behind r. A file without DWARF gives an empty
// Result. Malformed DWARF gives an error wrapping elfinfo.ErrCorrupt; a
// file that is not ELF, elfinfo.ErrNotELF.
//
// A Mach-O file (a module with its DWARF, a .dSYM bundle's DWARF file,
// an object file of a debug map) is read too: every architecture of a
// universal file, their files merged.
func Scan(r io.ReaderAt) (*Result, error) {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err == nil && machoinfo.IsMachO(magic[:]) {
		mf, err := machoinfo.NewFile(r)
		if err != nil {
			return nil, err
		}
		return ScanMachO(mf)
	}
	f, err := elfinfo.NewFile(r)
	if err != nil {
		return nil, err
	}
	return ScanELF(f)
}

// ScanMachO is Scan on a Mach-O file parsed by machoinfo.NewFile: the
// __DWARF sections of each architecture, the results merged.
func ScanMachO(f *machoinfo.File) (*Result, error) {
	out := &Result{Units: []Unit{}, Files: []string{}}
	seen := map[string]bool{}
	for _, sl := range f.Slices {
		mf := sl.File
		sec := func(name string) *section {
			s := mf.Section(name)
			if s == nil || s.Seg != "__DWARF" {
				return nil
			}
			return &section{name: s.Name, size: s.Size, rs: s.Open(), buf: make([]byte, 0, chunk)}
		}
		// Mach-O section names stop at 16 bytes: __debug_str_offs.
		res, err := scanSections(mf.ByteOrder, sec("__debug_info"), sec("__debug_line"), sec("__debug_abbrev"),
			sec("__debug_str"), sec("__debug_line_str"), sec("__debug_str_offs"))
		if err != nil {
			return nil, err
		}
		out.Units = append(out.Units, res.Units...)
		for _, p := range res.Files {
			if !seen[p] {
				seen[p] = true
				out.Files = append(out.Files, p)
			}
		}
	}
	sort.Strings(out.Files)
	return out, nil
}

// ScanELF is Scan on an ELF file parsed by elfinfo.NewFile.
func ScanELF(f *elf.File) (*Result, error) {
	return scanSections(f.ByteOrder, openSection(f.Section(".debug_info")), openSection(f.Section(".debug_line")),
		openSection(f.Section(".debug_abbrev")), openSection(f.Section(".debug_str")),
		openSection(f.Section(".debug_line_str")), openSection(f.Section(".debug_str_offsets")))
}

// scanSections scans the DWARF sections of one file (nil: absent).
func scanSections(bo binary.ByteOrder, info, line, abbrev, str, lineStr, strOffsets *section) (*Result, error) {
	s := &scanner{
		bo:     bo,
		info:   info,
		line:   line,
		tables: map[uint64]*lineTable{},
	}
	s.abbrevs = abbrevs{sec: abbrev, tables: map[uint64]map[uint64][]attrSpec{}}
	res := &Result{Units: []Unit{}, Files: []string{}}
	if s.info == nil {
		return res, nil
	}
	if err := s.scanInfo(); err != nil {
		return nil, err
	}
	s.abbrevs = abbrevs{} // the tables are no longer needed
	if err := s.scanLines(); err != nil {
		return nil, err
	}
	err := s.strs.resolve(str, lineStr, strOffsets, s.bo)
	if err != nil {
		return nil, err
	}
	seen := map[string]struct{}{}
	addFile := func(p string) {
		if p != "" {
			seen[p] = struct{}{}
		}
	}
	res.Units = make([]Unit, 0, len(s.units))
	for _, u := range s.units {
		cu := Unit{CompDir: s.strs.get(u.compDir), Name: s.strs.get(u.name), Producer: s.strs.get(u.producer)}
		res.Units = append(res.Units, cu)
		addFile(sourcePath(cu.CompDir, "", cu.Name))
		if !u.hasStmt {
			continue
		}
		t := s.tables[u.stmt]
		for _, fe := range t.files {
			dir := ""
			switch {
			case t.version >= 5:
				if fe.dir < uint64(len(t.dirs)) {
					dir = s.strs.get(t.dirs[fe.dir])
				}
			case fe.dir == 0:
				dir = cu.CompDir
			case fe.dir <= uint64(len(t.dirs)):
				dir = s.strs.get(t.dirs[fe.dir-1])
			}
			addFile(sourcePath(cu.CompDir, dir, s.strs.get(fe.name)))
		}
	}
	for p := range seen {
		res.Files = append(res.Files, p)
	}
	sort.Strings(res.Files)
	return res, nil
}

type scanner struct {
	bo         binary.ByteOrder
	info, line *section
	abbrevs    abbrevs
	strs       strtab
	units      []unit
	tables     map[uint64]*lineTable
}

func isAbs(p string) bool { return strings.HasPrefix(p, "/") }

// sourcePath is the path gdb looks for when a unit or line table names
// name in directory dir of a unit built in compDir: an absolute name as
// it is (CMake records absolute names), else dir/name, itself under
// compDir when dir is relative or empty. A compiler pseudo-file
// ("<built-in>", "<command-line>", "<artificial>", "<stdin>") names no
// file and gives "".
func sourcePath(compDir, dir, name string) string {
	switch {
	case name == "" || pseudoFile(name):
		return ""
	case isAbs(name):
		return name
	}
	p := join(dir, name)
	if !isAbs(p) {
		p = join(compDir, p)
	}
	return p
}

// pseudoFile reports whether a recorded file name is one a compiler
// makes up for what has no file: "<built-in>" (gcc's predefined
// declarations, va_list), "<command-line>" (-D macros), "<artificial>"
// (LTO units), "<stdin>".
func pseudoFile(name string) bool {
	return len(name) > 2 && name[0] == '<' && name[len(name)-1] == '>' && !strings.Contains(name, "/")
}

// join joins the way gdb's path_join does: a "/" is added only between
// two non-empty parts when the first does not end in one; nothing is
// cleaned.
func join(dir, name string) string {
	switch {
	case dir == "":
		return name
	case name == "":
		return dir
	case strings.HasSuffix(dir, "/"):
		return dir + name
	}
	return dir + "/" + name
}
