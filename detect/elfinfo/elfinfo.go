package elfinfo

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"strings"

	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNotELF means the input does not start with the ELF magic.
	ErrNotELF = errors.New("not an ELF file")
	// ErrNoBuildID means the file has no NT_GNU_BUILD_ID note.
	ErrNoBuildID = errors.New("no GNU build-id note")
	// ErrCorrupt means the ELF structures are truncated or inconsistent.
	ErrCorrupt = errors.New("corrupt or truncated ELF file")
)

// maxNoteSize bounds how much of a note segment or section is read.
// Real note segments are a few hundred bytes; anything larger than this
// is treated as corrupt rather than read into memory.
const maxNoteSize = 1 << 20

// maxSmallSection bounds .gnu_debuglink and .gnu_debugaltlink reads.
const maxSmallSection = 64 << 10

// DebugLink is the content of a .gnu_debuglink section: the base name of
// the separate debug file and the CRC-32 (IEEE) of that whole file.
type DebugLink struct {
	Name string `json:"name"`
	CRC  uint32 `json:"crc"`
}

// AltLink is the content of a .gnu_debugaltlink section, written by dwz:
// the path of the shared supplementary debug file and its build-id.
type AltLink struct {
	Name    string `json:"name"`
	BuildID string `json:"build_id"`
}

// Info holds the facts read from one ELF file.
type Info struct {
	Class   string `json:"class"`   // "ELF64" or "ELF32"
	Machine string `json:"machine"` // e.g. "EM_X86_64"
	Type    string `json:"type"`    // "ET_EXEC", "ET_DYN", "ET_CORE", ...

	BuildID      string     `json:"build_id"`
	DebugLink    *DebugLink `json:"debuglink"`
	DebugAltLink *AltLink   `json:"debugaltlink"`

	// DWARF is true when the file carries .debug_info (or .zdebug_info).
	DWARF bool `json:"dwarf"`
	// DWARFCompressed is true when .debug_info is compressed
	// (SHF_COMPRESSED or the legacy .zdebug_ form).
	DWARFCompressed bool `json:"dwarf_compressed"`
	// DebugLine is true when a line table (.debug_line) is present.
	DebugLine bool `json:"debug_line"`
	// Symtab is true when a full symbol table (.symtab) is present.
	Symtab bool `json:"symtab"`
	// MiniDebugInfo is true when the file carries .gnu_debugdata
	// (an LZMA-compressed ELF with a reduced symbol table).
	MiniDebugInfo bool `json:"minidebuginfo"`
	// Stripped means neither DWARF nor .symtab is present.
	Stripped bool `json:"stripped"`

	// Producer is the DW_AT_producer of the first compile unit, parsed.
	// It is nil when the file has no DWARF or the unit has no producer.
	Producer *Producer `json:"producer"`

	// Interp is the PT_INTERP path (the dynamic loader), if any.
	Interp string `json:"interp,omitempty"`
	// Soname is DT_SONAME, if any.
	Soname string `json:"soname,omitempty"`
	// Needed lists DT_NEEDED entries in order.
	Needed []string `json:"needed,omitempty"`
	// RunPath holds DT_RUNPATH (or DT_RPATH when there is no RUNPATH),
	// split on ':', unexpanded ($ORIGIN kept as is).
	RunPath []string `json:"runpath,omitempty"`
	// RPath is true when RunPath came from the legacy DT_RPATH, which the
	// dynamic loader searches before LD_LIBRARY_PATH (DT_RUNPATH after).
	RPath bool `json:"rpath,omitempty"`
}

// Options selects the optional, more expensive reads.
type Options struct {
	// Producer asks for the first compile unit's DW_AT_producer. This
	// reads the first unit of .debug_info plus .debug_abbrev and the
	// string sections; it costs more than the rest put together.
	Producer bool
	// Dynamic asks for DT_NEEDED, DT_SONAME and DT_RUNPATH.
	Dynamic bool
}

// Open opens the named file and reads its facts.
func Open(name string, opts Options) (*Info, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, opts)
}

