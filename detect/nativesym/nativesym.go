package nativesym

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// MaxSection bounds the size of one section read (uncompressed): a
// larger one is not read, and what it would have given is left unknown.
const MaxSection = 512 << 20

// Region is one mapping of a file into the process: the addresses
// [Start, End) hold the file's bytes from Offset on.
type Region struct {
	Start, End, Offset uint64
	// Path is the file as the process sees it; regions of one Path are
	// one module.
	Path string
}

// File is an opened module or debug file.
type File interface {
	io.ReaderAt
	io.Closer
}

// Files opens what a Table reads.
type Files interface {
	// Open opens the file region r maps.
	Open(r Region) (File, error)
	// OpenDebug opens the separate debug file of the module r maps, or
	// returns nil and no error when it has none.
	OpenDebug(r Region) (File, error)
}

// Frame is what a Table knows of a pc: "" and 0 where it knows nothing.
type Frame struct {
	Function string
	File     string
	Line     int
}

// Table names pcs of one process or core.
type Table struct {
	regions []Region
	files   Files
	mods    map[string]*module
}

// New returns a Table over the regions, opening files through files.
func New(regions []Region, files Files) *Table {
	rs := append([]Region(nil), regions...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	return &Table{regions: rs, files: files, mods: map[string]*module{}}
}

// Close closes every file the table opened.
func (t *Table) Close() error {
	var errs []error
	for _, m := range t.mods {
		errs = append(errs, m.close())
	}
	return errors.Join(errs...)
}

// resolve is the module mapped at pc and pc's link-time address in it.
func (t *Table) resolve(pc uint64) (*module, uint64, bool) {
	i := sort.Search(len(t.regions), func(i int) bool { return t.regions[i].Start > pc }) - 1
	if i < 0 || pc >= t.regions[i].End || t.regions[i].Path == "" || strings.HasPrefix(t.regions[i].Path, "[") {
		return nil, 0, false
	}
	r := t.regions[i]
	m, ok := t.mods[r.Path]
	if !ok {
		m = t.load(r)
		t.mods[r.Path] = m
	}
	if m.obj == nil {
		return nil, 0, false
	}
	addr, ok := m.vaddr(pc - r.Start + r.Offset)
	return m, addr, ok
}

// LookupAll names every pc (as Lookup): the DWARF units they need are
// read first, in one pass over each module's sections.
func (t *Table) LookupAll(pcs []uint64) []Frame {
	need := map[*module][]uint64{}
	for _, pc := range pcs {
		m, addr, ok := t.resolve(pc)
		if !ok || lookupSym(m.syms, addr) == "" && lookupSym(m.dyn, addr) == "" {
			continue
		}
		if d := m.dwarfTable(); d != nil {
			if u, ok := findArange(d.aranges, addr); ok {
				need[m] = append(need[m], u)
			}
		}
	}
	for m, us := range need {
		m.dwarf.prepare(us)
	}
	out := make([]Frame, len(pcs))
	for i, pc := range pcs {
		out[i] = t.Lookup(pc)
	}
	return out
}

// Lookup names pc, an address inside the function (for a caller's
// frame: its return address minus one).
func (t *Table) Lookup(pc uint64) Frame {
	m, addr, ok := t.resolve(pc)
	if !ok {
		return Frame{}
	}
	var f Frame
	f.Function = lookupSym(m.syms, addr)
	if f.Function == "" {
		f.Function = lookupSym(m.dyn, addr)
	}
	if f.Function != "" {
		// An address in no function (data, a PLT stub) has no line worth
		// reading all of DWARF for.
		f.File, f.Line = m.line(addr)
	}
	return f
}

// module is what was read of one mapped file.
type module struct {
	closers []io.Closer
	obj     *elf.File
	loads   []*elf.Prog
	syms    []sym // .symtab, the module's or its debug file's
	dyn     []sym // .dynsym
	dw      *elf.File
	dwarf   *dwarfTable
	dwErr   bool
}

func (m *module) close() error {
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// load opens and reads the module r maps; a module it cannot read has
// no obj.
func (t *Table) load(r Region) *module {
	m := &module{}
	f, err := t.files.Open(r)
	if err != nil || f == nil {
		return m
	}
	m.closers = append(m.closers, f)
	obj, err := elfinfo.NewFile(f)
	if err != nil {
		return m
	}
	m.obj = obj
	for _, p := range obj.Progs {
		if p.Type == elf.PT_LOAD {
			m.loads = append(m.loads, p)
		}
	}
	m.syms = symbols(obj, elf.SHT_SYMTAB)
	m.dyn = symbols(obj, elf.SHT_DYNSYM)
	if hasSection(obj, ".debug_info") && hasSection(obj, ".debug_line") {
		m.dw = obj
	}
	if len(m.syms) == 0 || m.dw == nil {
		if d, err := t.files.OpenDebug(r); err == nil && d != nil {
			m.closers = append(m.closers, d)
			if de, err := elfinfo.NewFile(d); err == nil {
				if len(m.syms) == 0 {
					m.syms = symbols(de, elf.SHT_SYMTAB)
				}
				if m.dw == nil && hasSection(de, ".debug_info") && hasSection(de, ".debug_line") {
					m.dw = de
				}
			}
		}
	}
	return m
}

func hasSection(f *elf.File, name string) bool {
	s := f.Section(name)
	return s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0
}

// vaddr is the link-time address of the byte at file offset off.
func (m *module) vaddr(off uint64) (uint64, bool) {
	for _, p := range m.loads {
		if off >= p.Off && off-p.Off < p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// sym is a function symbol: [addr, addr+size).
type sym struct {
	addr, size uint64
	name       string
}

// symbols reads the function symbols of f's table of type typ, sorted
// by address; none when it has none or it cannot be read.
func symbols(f *elf.File, typ elf.SectionType) (out []sym) {
	s := f.SectionByType(typ)
	if s == nil || s.Size > MaxSection {
		return nil
	}
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	var ss []elf.Symbol
	var err error
	if typ == elf.SHT_SYMTAB {
		ss, err = f.Symbols()
	} else {
		ss, err = f.DynamicSymbols()
	}
	if err != nil {
		return nil
	}
	for _, s := range ss {
		t := elf.ST_TYPE(s.Info)
		if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
			continue
		}
		// A versioned name ("clock_nanosleep@@GLIBC_2.17") as gdb shows it.
		name, _, _ := strings.Cut(s.Name, "@")
		if name == "" {
			continue
		}
		out = append(out, sym{addr: s.Value, size: s.Size, name: name})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out
}

// lookupSym names the function holding addr: a symbol whose range holds
// it, else the nearest one before it that has no size.
func lookupSym(ss []sym, addr uint64) string {
	i := sort.Search(len(ss), func(i int) bool { return ss[i].addr > addr }) - 1
	if i < 0 {
		return ""
	}
	for k, j := 0, i; j >= 0 && k < 16; j, k = j-1, k+1 {
		if addr-ss[j].addr < ss[j].size {
			return ss[j].name
		}
	}
	if ss[i].size == 0 {
		return ss[i].name
	}
	return ""
}

// line is the file and line of addr from the DWARF line table of the
// unit holding it, "" and 0 when unknown.
func (m *module) line(addr uint64) (string, int) {
	if d := m.dwarfTable(); d != nil {
		return d.line(addr)
	}
	return "", 0
}

// dwarfTable is the module's DWARF, nil when it has none or it cannot
// be read.
func (m *module) dwarfTable() *dwarfTable {
	if m.dw == nil || m.dwErr {
		return nil
	}
	if m.dwarf == nil {
		d, err := newDwarfTable(m.dw)
		if err != nil {
			m.dwErr = true
			return nil
		}
		m.dwarf = d
	}
	return m.dwarf
}

// dwarfTable is the DWARF of one file, read one unit at a time: its
// .debug_aranges (else, read whole, its units' own ranges) say which
// unit holds an address; only that unit's entry and line program are
// read (for a compressed section: uncompressed up to their end).
type dwarfTable struct {
	f       *elf.File
	info    *section
	lineSec *section
	small   map[string][]byte // .debug_abbrev, .debug_str ...
	aranges []arange
	lines   map[uint64]*dwarf.LineReader
	// full: all units, when an address is in no range of aranges.
	full      *dwarf.Data
	fullErr   bool
	fullLines map[dwarf.Offset]*dwarf.LineReader
}

// small are the sections read whole: what one unit's entry and line
// program refer to.
var small = []string{".debug_abbrev", ".debug_str", ".debug_line_str", ".debug_str_offsets", ".debug_addr"}

func newDwarfTable(f *elf.File) (*dwarfTable, error) {
	t := &dwarfTable{f: f, small: map[string][]byte{}, lines: map[uint64]*dwarf.LineReader{}, fullLines: map[dwarf.Offset]*dwarf.LineReader{}}
	for _, n := range small {
		b, err := sectionData(f, n)
		if err != nil {
			return nil, err
		}
		t.small[n] = b
	}
	var err error
	if t.info, err = openSection(f, ".debug_info"); err != nil {
		return nil, err
	}
	if t.lineSec, err = openSection(f, ".debug_line"); err != nil {
		return nil, err
	}
	if b, err := sectionData(f, ".debug_aranges"); err == nil && len(b) > 0 {
		t.aranges, _ = parseAranges(b, f.ByteOrder)
	}
	return t, nil
}

// whole is all of .debug_info as one dwarf.Data, for a file without
// .debug_aranges: dwarf.Reader.SeekPC reads each unit's own entry, not
// its children. nil when it cannot be read.
func (t *dwarfTable) whole() (d *dwarf.Data) {
	if t.full != nil || t.fullErr {
		return t.full
	}
	t.fullErr = true
	defer func() {
		if recover() != nil {
			d = nil
		}
	}()
	info, err := t.info.slice(0, t.info.s.Size)
	if err != nil {
		return nil
	}
	line, err := t.lineSec.slice(0, t.lineSec.s.Size)
	if err != nil {
		return nil
	}
	ranges, err := sectionData(t.f, ".debug_ranges")
	if err != nil {
		return nil
	}
	d, err = dwarf.New(t.small[".debug_abbrev"], nil, nil, info, line, nil, ranges, t.small[".debug_str"])
	if err != nil {
		return nil
	}
	t.addSections(d)
	if b, err := sectionData(t.f, ".debug_rnglists"); err == nil && b != nil {
		d.AddSection(".debug_rnglists", b)
	}
	t.full, t.fullErr = d, false
	return d
}

func (t *dwarfTable) addSections(d *dwarf.Data) {
	for _, n := range []string{".debug_addr", ".debug_line_str", ".debug_str_offsets"} {
		if b := t.small[n]; b != nil {
			d.AddSection(n, b)
		}
	}
}

// unitBytes are the bytes of the unit (a .debug_info unit or a line
// program) at off in s: its length field and what it counts.
func unitBytes(s *section, off uint64) ([]byte, error) {
	h, err := s.slice(off, 4)
	if err != nil {
		return nil, err
	}
	n, hl := uint64(s.bo.Uint32(h)), uint64(4)
	if n == 0xffffffff {
		if h, err = s.slice(off+4, 8); err != nil {
			return nil, err
		}
		n, hl = s.bo.Uint64(h), 12
	}
	if n > MaxSection {
		return nil, elfinfo.Corruptf(s.name, int64(off), "unit of %d bytes", n)
	}
	return s.slice(off, hl+n)
}

func (t *dwarfTable) line(addr uint64) (file string, line int) {
	defer func() {
		if recover() != nil {
			file, line = "", 0
		}
	}()
	var lr *dwarf.LineReader
	if unit, ok := findArange(t.aranges, addr); ok {
		if _, ok := t.lines[unit]; !ok {
			t.prepare([]uint64{unit})
		}
		lr = t.lines[unit]
	} else if len(t.aranges) > 0 {
		// Not in .debug_aranges (assembly such as _start has no unit):
		// reading every unit to be sure costs more than the line is
		// worth.
		return "", 0
	} else if d := t.whole(); d != nil {
		cu, err := d.Reader().SeekPC(addr)
		if err != nil || cu == nil {
			return "", 0
		}
		var ok bool
		if lr, ok = t.fullLines[cu.Offset]; !ok {
			lr, _ = d.LineReader(cu)
			t.fullLines[cu.Offset] = lr
		}
	}
	if lr == nil {
		return "", 0
	}
	return seekPC(lr, addr)
}

// maxRows bounds the rows of one line program read for one address.
const maxRows = 1 << 22

// seekPC is the file and line of the row holding pc in lr's program.
// Its sequences may come in any order (gcc's link-time optimisation
// writes them so), which LineReader.SeekPC does not allow for.
func seekPC(lr *dwarf.LineReader, pc uint64) (string, int) {
	lr.Reset()
	var prev, cur dwarf.LineEntry
	have := false
	for n := 0; n < maxRows; n++ {
		if err := lr.Next(&cur); err != nil {
			break
		}
		if have && !prev.EndSequence && prev.Address <= pc && pc < cur.Address && prev.File != nil {
			return prev.File.Name, prev.Line
		}
		prev, have = cur, true
	}
	return "", 0
}

// prepare reads the units at offsets units of .debug_info not read
// yet, and their line programs only, in one pass over each section, and
// keeps a LineReader of each (nil for one that cannot be read).
func (t *dwarfTable) prepare(units []uint64) {
	var need []uint64
	for _, u := range units {
		if _, ok := t.lines[u]; !ok {
			t.lines[u] = nil
			need = append(need, u)
		}
	}
	if len(need) == 0 {
		return
	}
	sort.Slice(need, func(i, j int) bool { return need[i] < need[j] })
	ubs := t.info.units(need)
	stmts := map[uint64]uint64{}
	var progOffs []uint64
	for _, u := range need {
		ub, ok := ubs[u]
		if !ok {
			continue
		}
		if stmt, ok := t.stmtList(ub); ok {
			stmts[u] = stmt
			progOffs = append(progOffs, stmt)
		}
	}
	sort.Slice(progOffs, func(i, j int) bool { return progOffs[i] < progOffs[j] })
	progs := t.lineSec.units(progOffs)
	for u, stmt := range stmts {
		if prog, ok := progs[stmt]; ok {
			t.lines[u] = t.lineReader(ubs[u], prog)
		}
	}
}

// stmtList is the line program offset of the unit ub (its bytes).
func (t *dwarfTable) stmtList(ub []byte) (off uint64, ok bool) {
	defer func() {
		if recover() != nil {
			off, ok = 0, false
		}
	}()
	d, err := dwarf.New(t.small[".debug_abbrev"], nil, nil, ub, nil, nil, nil, t.small[".debug_str"])
	if err != nil {
		return 0, false
	}
	t.addSections(d)
	cu, err := d.Reader().Next()
	if err != nil || cu == nil || cu.Tag != dwarf.TagCompileUnit && cu.Tag != dwarf.TagPartialUnit {
		return 0, false
	}
	stmt, ok := cu.Val(dwarf.AttrStmtList).(int64)
	if !ok || stmt < 0 {
		return 0, false
	}
	return uint64(stmt), true
}

// lineReader reads unit ub (its bytes) and its line program prog into a
// dwarf.Data of their own; nil when it cannot.
func (t *dwarfTable) lineReader(ub, prog []byte) (lr *dwarf.LineReader) {
	defer func() {
		if recover() != nil {
			lr = nil
		}
	}()
	// The unit's line program is all of .debug_line this Data has.
	d, err := dwarf.New(t.small[".debug_abbrev"], nil, nil, ub, prog, nil, nil, t.small[".debug_str"])
	if err != nil {
		return nil
	}
	t.addSections(d)
	cu, err := d.Reader().Next()
	if err != nil || cu == nil {
		return nil
	}
	for i := range cu.Field {
		if cu.Field[i].Attr == dwarf.AttrStmtList {
			cu.Field[i].Val = int64(0)
		}
	}
	lr, err = d.LineReader(cu)
	if err != nil {
		return nil
	}
	return lr
}

// units reads the units (a length field and what it counts) at offs,
// ascending, in one pass: a compressed section is uncompressed once,
// the bytes between the units discarded. A unit that cannot be read is
// left out.
func (s *section) units(offs []uint64) map[uint64][]byte {
	out := map[uint64][]byte{}
	if s.r == nil {
		for _, off := range offs {
			if b, err := unitBytes(s, off); err == nil {
				out[off] = b
			}
		}
		return out
	}
	r := s.s.Open()
	var pos uint64
	for _, off := range offs {
		if off < pos || off >= s.s.Size {
			continue
		}
		if _, err := io.CopyN(io.Discard, r, int64(off-pos)); err != nil {
			break
		}
		b, err := readUnit(r, s.bo, s.s.Size-off)
		pos = off + uint64(len(b))
		if err != nil {
			break
		}
		out[off] = b
	}
	return out
}

// readUnit reads one unit from r: at most limit bytes, and MaxSection.
func readUnit(r io.Reader, bo binary.ByteOrder, limit uint64) ([]byte, error) {
	var h [12]byte
	if _, err := io.ReadFull(r, h[:4]); err != nil {
		return h[:0], err
	}
	n, hl := uint64(bo.Uint32(h[:4])), uint64(4)
	if n == 0xffffffff {
		if _, err := io.ReadFull(r, h[4:]); err != nil {
			return h[:4], err
		}
		n, hl = bo.Uint64(h[4:]), 12
	}
	if n > MaxSection || hl+n > limit {
		return h[:hl], elfinfo.Corruptf("", -1, "unit of %d bytes", n)
	}
	var b bytes.Buffer
	b.Write(h[:hl])
	// Grows as bytes come, not by the length the unit claims.
	k, err := b.ReadFrom(io.LimitReader(r, int64(n)))
	if err == nil && uint64(k) < n {
		err = io.ErrUnexpectedEOF
	}
	return b.Bytes(), err
}

// section reads a section by offset: an uncompressed one where asked, a
// compressed one uncompressed from its start as far as asked, once.
type section struct {
	name string
	bo   binary.ByteOrder
	s    *elf.Section
	// compressed: the bytes uncompressed so far and the stream.
	r   io.Reader
	buf bytes.Buffer
	err error
}

func openSection(f *elf.File, name string) (*section, error) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, elfinfo.Corruptf(name, -1, "no such section")
	}
	sec := &section{name: name, bo: f.ByteOrder, s: s}
	if s.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(name, ".zdebug") {
		sec.r = s.Open()
	}
	return sec, nil
}

// slice returns the n bytes at off.
func (s *section) slice(off, n uint64) ([]byte, error) {
	if off > s.s.Size || n > s.s.Size-off || n > MaxSection {
		return nil, elfinfo.Corruptf(s.name, int64(off), "%d bytes past the section's end", n)
	}
	if s.r == nil {
		// The size is the file's claim: memory grows only as bytes are
		// really read.
		var b bytes.Buffer
		k, err := b.ReadFrom(io.NewSectionReader(s.s, int64(off), int64(n)))
		if err != nil || uint64(k) != n {
			return nil, elfinfo.Corruptf(s.name, int64(off), "%d of %d bytes read: %v", k, n, err)
		}
		return b.Bytes(), nil
	}
	for uint64(s.buf.Len()) < off+n && s.err == nil {
		// Read on, a MiB past what is asked (the next unit is likely
		// near); the buffer grows as bytes come, not by the size the
		// section claims.
		want := min(off+n+1<<20, s.s.Size) - uint64(s.buf.Len())
		var k int64
		k, s.err = s.buf.ReadFrom(io.LimitReader(s.r, int64(want)))
		if s.err == nil && uint64(k) < want {
			s.err = io.ErrUnexpectedEOF
		}
	}
	if uint64(s.buf.Len()) < off+n {
		return nil, elfinfo.Corruptf(s.name, int64(off), "uncompressed section ends early: %v", s.err)
	}
	return s.buf.Bytes()[off : off+n : off+n], nil
}

// sectionData is the (uncompressed) contents of f's section name, nil
// when it has none; an error when it is larger than MaxSection or
// cannot be read.
func sectionData(f *elf.File, name string) (b []byte, err error) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.Size > MaxSection {
		return nil, elfinfo.Corruptf(name, -1, "section of %d bytes is larger than %d", s.Size, MaxSection)
	}
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, elfinfo.Corruptf(name, -1, "%v", p)
		}
	}()
	b, err = io.ReadAll(io.LimitReader(s.Open(), MaxSection+1))
	if err != nil {
		return nil, elfinfo.Corruptf(name, -1, "%w", err)
	}
	if len(b) > MaxSection {
		return nil, elfinfo.Corruptf(name, -1, "section larger than %d bytes", MaxSection)
	}
	return b, nil
}

