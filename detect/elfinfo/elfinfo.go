package elfinfo

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pyattach/pyattach/detect/buildid"
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
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, opts)
}

// newFile wraps elf.NewFile, mapping its errors onto the sentinels, and
// recovers from panics in the standard library's parser on hostile input.
func newFile(r io.ReaderAt) (f *elf.File, err error) {
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
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, p)
		}
	}()
	f, err = elf.NewFile(r)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return nil, err
	}
	return f, nil
}

// Read reads the facts of the ELF file behind r.
func Read(r io.ReaderAt, opts Options) (*Info, error) {
	f, err := newFile(r)
	if err != nil {
		return nil, err
	}
	info := &Info{
		Class:   f.Class.String(),
		Machine: f.Machine.String(),
		Type:    f.Type.String(),
	}
	id, err := buildID(f)
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
			return nil, err
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
			return nil, err
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

func readDynamic(f *elf.File, info *Info) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: dynamic section: %v", ErrCorrupt, p)
		}
	}()
	if f.SectionByType(elf.SHT_DYNAMIC) == nil {
		return nil
	}
	if v, err := f.DynString(elf.DT_NEEDED); err == nil {
		info.Needed = v
	}
	if v, err := f.DynString(elf.DT_SONAME); err == nil && len(v) > 0 {
		info.Soname = v[0]
	}
	rp, _ := f.DynString(elf.DT_RUNPATH)
	if len(rp) == 0 {
		rp, _ = f.DynString(elf.DT_RPATH)
		info.RPath = len(rp) > 0
	}
	for _, s := range rp {
		for _, d := range bytes.Split([]byte(s), []byte(":")) {
			if len(d) > 0 {
				info.RunPath = append(info.RunPath, string(d))
			}
		}
	}
	return nil
}

func readSection(s *elf.Section, limit uint64) ([]byte, error) {
	if s.Size > limit {
		return nil, fmt.Errorf("%w: section %s is %d bytes", ErrCorrupt, s.Name, s.Size)
	}
	b := make([]byte, s.Size)
	if _, err := s.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && s.Size == 0) {
		return nil, fmt.Errorf("%w: reading %s: %v", ErrCorrupt, s.Name, err)
	}
	return b, nil
}

// ReadBuildID returns the hex GNU build-id of the ELF file behind r. It
// reads the ELF header, the program headers and the note segments (falling
// back to note sections for files without program headers, such as
// separate debug files and relocatable objects).
func ReadBuildID(r io.ReaderAt) (string, error) {
	f, err := newFile(r)
	if err != nil {
		return "", err
	}
	return buildID(f)
}

// ReadBuildIDFile is ReadBuildID on the named file.
func ReadBuildIDFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return ReadBuildID(f)
}

func buildID(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		if id, err := buildIDIn(p.Open(), p.Filesz, f.ByteOrder); err != nil || id != "" {
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
		if id, err := buildIDIn(s.Open(), s.Size, f.ByteOrder); err != nil || id != "" {
			return id, err
		}
	}
	return "", ErrNoBuildID
}

func buildIDIn(r io.ReadSeeker, size uint64, bo binary.ByteOrder) (string, error) {
	if size > maxNoteSize {
		return "", fmt.Errorf("%w: note of %d bytes", ErrCorrupt, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("%w: reading notes: %v", ErrCorrupt, err)
	}
	notes, err := ParseNotes(b, bo)
	if err != nil {
		return "", err
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
func ParseNotes(b []byte, bo binary.ByteOrder) ([]Note, error) {
	var notes []Note
	for len(b) > 0 {
		if len(b) < 12 {
			// Trailing padding is allowed; anything else is corrupt.
			if allZero(b) {
				break
			}
			return notes, fmt.Errorf("%w: truncated note header", ErrCorrupt)
		}
		namesz := uint64(bo.Uint32(b[0:4]))
		descsz := uint64(bo.Uint32(b[4:8]))
		typ := bo.Uint32(b[8:12])
		b = b[12:]
		nameEnd := align4(namesz)
		if nameEnd > uint64(len(b)) || namesz > nameEnd {
			return notes, fmt.Errorf("%w: note name of %d bytes overruns its segment", ErrCorrupt, namesz)
		}
		name := string(bytes.TrimRight(b[:namesz], "\x00"))
		b = b[nameEnd:]
		descEnd := align4(descsz)
		if descsz > uint64(len(b)) {
			return notes, fmt.Errorf("%w: note desc of %d bytes overruns its segment", ErrCorrupt, descsz)
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

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ParseDebugLink parses the contents of a .gnu_debuglink section: a
// NUL-terminated file name, zero padding to a 4-byte boundary, then the
// CRC-32 of the debug file in the file's byte order.
func ParseDebugLink(b []byte, bo binary.ByteOrder) (DebugLink, error) {
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return DebugLink{}, fmt.Errorf("%w: .gnu_debuglink has no file name", ErrCorrupt)
	}
	off := align4(uint64(i + 1))
	if off+4 > uint64(len(b)) {
		return DebugLink{}, fmt.Errorf("%w: .gnu_debuglink is truncated", ErrCorrupt)
	}
	name := string(b[:i])
	if !validBaseName(name) {
		return DebugLink{}, fmt.Errorf("%w: .gnu_debuglink name %q is not a file name", ErrCorrupt, name)
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
// NUL-terminated path followed by the build-id of that file.
func ParseAltLink(b []byte) (AltLink, error) {
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return AltLink{}, fmt.Errorf("%w: .gnu_debugaltlink has no file name", ErrCorrupt)
	}
	id := b[i+1:]
	if len(id) == 0 {
		return AltLink{}, fmt.Errorf("%w: .gnu_debugaltlink has no build-id", ErrCorrupt)
	}
	for j := 0; j < i; j++ {
		if b[j] < 0x20 {
			return AltLink{}, fmt.Errorf("%w: .gnu_debugaltlink name has control characters", ErrCorrupt)
		}
	}
	return AltLink{Name: string(b[:i]), BuildID: buildid.FromBytes(id).String()}, nil
}