// NewFile is elf.NewFile for untrusted input, the one place pyattach
// parses ELF headers: it returns ErrNotELF for input that does not start
// with the ELF magic, and a *FormatError (matching ErrCorrupt) for
// headers debug/elf rejects or panics on. Parse a file once with NewFile
// and hand the *elf.File to ReadELF, BuildIDOf and the other packages'
// readers (pyinfo.ReadELF, srcscan) rather than parsing it again.
func NewFile(r io.ReaderAt) (f *elf.File, err error) {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrNotELF
		}
		return nil, err
	}
	if string(magic[:]) != elf.ELFMAG {
		return nil, ErrNotELF
	}
	defer func() {
		if err != nil {
			f = nil
		}
	}()
	defer RecoverCorrupt(&err, "")
	f, err = elf.NewFile(r)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, Corruptf("", -1, "the file ends inside its headers (%v)", err)
		}
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, Corruptf("", -1, "%v", err)
		}
		return nil, err
	}
	return f, nil
}

// RecoverCorrupt turns a panic of debug/elf on hostile input into a
// *FormatError for section stored in *err. Defer it directly, in a
// function whose error result err points to:
//
//	defer elfinfo.RecoverCorrupt(&err, "symbol table")
func RecoverCorrupt(err *error, section string) {
	if p := recover(); p != nil {
		*err = Corruptf(section, -1, "%v", p)
	}
}

// Read reads the facts of the ELF file behind r.
func Read(r io.ReaderAt, opts Options) (*Info, error) {
	f, err := NewFile(r)
	if err != nil {
		return nil, err
	}
	return ReadELF(f, opts)
}

// ReadELF reads the facts of an ELF file parsed by NewFile.
func ReadELF(f *elf.File, opts Options) (*Info, error) {
	info := &Info{
		Class:   f.Class.String(),
		Machine: f.Machine.String(),
		Type:    f.Type.String(),
	}
	id, err := BuildIDOf(f)
	if err != nil && !errors.Is(err, ErrNoBuildID) {
		return nil, err
	}
	info.BuildID = id

	for _, s := range f.Sections {
		switch s.Name {
		case ".debug_info":
			info.DWARF = true
			if s.Flags&elf.SHF_COMPRESSED != 0 {
				info.DWARFCompressed = true
			}
		case ".zdebug_info":
			info.DWARF = true
			info.DWARFCompressed = true
		case ".debug_line", ".zdebug_line":
			info.DebugLine = true
		case ".gnu_debugdata":
			info.MiniDebugInfo = true
		}
		if s.Type == elf.SHT_SYMTAB {
			info.Symtab = true
		}
	}
	info.Stripped = !info.DWARF && !info.Symtab

	if s := f.Section(".gnu_debuglink"); s != nil && s.Type != elf.SHT_NOBITS {
		b, err := readSection(s, maxSmallSection)
		if err != nil {
			return nil, err
		}
		dl, err := ParseDebugLink(b, f.ByteOrder)
		if err != nil {
			return nil, atOffset(err, s.Offset)
		}
		info.DebugLink = &dl
	}
	if s := f.Section(".gnu_debugaltlink"); s != nil && s.Type != elf.SHT_NOBITS {
		b, err := readSection(s, maxSmallSection)
		if err != nil {
			return nil, err
		}
		al, err := ParseAltLink(b)
		if err != nil {
			return nil, atOffset(err, s.Offset)
		}
		info.DebugAltLink = &al
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP && p.Filesz > 0 && p.Filesz < 4096 {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				info.Interp = string(bytes.TrimRight(b, "\x00"))
			}
		}
	}
	if opts.Dynamic {
		if err := readDynamic(f, info); err != nil {
			return nil, err
		}
	}
	if opts.Producer && info.DWARF {
		p, err := firstProducer(f)
		if err == nil && p != "" {
			pp := ParseProducer(p)
			info.Producer = &pp
		}
	}
	return info, nil
}