// Ranges returns the run-time address ranges [lo, hi) of the functions
// named base or base with a compiler suffix (base+".cold",
// base+".part.0") in the modules whose path want accepts, read from their
// symbol tables (a separate debug file's when the module has none):
// what a debugger that read only the module's own tables cannot name.
func (t *Table) Ranges(want func(path string) bool, base string) [][2]uint64 {
	var out [][2]uint64
	for _, r := range t.regions {
		if r.Path == "" || strings.HasPrefix(r.Path, "[") || !want(r.Path) {
			continue
		}
		m, ok := t.mods[r.Path]
		if !ok {
			m = t.load(r)
			t.mods[r.Path] = m
		}
		if m.obj == nil {
			continue
		}
		for _, ss := range [][]sym{m.syms, m.dyn} {
			for _, s := range ss {
				if s.size == 0 || (s.name != base && !strings.HasPrefix(s.name, base+".")) {
					continue
				}
				// The region maps file offsets [Offset, Offset+End-Start):
				// the symbol's bytes, if they lie in it, are at
				// Start+(fileoff-Offset).
				for _, p := range m.loads {
					if s.addr < p.Vaddr || s.addr-p.Vaddr >= p.Filesz {
						continue
					}
					off := s.addr - p.Vaddr + p.Off
					if off >= r.Offset && off-r.Offset < r.End-r.Start {
						lo := r.Start + off - r.Offset
						out = append(out, [2]uint64{lo, lo + s.size})
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	// The same symbol in .symtab and .dynsym: once.
	k := 0
	for i := range out {
		if k > 0 && out[k-1] == out[i] {
			continue
		}
		out[k] = out[i]
		k++
	}
	return out[:k]
}
