package machoinfo

import (
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pyattach/pyattach/detect/saferead"
)

// Magic numbers, as the first four bytes of a file hold them.
const (
	magic32    = 0xfeedface // MH_MAGIC
	magic64    = 0xfeedfacf // MH_MAGIC_64
	magicFat   = 0xcafebabe // FAT_MAGIC (big-endian)
	magicFat64 = 0xcafebabf // FAT_MAGIC_64 (big-endian)
)

// Load command and symbol constants debug/macho does not name.
const (
	lcUUID = 0x1b // LC_UUID: cmd, cmdsize, uint8 uuid[16]
	nOSO   = 0x66 // N_OSO: a debug-map stab naming an object file
	mhDSYM = 0xa  // MH_DSYM: the DWARF file inside a .dSYM bundle
)

// Bounds on untrusted input.
const (
	// maxArches bounds the architectures of a universal file (real
	// ones hold two or three).
	maxArches = 64
	// maxDebugMap bounds the N_OSO entries kept per architecture.
	maxDebugMap = 100000
)

// Arch is the facts of one architecture of a Mach-O file (the only one
// of a thin file).
type Arch struct {
	// CPU is the architecture as lldb and dsymutil name it: "x86_64",
	// "arm64", "arm64e", "i386", "arm", or "cpu-0x..." for others.
	CPU string `json:"cpu"`
	// Type is the file type: "execute", "dylib", "bundle", "object",
	// "dsym" (the DWARF file inside a .dSYM), or "type-0x...".
	Type string `json:"type"`
	// Offset and Size place the architecture's slice in the file (the
	// whole file for a thin one).
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`
	// UUID is the LC_UUID, upper-case and dashed as lldb and dwarfdump
	// print it (4C4C4471-5555-3144-A1B1-371B07785887); "" when absent.
	UUID string `json:"uuid"`
	// DWARF is true when the slice carries __DWARF,__debug_info.
	DWARF bool `json:"dwarf"`
	// Symtab is true when the slice has a symbol table (LC_SYMTAB with
	// entries).
	Symtab bool `json:"symtab"`
	// DebugMap lists the object files the N_OSO stabs name, in order:
	// where the DWARF still is when no .dSYM was made (dsymutil reads
	// them to make one).
	DebugMap []string `json:"debug_map,omitempty"`
}

// Info is the facts of a Mach-O file.
type Info struct {
	// Universal is true for a fat file.
	Universal bool `json:"universal"`
	// Arches holds each architecture apart, in the file's order.
	Arches []Arch `json:"arches"`
}

// Arch returns the architecture named cpu, or nil.
func (i *Info) Arch(cpu string) *Arch {
	for k := range i.Arches {
		if i.Arches[k].CPU == cpu {
			return &i.Arches[k]
		}
	}
	return nil
}

// UUIDs returns the architectures' UUIDs keyed by CPU (those without one
// left out).
func (i *Info) UUIDs() map[string]string {
	out := map[string]string{}
	for _, a := range i.Arches {
		if a.UUID != "" {
			out[a.CPU] = a.UUID
		}
	}
	return out
}

// Slice is one architecture of a parsed file: its facts and the
// debug/macho file over its bytes (for its sections: DWARF).
type Slice struct {
	Arch
	File *macho.File
}

// File is a parsed Mach-O file, thin or universal.
type File struct {
	Universal bool
	Slices    []Slice
}

// Info returns the facts of every slice.
func (f *File) Info() *Info {
	info := &Info{Universal: f.Universal, Arches: []Arch{}}
	for _, s := range f.Slices {
		info.Arches = append(info.Arches, s.Arch)
	}
	return info
}

// Slice returns the slice of architecture cpu; "" picks the only one of
// a thin file. An unknown cpu gives ErrNoArch.
func (f *File) Slice(cpu string) (*Slice, error) {
	if cpu == "" && len(f.Slices) == 1 {
		return &f.Slices[0], nil
	}
	for i := range f.Slices {
		if f.Slices[i].CPU == cpu {
			return &f.Slices[i], nil
		}
	}
	var have []string
	for _, s := range f.Slices {
		have = append(have, s.CPU)
	}
	return nil, fmt.Errorf("%w: %s (the file holds %s)", ErrNoArch, cpu, strings.Join(have, ", "))
}

// IsMachO reports whether b (at least the first four bytes of a file)
// starts with a Mach-O or universal magic number.
func IsMachO(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	switch binary.BigEndian.Uint32(b) {
	case magicFat, magicFat64:
		return true
	}
	switch binary.LittleEndian.Uint32(b) {
	case magic32, magic64:
		return true
	}
	switch binary.BigEndian.Uint32(b) {
	case magic32, magic64:
		return true
	}
	return false
}

// Open opens the named file and reads its facts.
func Open(name string) (*Info, error) {
	f, c, err := OpenFile(name)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return f.Info(), nil
}

// OpenFile opens and parses the named file. The returned closer closes
// it; the slices read their sections through it until then.
func OpenFile(name string) (*File, io.Closer, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return nil, nil, err
	}
	mf, err := NewFile(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return mf, f, nil
}

// Read reads the facts of the Mach-O file behind r.
func Read(r io.ReaderAt) (*Info, error) {
	f, err := NewFile(r)
	if err != nil {
		return nil, err
	}
	return f.Info(), nil
}

// NewFile parses the Mach-O or universal file behind r, the one place
// pyattach parses Mach-O headers: input without a Mach-O magic number
// gives ErrNotMachO; a truncated file, a load command debug/macho
// rejects or panics on, or a universal file whose architectures lie
// past its end or overlap give a *FormatError (ErrCorrupt).
func NewFile(r io.ReaderAt) (*File, error) {
	var m [4]byte
	if _, err := r.ReadAt(m[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrNotMachO
		}
		return nil, err
	}
	if !IsMachO(m[:]) {
		return nil, ErrNotMachO
	}
	switch binary.BigEndian.Uint32(m[:]) {
	case magicFat, magicFat64:
		return newFat(r, binary.BigEndian.Uint32(m[:]) == magicFat64)
	}
	s, err := newSlice(r, "", 0, -1)
	if err != nil {
		return nil, err
	}
	return &File{Slices: []Slice{*s}}, nil
}

// fatArch is one entry of a universal file's header.
type fatArch struct {
	cpu, sub     uint32
	off, size    uint64
	headerOffset int64
}

// newFat reads a universal file's header, checks that every
// architecture lies inside the file and after the header, without
// overlapping another, and parses each.
func newFat(r io.ReaderAt, is64 bool) (*File, error) {
	var h [8]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return nil, corruptf("", "fat header", 0, "the file ends inside its header (%w)", noEOF(err))
	}
	n := binary.BigEndian.Uint32(h[4:])
	if n == 0 || n > maxArches {
		return nil, corruptf("", "fat header", 4, "%d architectures (want 1 to %d)", n, maxArches)
	}
	entry := int64(20)
	if is64 {
		entry = 32
	}
	headerEnd := 8 + int64(n)*entry
	buf := make([]byte, headerEnd-8)
	if _, err := r.ReadAt(buf, 8); err != nil {
		return nil, corruptf("", "fat header", 8, "the file ends inside its %d architecture entries (%w)", n, noEOF(err))
	}
	var arches []fatArch
	for i := int64(0); i < int64(n); i++ {
		b := buf[i*entry:]
		a := fatArch{cpu: binary.BigEndian.Uint32(b), sub: binary.BigEndian.Uint32(b[4:]), headerOffset: 8 + i*entry}
		if is64 {
			a.off, a.size = binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])
		} else {
			a.off, a.size = uint64(binary.BigEndian.Uint32(b[8:])), uint64(binary.BigEndian.Uint32(b[12:]))
		}
		arches = append(arches, a)
	}
	f := &File{Universal: true}
	for i, a := range arches {
		name := cpuName(macho.Cpu(a.cpu), a.sub)
		switch {
		case a.size == 0:
			return nil, corruptf(name, "fat header", a.headerOffset, "architecture of size 0")
		case a.off < uint64(headerEnd):
			return nil, corruptf(name, "fat header", a.headerOffset, "architecture at offset %#x lies inside the fat header (which ends at %#x)", a.off, headerEnd)
		case a.off > 1<<62 || a.size > 1<<62:
			return nil, corruptf(name, "fat header", a.headerOffset, "architecture at offset %#x, size %#x, lies past the end of the file", a.off, a.size)
		}
		if err := checkExtent(r, int64(a.off), int64(a.size)); err != nil {
			return nil, corruptf(name, "fat header", a.headerOffset, "architecture at offset %#x, size %#x, lies past the end of the file", a.off, a.size)
		}
		for _, b := range arches[:i] {
			if a.off < b.off+b.size && b.off < a.off+a.size {
				return nil, corruptf(name, "fat header", a.headerOffset, "architecture at offset %#x overlaps the %s one at %#x", a.off, cpuName(macho.Cpu(b.cpu), b.sub), b.off)
			}
		}
		sr := io.NewSectionReader(r, int64(a.off), int64(a.size))
		s, err := newSlice(sr, name, int64(a.off), int64(a.size))
		if err != nil {
			return nil, err
		}
		if s.CPU != name {
			return nil, corruptf(name, "Mach-O header", int64(a.off), "the fat header says %s, the slice's own header %s", name, s.CPU)
		}
		for _, o := range f.Slices {
			if o.CPU == s.CPU {
				return nil, corruptf(name, "fat header", a.headerOffset, "architecture %s appears twice", name)
			}
		}
		f.Slices = append(f.Slices, *s)
	}
	return f, nil
}

// checkExtent fails unless the bytes [off, off+size) can be read from r.
func checkExtent(r io.ReaderAt, off, size int64) error {
	if size <= 0 {
		return nil
	}
	var b [1]byte
	_, err := r.ReadAt(b[:], off+size-1)
	return err
}

// noEOF turns io.EOF into io.ErrUnexpectedEOF: the file ended early.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// newSlice parses one Mach-O file (a thin file, or a slice of a
// universal one at base in the file, size bytes; -1: unknown).
func newSlice(r io.ReaderAt, arch string, base, size int64) (s *Slice, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, corruptf(arch, "load commands", base, "%v", p)
		}
	}()
	// debug/macho reads what the load commands point at (relocations,
	// symbols, strings, indirect symbols) in chunks of up to 10 MB
	// before it finds the file too short: check every extent first.
	if err := precheck(r, arch, base); err != nil {
		return nil, err
	}
	mf, err := macho.NewFile(r)
	if err != nil {
		var fe *macho.FormatError
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, corruptf(arch, "load commands", base, "the file ends inside its headers or symbol table (%w)", noEOF(err))
		case errors.As(err, &fe):
			return nil, corruptf(arch, "load commands", base, "%v", err)
		}
		return nil, corruptf(arch, "load commands", base, "%w", err)
	}
	name := cpuName(mf.Cpu, mf.SubCpu)
	s = &Slice{File: mf, Arch: Arch{CPU: name, Type: typeName(mf.Type), Offset: base, Size: size}}
	if size < 0 {
		s.Size = 0
	}
	// Every segment's bytes must be in the file: a truncated copy
	// loses __LINKEDIT (symbols, signature) and __DWARF first.
	for _, l := range mf.Loads {
		seg, ok := l.(*macho.Segment)
		if !ok || seg.Filesz == 0 {
			continue
		}
		if seg.Offset > 1<<62 || seg.Filesz > 1<<62 {
			return nil, corruptf(name, "segment "+seg.Name, base, "file offset %#x, size %#x, lies past the end of the file", seg.Offset, seg.Filesz)
		}
		if err := checkExtent(r, int64(seg.Offset), int64(seg.Filesz)); err != nil {
			return nil, corruptf(name, "segment "+seg.Name, base+int64(seg.Offset), "%#x bytes, but the file ends before them (truncated?)", seg.Filesz)
		}
		if end := int64(seg.Offset + seg.Filesz); size < 0 && end > s.Size {
			s.Size = end
		}
	}
	for _, l := range mf.Loads {
		raw := l.Raw()
		if len(raw) < 8 || mf.ByteOrder.Uint32(raw) != lcUUID {
			continue
		}
		if len(raw) < 24 {
			return nil, corruptf(name, "LC_UUID", base, "load command of %d bytes (want 24)", len(raw))
		}
		if s.UUID != "" {
			return nil, corruptf(name, "LC_UUID", base, "two LC_UUID load commands")
		}
		s.UUID = FormatUUID(raw[8:24])
	}
	if sec := mf.Section("__debug_info"); sec != nil && sec.Seg == "__DWARF" && sec.Size > 0 {
		s.DWARF = true
	}
	if mf.Symtab != nil && len(mf.Symtab.Syms) > 0 {
		s.Symtab = true
		for _, sym := range mf.Symtab.Syms {
			if sym.Type == nOSO && sym.Name != "" && len(s.DebugMap) < maxDebugMap {
				s.DebugMap = append(s.DebugMap, sym.Name)
			}
		}
	}
	return s, nil
}

// FormatUUID formats 16 bytes as lldb, dwarfdump and llvm-objdump print a
// Mach-O UUID: upper-case hex, dashed 8-4-4-4-12.
func FormatUUID(b []byte) string {
	const hex = "0123456789ABCDEF"
	var out strings.Builder
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out.WriteByte('-')
		}
		out.WriteByte(hex[c>>4])
		out.WriteByte(hex[c&0xf])
	}
	return out.String()
}

// ValidUUID reports whether s is a UUID as FormatUUID writes it, the
// form used as a key in pyattach's store.
func ValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case c >= '0' && c <= '9', c >= 'A' && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// cpuName names an architecture as lldb and dsymutil do.
func cpuName(c macho.Cpu, sub uint32) string {
	switch c {
	case macho.CpuAmd64:
		if sub&0xff == 8 {
			return "x86_64h"
		}
		return "x86_64"
	case macho.CpuArm64:
		if sub&0xff == 2 {
			return "arm64e"
		}
		return "arm64"
	case macho.Cpu386:
		return "i386"
	case macho.CpuArm:
		return "arm"
	case macho.CpuPpc:
		return "ppc"
	case macho.CpuPpc64:
		return "ppc64"
	}
	return fmt.Sprintf("cpu-%#x", uint32(c))
}

// typeName names a Mach-O file type.
func typeName(t macho.Type) string {
	switch t {
	case macho.TypeObj:
		return "object"
	case macho.TypeExec:
		return "execute"
	case macho.TypeDylib:
		return "dylib"
	case macho.TypeBundle:
		return "bundle"
	case mhDSYM:
		return "dsym"
	}
	return fmt.Sprintf("type-%#x", uint32(t))
}

// Load commands whose extents precheck knows.
const (
	lcSegment   = 0x1
	lcSymtab    = 0x2
	lcDysymtab  = 0xb
	lcSegment64 = 0x19
	// maxCmdsSize bounds the load commands (real files: a few KiB).
	maxCmdsSize = 16 << 20
)

// precheck reads the Mach-O header and load commands of one file and
// checks that every table they point at lies inside it: the load
// commands themselves, each section's relocations, the symbol and string
// tables, the indirect symbol table.
func precheck(r io.ReaderAt, arch string, base int64) error {
	var h [32]byte
	if _, err := r.ReadAt(h[:28], 0); err != nil {
		return corruptf(arch, "Mach-O header", base, "the file ends inside its header (%w)", noEOF(err))
	}
	var bo binary.ByteOrder = binary.LittleEndian
	m := bo.Uint32(h[:])
	if m != magic32 && m != magic64 {
		bo = binary.BigEndian
		m = bo.Uint32(h[:])
	}
	if m != magic32 && m != magic64 {
		return corruptf(arch, "Mach-O header", base, "bad magic number %#x", binary.BigEndian.Uint32(h[:]))
	}
	hdr := int64(28)
	if m == magic64 {
		hdr = 32
	}
	ncmds, size := bo.Uint32(h[16:]), int64(bo.Uint32(h[20:]))
	if size > maxCmdsSize || int64(ncmds)*8 > size {
		return corruptf(arch, "load commands", base, "%d load commands in %d bytes", ncmds, size)
	}
	if checkExtent(r, hdr, size) != nil {
		return corruptf(arch, "load commands", base+hdr, "the file ends inside its %d bytes of load commands", size)
	}
	cmds := make([]byte, size)
	if _, err := r.ReadAt(cmds, hdr); err != nil {
		return corruptf(arch, "load commands", base+hdr, "the file ends inside its %d bytes of load commands (%w)", size, noEOF(err))
	}
	extent := func(where string, off, n uint64) error {
		if n == 0 {
			return nil
		}
		if off > 1<<40 || n > 1<<40 || checkExtent(r, int64(off), int64(n)) != nil {
			return corruptf(arch, where, base+int64(off), "%#x bytes, but the file ends before them (truncated?)", n)
		}
		return nil
	}
	b := cmds
	for i := uint32(0); i < ncmds; i++ {
		if len(b) < 8 {
			return corruptf(arch, "load commands", base+hdr+size-int64(len(b)), "command %d of %d runs past the commands' size", i+1, ncmds)
		}
		cmd, sz := bo.Uint32(b), bo.Uint32(b[4:])
		if sz < 8 || uint64(sz) > uint64(len(b)) {
			return corruptf(arch, "load commands", base+hdr+size-int64(len(b)), "command %d of size %d", i+1, sz)
		}
		c := b[:sz]
		switch cmd {
		case lcSegment, lcSegment64:
			head, sect, relOff := 56, 68, 48
			if cmd == lcSegment64 {
				head, sect, relOff = 72, 80, 56
			}
			if len(c) < head {
				return corruptf(arch, "load commands", -1, "segment command of %d bytes", len(c))
			}
			n := int(bo.Uint32(c[head-8:]))
			if n > (len(c)-head)/sect {
				return corruptf(arch, "load commands", -1, "segment command of %d bytes claims %d sections", len(c), n)
			}
			for k := 0; k < n; k++ {
				sc := c[head+k*sect:]
				name := strings.TrimRight(string(sc[:16]), "\x00")
				if err := extent("section "+name+" relocations", uint64(bo.Uint32(sc[relOff:])), uint64(bo.Uint32(sc[relOff+4:]))*8); err != nil {
					return err
				}
			}
		case lcSymtab:
			if len(c) < 24 {
				return corruptf(arch, "LC_SYMTAB", -1, "command of %d bytes", len(c))
			}
			entry := uint64(12)
			if m == magic64 {
				entry = 16
			}
			if err := extent("symbol table", uint64(bo.Uint32(c[8:])), uint64(bo.Uint32(c[12:]))*entry); err != nil {
				return err
			}
			if err := extent("string table", uint64(bo.Uint32(c[16:])), uint64(bo.Uint32(c[20:]))); err != nil {
				return err
			}
		case lcDysymtab:
			if len(c) >= 64 {
				if err := extent("indirect symbol table", uint64(bo.Uint32(c[56:])), uint64(bo.Uint32(c[60:]))*4); err != nil {
					return err
				}
			}
		}
		b = b[sz:]
	}
	return nil
}