// readDynamic reads DT_NEEDED, DT_SONAME and DT_RUNPATH (or DT_RPATH)
// in one pass over the dynamic section and its string table, which
// debug/elf's DynString reads again for every tag. Entries whose string
// is out of range are skipped, as DynString skips them; a dynamic
// section that cannot be read leaves the fields empty.
func readDynamic(f *elf.File, info *Info) (err error) {
	defer RecoverCorrupt(&err, ".dynamic")
	ds := f.SectionByType(elf.SHT_DYNAMIC)
	if ds == nil || ds.Type == elf.SHT_NOBITS {
		return nil
	}
	size := 8
	if f.Class == elf.ELFCLASS64 {
		size = 16
	}
	if ds.Link == 0 || int(ds.Link) >= len(f.Sections) || f.Sections[ds.Link].Type != elf.SHT_STRTAB {
		return nil
	}
	d, err := ds.Data()
	if err != nil || len(d)%size != 0 {
		return nil
	}
	str, err := f.Sections[ds.Link].Data()
	if err != nil {
		return nil
	}
	var runpath, rpath []string
	for ; len(d) >= size; d = d[size:] {
		var tag elf.DynTag
		var v uint64
		if size == 16 {
			tag, v = elf.DynTag(f.ByteOrder.Uint64(d[0:8])), f.ByteOrder.Uint64(d[8:16])
		} else {
			tag, v = elf.DynTag(f.ByteOrder.Uint32(d[0:4])), uint64(f.ByteOrder.Uint32(d[4:8]))
		}
		switch tag {
		case elf.DT_NEEDED, elf.DT_SONAME, elf.DT_RUNPATH, elf.DT_RPATH:
		default:
			continue
		}
		if v >= uint64(len(str)) {
			continue
		}
		end := bytes.IndexByte(str[v:], 0)
		if end < 0 {
			continue
		}
		s := string(str[v : v+uint64(end)])
		switch tag {
		case elf.DT_NEEDED:
			info.Needed = append(info.Needed, s)
		case elf.DT_SONAME:
			if info.Soname == "" {
				info.Soname = s
			}
		case elf.DT_RUNPATH:
			runpath = append(runpath, s)
		case elf.DT_RPATH:
			rpath = append(rpath, s)
		}
	}
	rp := runpath
	if len(rp) == 0 {
		rp, info.RPath = rpath, len(rpath) > 0
	}
	for _, s := range rp {
		for _, dir := range strings.Split(s, ":") {
			if dir != "" {
				info.RunPath = append(info.RunPath, dir)
			}
		}
	}
	return nil
}

func readSection(s *elf.Section, limit uint64) ([]byte, error) {
	if s.Size > limit {
		return nil, Corruptf(s.Name, int64(s.Offset), "section of %d bytes, more than %d", s.Size, limit)
	}
	b := make([]byte, s.Size)
	if _, err := s.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && s.Size == 0) {
		return nil, Corruptf(s.Name, int64(s.Offset), "reading: %v", err)
	}
	return b, nil
}

// ReadBuildID returns the hex GNU build-id of the ELF file behind r. It
// reads the ELF header, the program headers and the note segments (falling
// back to note sections for files without program headers, such as
// separate debug files and relocatable objects).
func ReadBuildID(r io.ReaderAt) (string, error) {
	f, err := NewFile(r)
	if err != nil {
		return "", err
	}
	return BuildIDOf(f)
}

// ReadBuildIDFile is ReadBuildID on the named file.
func ReadBuildIDFile(name string) (string, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return ReadBuildID(f)
}

// BuildIDOf is ReadBuildID on an ELF file parsed by NewFile.
func BuildIDOf(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		if id, err := buildIDIn(p.Open(), "PT_NOTE", p.Off, p.Filesz, f.ByteOrder); err != nil || id != "" {
			return id, err
		}
	}
	// Separate debug files and relocatable objects have no note segments,
	// and some linkers (Go's) leave .note.gnu.build-id outside the
	// PT_NOTE segment: look at every note section, as gdb does.
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		if id, err := buildIDIn(s.Open(), s.Name, s.Offset, s.Size, f.ByteOrder); err != nil || id != "" {
			return id, err
		}
	}
	return "", ErrNoBuildID
}

// buildIDIn reads the build-id in the notes of the segment or section
// name at file offset off.
func buildIDIn(r io.ReadSeeker, name string, off, size uint64, bo binary.ByteOrder) (string, error) {
	if size > maxNoteSize {
		return "", Corruptf(name, int64(off), "notes of %d bytes, more than %d", size, maxNoteSize)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", Corruptf(name, int64(off), "reading notes: %v", err)
	}
	notes, err := ParseNotes(b, bo)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Section = name
		}
		return "", atOffset(err, off)
	}
	return NotesBuildID(notes), nil
}

// NotesBuildID returns the hex build-id of the first GNU build-id note
// among notes, or "".
func NotesBuildID(notes []Note) string {
	for _, n := range notes {
		if n.Name == "GNU" && n.Type == NTGNUBuildID && len(n.Desc) > 0 {
			return buildid.FromBytes(n.Desc).String()
		}
	}
	return ""
}

// NTGNUBuildID is the note type of the GNU build-id note.
const NTGNUBuildID = 3

// Note is one ELF note.
type Note struct {
	Name string
	Type uint32
	Desc []byte
}

// ParseNotes parses the notes in the contents of a PT_NOTE segment or an
// SHT_NOTE section. Names and descriptors are padded to 4 bytes, the
// alignment GNU tools use for both 4- and 8-byte aligned note segments on
// the note types pyattach reads.
//
// A malformed note gives a *FormatError whose Off is the note's offset in
// b.
func ParseNotes(b []byte, bo binary.ByteOrder) ([]Note, error) {
	var notes []Note
	all := len(b)
	for len(b) > 0 {
		at := int64(all - len(b))
		if len(b) < NoteHeaderSize {
			// Trailing padding is allowed; anything else is corrupt.
			if ZeroPadding(b) {
				break
			}
			return notes, Corruptf("notes", at, "truncated note header")
		}
		namesz, descsz, typ := NoteHeader(b, bo)
		b = b[NoteHeaderSize:]
		nameEnd := NotePad(namesz)
		if nameEnd > uint64(len(b)) || namesz > nameEnd {
			return notes, Corruptf("notes", at, "note name of %d bytes overruns its segment", namesz)
		}
		name := string(bytes.TrimRight(b[:namesz], "\x00"))
		b = b[nameEnd:]
		descEnd := NotePad(descsz)
		if descsz > uint64(len(b)) {
			return notes, Corruptf("notes", at, "note desc of %d bytes overruns its segment", descsz)
		}
		desc := b[:descsz:descsz]
		if descEnd > uint64(len(b)) {
			descEnd = uint64(len(b))
		}
		b = b[descEnd:]
		notes = append(notes, Note{Name: name, Type: typ, Desc: desc})
	}
	return notes, nil
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

// NoteHeaderSize is the size of a note's header: namesz, descsz, type.
const NoteHeaderSize = 12

// NoteHeader decodes a note's header from the first NoteHeaderSize
// bytes of b.
func NoteHeader(b []byte, bo binary.ByteOrder) (namesz, descsz uint64, typ uint32) {
	return uint64(bo.Uint32(b[0:4])), uint64(bo.Uint32(b[4:8])), bo.Uint32(b[8:12])
}

// NotePad is n rounded up to the 4-byte alignment of a note's name and
// descriptor (see ParseNotes).
func NotePad(n uint64) uint64 { return align4(n) }

// ZeroPadding reports whether b holds only zero bytes: the padding
// allowed after the last note of a segment.
func ZeroPadding(b []byte) bool { return len(bytes.TrimLeft(b, "\x00")) == 0 }

// ParseDebugLink parses the contents of a .gnu_debuglink section: a
// NUL-terminated file name, zero padding to a 4-byte boundary, then the
// CRC-32 of the debug file in the file's byte order. Bad contents give a
// *FormatError with the offset in b.
func ParseDebugLink(b []byte, bo binary.ByteOrder) (DebugLink, error) {
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return DebugLink{}, Corruptf(".gnu_debuglink", 0, "no file name")
	}
	off := align4(uint64(i + 1))
	if off+4 > uint64(len(b)) {
		return DebugLink{}, Corruptf(".gnu_debuglink", int64(i+1), "truncated after the name, before the CRC")
	}
	name := string(b[:i])
	if !validBaseName(name) {
		return DebugLink{}, Corruptf(".gnu_debuglink", 0, "name %q is not a file name", name)
	}
	return DebugLink{Name: name, CRC: bo.Uint32(b[off : off+4])}, nil
}

// validBaseName reports whether a debuglink name is a plain file name.
// gdb joins it onto directories, so a name with a slash could point
// anywhere; such names are rejected.
func validBaseName(s string) bool {
	if s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] < 0x20 {
			return false
		}
	}
	return true
}

// ParseAltLink parses the contents of a .gnu_debugaltlink section: a
// NUL-terminated path followed by the build-id of that file. Bad contents
// give a *FormatError with the offset in b.
func ParseAltLink(b []byte) (AltLink, error) {
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return AltLink{}, Corruptf(".gnu_debugaltlink", 0, "no file name")
	}
	id := b[i+1:]
	if len(id) == 0 {
		return AltLink{}, Corruptf(".gnu_debugaltlink", int64(i+1), "no build-id")
	}
	for j := 0; j < i; j++ {
		if b[j] < 0x20 {
			return AltLink{}, Corruptf(".gnu_debugaltlink", int64(j), "name has control characters")
		}
	}
	return AltLink{Name: string(b[:i]), BuildID: buildid.FromBytes(id).String()}, nil
}
