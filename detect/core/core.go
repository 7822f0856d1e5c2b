package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/saferead"
)

// ErrNotCore means the input is an ELF file but not a core file
// (e_type is not ET_CORE): a program or a library was given where a core
// was expected.
var ErrNotCore = errors.New("not an ELF core file")

// Auxiliary vector entries that Read uses.
const (
	atNull   = 0
	atPhdr   = 3
	atEntry  = 9
	atExecFn = 31
)

// Bounds on what Read believes. A core is untrusted input: any size or
// count it claims is checked against these before it is used, and buffers
// for the larger reads grow only as the file really delivers bytes.
const (
	// maxPhnum bounds the core's program headers. Linux's default
	// vm.max_map_count is 65530; one PT_LOAD per mapping plus notes.
	maxPhnum = 1 << 20
	// maxSmallNote bounds NT_PRPSINFO, NT_PRSTATUS and NT_AUXV.
	maxSmallNote = 64 << 10
	// maxFileNote bounds NT_FILE: 65530 mappings with long paths fit.
	maxFileNote = 64 << 20
	// maxNameSize bounds a note name that Read compares ("CORE").
	maxNameSize = 64
	// maxModulePhdrs bounds the program header table of a mapped module.
	maxModulePhdrs = 64 << 10
	// maxModuleNote bounds one PT_NOTE segment of a mapped module.
	maxModuleNote = 64 << 10
	// maxModules bounds how many mapped files get a build-id lookup.
	maxModules = 1 << 16
	// maxHeadersPerPath bounds the offset-0 mappings of one path whose
	// ELF header is tried (a library loaded twice, or a first page that
	// was not dumped).
	maxHeadersPerPath = 4
	// maxNotes bounds the notes walked in all PT_NOTE segments. A real
	// core has about six per thread.
	maxNotes = 1 << 20
	// maxExecFn bounds the AT_EXECFN string (PATH_MAX).
	maxExecFn = 4096
	// maxThreads bounds the threads whose registers Read keeps (Linux's
	// default threads-max is in this order per process).
	maxThreads = 1 << 17
)

// Info is what a core file says about the process it came from.
type Info struct {
	PID int `json:"pid"`
	// Comm is NT_PRPSINFO's pr_fname: the kernel's comm of the process,
	// at most 15 bytes (the base name of the executable unless the
	// process renamed itself).
	Comm string `json:"comm"`
	// Args is NT_PRPSINFO's pr_psargs: the start of the command line
	// (at most 79 bytes), arguments separated by spaces, trailing spaces
	// removed.
	Args string `json:"args"`
	// Owner is NT_PRPSINFO's pr_uid and pr_gid: the process's user and
	// group as its own user namespace numbers them; nil when the core
	// does not say.
	Owner *Owner `json:"owner,omitempty"`
	// Exe is the executable as the process saw it: the NT_FILE path
	// mapped at the program's entry point (AT_ENTRY); failing that the
	// AT_EXECFN string from the core's memory (the name given to execve,
	// possibly relative, completed to an NT_FILE path when one ends with
	// it); failing that the first NT_FILE path whose base name matches
	// Comm. It is "" when the core tells none of these.
	Exe string `json:"exe"`
	// ExeDeleted is true when the kernel marked the executable's mapping
	// " (deleted)".
	ExeDeleted bool `json:"exe_deleted,omitempty"`
	// ExeBuildID is the build-id of Exe read from the core, or "".
	ExeBuildID string `json:"exe_build_id,omitempty"`
	// Files are the NT_FILE mappings, one per path (the one with the
	// lowest Start; a deleted file and a live one at the same path are
	// two), sorted by Start. BuildID comes from the path's first mapping
	// at file offset 0, in address order, whose ELF header and build-id
	// note the core holds.
	Files []File `json:"files"`
	// Mappings are all the NT_FILE mappings, in the note's order,
	// without build-ids: what maps each address (to name a pc).
	Mappings []File `json:"-"`
	// Loaded is the dynamic loader's list of objects in the core's
	// memory (loadedObjects), in its order; nil when the memory does
	// not hold it (a static program, a core without that page).
	Loaded []Loaded `json:"-"`
	// Machine is the core's e_machine (elf.EM_X86_64, elf.EM_AARCH64).
	Machine elf.Machine `json:"-"`
	// Threads are the NT_PRSTATUS notes, one per thread, in the core's
	// order (the thread that dumped, or the main thread, first).
	Threads []Thread `json:"-"`
	// Truncated is true when the file ends before the last byte of memory
	// it claims to hold (RLIMIT_CORE, a full disk, an interrupted copy):
	// what was read from the notes is intact, but build-ids of modules in
	// the lost part are missing.
	Truncated bool `json:"truncated,omitempty"`
}

// Owner is the user and group a core's process ran as.
type Owner struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
}

// Open opens the named core file and reads it.
func Open(name string) (*Info, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// header is the part of an ELF file header that Read needs.
type header struct {
	class     elf.Class
	bo        binary.ByteOrder
	typ       elf.Type
	machine   elf.Machine
	phoff     uint64
	phentsize uint64
	phnum     uint64
	shoff     uint64
	shentsize uint64
}

// parseHeader decodes an ELF file header from b, which holds at least the
// 16 identification bytes. It checks the magic, class and byte order, and
// that b holds the whole header for that class.
func parseHeader(b []byte) (header, error) {
	var h header
	if len(b) < 4 || string(b[:4]) != elf.ELFMAG {
		return h, elfinfo.ErrNotELF
	}
	if len(b) < elf.EI_NIDENT {
		return h, elfinfo.Corruptf("ELF header", 0, "identification is truncated")
	}
	switch elf.Data(b[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		h.bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		h.bo = binary.BigEndian
	default:
		return h, elfinfo.Corruptf("ELF header", elf.EI_DATA, "unknown data encoding %d", b[elf.EI_DATA])
	}
	h.class = elf.Class(b[elf.EI_CLASS])
	switch h.class {
	case elf.ELFCLASS64:
		if len(b) < 64 {
			return h, elfinfo.Corruptf("ELF header", 0, "truncated")
		}
		h.typ = elf.Type(h.bo.Uint16(b[16:]))
		h.machine = elf.Machine(h.bo.Uint16(b[18:]))
		h.phoff = h.bo.Uint64(b[32:])
		h.shoff = h.bo.Uint64(b[40:])
		h.phentsize = uint64(h.bo.Uint16(b[54:]))
		h.phnum = uint64(h.bo.Uint16(b[56:]))
		h.shentsize = uint64(h.bo.Uint16(b[58:]))
	case elf.ELFCLASS32:
		if len(b) < 52 {
			return h, elfinfo.Corruptf("ELF header", 0, "truncated")
		}
		h.typ = elf.Type(h.bo.Uint16(b[16:]))
		h.machine = elf.Machine(h.bo.Uint16(b[18:]))
		h.phoff = uint64(h.bo.Uint32(b[28:]))
		h.shoff = uint64(h.bo.Uint32(b[32:]))
		h.phentsize = uint64(h.bo.Uint16(b[42:]))
		h.phnum = uint64(h.bo.Uint16(b[44:]))
		h.shentsize = uint64(h.bo.Uint16(b[46:]))
	default:
		return h, elfinfo.Corruptf("ELF header", elf.EI_CLASS, "unknown class %d", b[elf.EI_CLASS])
	}
	return h, nil
}

// wordSize is the size of an address for the class.
func (h header) wordSize() uint64 {
	if h.class == elf.ELFCLASS64 {
		return 8
	}
	return 4
}

// minPhentsize is the size of one program header for the class.
func (h header) minPhentsize() uint64 {
	if h.class == elf.ELFCLASS64 {
		return 56
	}
	return 32
}

// prog is the part of a program header that Read needs.
type prog struct {
	typ                       elf.ProgType
	off, vaddr, filesz, memsz uint64
}

// parseProg decodes one program header.
func (h header) parseProg(b []byte) prog {
	if h.class == elf.ELFCLASS64 {
		return prog{
			typ:    elf.ProgType(h.bo.Uint32(b[0:])),
			off:    h.bo.Uint64(b[8:]),
			vaddr:  h.bo.Uint64(b[16:]),
			filesz: h.bo.Uint64(b[32:]),
			memsz:  h.bo.Uint64(b[40:]),
		}
	}
	return prog{
		typ:    elf.ProgType(h.bo.Uint32(b[0:])),
		off:    uint64(h.bo.Uint32(b[4:])),
		vaddr:  uint64(h.bo.Uint32(b[8:])),
		filesz: uint64(h.bo.Uint32(b[16:])),
		memsz:  uint64(h.bo.Uint32(b[20:])),
	}
}

// readFull reads exactly n bytes at off. The buffer grows with the bytes
// the reader really returns, so a size claimed by a hostile file costs
// no more memory than the file holds. A short read wraps ErrCorrupt.
func readFull(r io.ReaderAt, off, n uint64, what string) ([]byte, error) {
	if off > math.MaxInt64 || n > math.MaxInt64-off {
		return nil, elfinfo.Corruptf(what, -1, "%#x bytes at %#x are out of range", n, off)
	}
	var b []byte
	if n <= 64<<10 {
		b = make([]byte, n)
		m, err := r.ReadAt(b, int64(off))
		if uint64(m) == n {
			return b, nil
		}
		return nil, shortRead(what, off, n, uint64(m), err)
	}
	var buf bytes.Buffer
	m, err := buf.ReadFrom(io.NewSectionReader(r, int64(off), int64(n)))
	if uint64(m) != n {
		return nil, shortRead(what, off, n, uint64(m), err)
	}
	return buf.Bytes(), nil
}

func shortRead(what string, off, n, got uint64, err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return elfinfo.Corruptf(what, int64(off), "file ends after %d of %d bytes", got, n)
	}
	return fmt.Errorf("reading %s at %#x: %w", what, off, err)
}

// Read reads the core file behind r: the ELF header (which must say
// ET_CORE), the program headers, the CORE notes, and the first page of
// every mapped ELF module in the memory image. It returns an error
// wrapping elfinfo.ErrNotELF for input that is not ELF, ErrNotCore for an
// ELF file of another type, and elfinfo.ErrCorrupt when the header, the
// program headers or the notes are truncated or inconsistent. Missing
// notes are not an error: the fields they would fill stay empty.
func Read(r io.ReaderAt) (*Info, error) {
	ident := make([]byte, 64)
	n, err := r.ReadAt(ident, 0)
	if n < 4 {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return nil, elfinfo.ErrNotELF
	}
	h, err := parseHeader(ident[:n])
	if err != nil {
		return nil, err
	}
	if h.typ != elf.ET_CORE {
		return nil, fmt.Errorf("%w: ELF type is %v", ErrNotCore, h.typ)
	}
	progs, err := readProgs(r, h)
	if err != nil {
		return nil, err
	}
	img := newImage(r, progs)
	info := &Info{Machine: h.machine}
	aux := auxv{budget: maxNotes}
	for _, p := range progs {
		if p.typ != elf.PT_NOTE {
			continue
		}
		if err := readCoreNotes(r, h, p, info, &aux); err != nil {
			return nil, err
		}
	}
	info.Truncated = img.truncated()

	info.Files = img.files(aux.files)
	info.Mappings = aux.files
	byPath := map[string]int{}
	for i, f := range info.Files {
		byPath[rawPath(f)] = i
	}

	info.Loaded = loadedObjects(h, img, aux)
	exe, ok := exeFile(aux, info.Comm, img)
	if ok {
		info.Exe, info.ExeDeleted = exe.Path, exe.Deleted
		if i, ok := byPath[rawPath(exe)]; ok {
			info.ExeBuildID = info.Files[i].BuildID
		}
	}
	return info, nil
}

func rawPath(f File) string {
	if f.Deleted {
		return f.Path + deletedSuffix
	}
	return f.Path
}

// readProgs reads the core's program headers, following PN_XNUM to the
// count in section header 0 for cores with 65535 or more segments.
func readProgs(r io.ReaderAt, h header) ([]prog, error) {
	num := h.phnum
	if num == 0xffff { // PN_XNUM
		if h.shoff == 0 || h.shentsize < h.minPhentsize()-16 {
			return nil, elfinfo.Corruptf("ELF header", -1, "PN_XNUM without section header 0")
		}
		at := uint64(44) // sh_info of Elf64_Shdr
		if h.class == elf.ELFCLASS32 {
			at = 28
		}
		b, err := readFull(r, h.shoff, at+4, "section header 0")
		if err != nil {
			return nil, err
		}
		num = uint64(h.bo.Uint32(b[at:]))
	}
	if num == 0 {
		return nil, nil
	}
	if num > maxPhnum {
		return nil, elfinfo.Corruptf("program headers", int64(h.phoff), "%d of them, more than %d", num, maxPhnum)
	}
	if h.phentsize < h.minPhentsize() {
		return nil, elfinfo.Corruptf("program headers", int64(h.phoff), "entry size %d is too small", h.phentsize)
	}
	b, err := readFull(r, h.phoff, num*h.phentsize, "program headers")
	if err != nil {
		return nil, err
	}
	progs := make([]prog, num)
	for i := range progs {
		progs[i] = h.parseProg(b[uint64(i)*h.phentsize:])
	}
	return progs, nil
}

// auxv holds what the notes say beyond Info's own fields. Of each note
// type only the first is used: a core has one NT_PRPSINFO, NT_AUXV and
// NT_FILE, and a hostile one must not multiply the work by repeating them.
type auxv struct {
	entry, phdr, execfn uint64
	phent, phnum        uint64
	files               []File // NT_FILE, not deduplicated
	sawPSInfo, sawAuxv  bool
	sawFile             bool
	budget              int // notes left to walk
}

// readCoreNotes walks one PT_NOTE segment of the core, reading only the
// headers of notes it does not use (the floating-point sets), so that a
// core with thousands of threads costs little: of each thread it keeps
// the NT_PRSTATUS (a few hundred bytes), of the others the first.
func readCoreNotes(r io.ReaderAt, h header, p prog, info *Info, aux *auxv) error {
	if p.off > math.MaxInt64 || p.filesz > math.MaxInt64-p.off {
		return elfinfo.Corruptf("PT_NOTE", -1, "%#x bytes at %#x are out of range", p.filesz, p.off)
	}
	end := p.off + p.filesz
	for off := p.off; off < end; {
		if end-off < elfinfo.NoteHeaderSize {
			// Trailing padding is allowed.
			if b, err := readFull(r, off, end-off, "note padding"); err != nil || !elfinfo.ZeroPadding(b) {
				return elfinfo.Corruptf("PT_NOTE", int64(off), "truncated note header")
			}
			break
		}
		if aux.budget--; aux.budget < 0 {
			return elfinfo.Corruptf("PT_NOTE", int64(off), "more than %d notes", maxNotes)
		}
		hdr, err := readFull(r, off, elfinfo.NoteHeaderSize, "note header")
		if err != nil {
			return err
		}
		namesz, descsz, typ := elfinfo.NoteHeader(hdr, h.bo)
		nameOff := off + elfinfo.NoteHeaderSize
		descOff := nameOff + elfinfo.NotePad(namesz)
		next := descOff + elfinfo.NotePad(descsz)
		if descOff+descsz > end {
			return elfinfo.Corruptf("PT_NOTE", int64(off), "note overruns its segment")
		}
		if next > end {
			next = end // the last note's descriptor need not be padded
		}
		off = next
		if namesz != 5 {
			continue // "CORE\x00"
		}
		name, err := readFull(r, nameOff, namesz, "note name")
		if err != nil {
			return err
		}
		if string(name) != "CORE\x00" {
			continue
		}
		limit := uint64(maxSmallNote)
		var seen *bool
		switch typ {
		case NTFile:
			limit, seen = maxFileNote, &aux.sawFile
		case NTPRPSInfo:
			seen = &aux.sawPSInfo
		case NTAuxv:
			seen = &aux.sawAuxv
		case NTPRStatus:
			// One per thread: each is small, their count bounded.
			if len(info.Threads) >= maxThreads {
				continue
			}
			seen = new(bool)
		default:
			continue
		}
		if *seen {
			continue
		}
		*seen = true
		if descsz > limit {
			return elfinfo.Corruptf("PT_NOTE", int64(nameOff-elfinfo.NoteHeaderSize), "note type %#x of %d bytes, more than %d", typ, descsz, limit)
		}
		desc, err := readFull(r, descOff, descsz, "note")
		if err != nil {
			return err
		}
		switch typ {
		case NTPRPSInfo:
			parsePSInfo(desc, h, info)
		case NTPRStatus:
			if info.PID == 0 && len(info.Threads) == 0 {
				// Only the first thread's, and only as a fallback.
				parseStatusPID(desc, h, info)
			}
			info.Threads = append(info.Threads, parseStatus(desc, h))
		case NTAuxv:
			parseAuxv(desc, h, aux)
		case NTFile:
			files, err := ParseNTFile(desc, h.bo, h.class)
			if err != nil {
				return err
			}
			aux.files = append(aux.files, files...)
		}
	}
	return nil
}

// parsePSInfo decodes struct elf_prpsinfo. Its layout differs between
// architectures before the PIDs (the width of pr_flag, pr_uid and
// pr_gid), but always ends with four 32-bit PIDs, pr_fname[16] and
// pr_psargs[80], so the fields are taken from the end. pr_uid and
// pr_gid sit just before the PIDs, each 16 bits (i386, arm: 32-bit
// ABIs only) or 32 bits wide: what is left of the note after four chars and pr_flag (a word,
// aligned to its size) says which; any other size leaves Owner nil.
func parsePSInfo(d []byte, h header, info *Info) {
	const fname, psargs, pids = 16, 80, 16
	n := len(d)
	if n < pids+fname+psargs {
		return
	}
	ids := n - psargs - fname - pids
	info.PID = int(int32(h.bo.Uint32(d[ids:])))
	info.Comm = cstring(d[n-psargs-fname : n-psargs])
	info.Args = strings.TrimRight(cstring(d[n-psargs:]), " ")
	ws := int(h.wordSize())
	head := 4
	if head%ws != 0 {
		head += ws - head%ws
	}
	switch ids - head - ws {
	case 4:
		if ws != 4 {
			return // no 64-bit ABI has 16-bit ids
		}
		info.Owner = &Owner{UID: uint32(h.bo.Uint16(d[ids-4:])), GID: uint32(h.bo.Uint16(d[ids-2:]))}
	case 8:
		info.Owner = &Owner{UID: h.bo.Uint32(d[ids-8:]), GID: h.bo.Uint32(d[ids-4:])}
	}
}

// parseStatusPID takes pr_pid from struct elf_prstatus, used only when
// the core has no NT_PRPSINFO. pr_pid follows pr_info (three ints),
// pr_cursig (a short, padded) and two longs of signal masks.
func parseStatusPID(d []byte, h header, info *Info) {
	at := 12 + 4 + 2*h.wordSize()
	if uint64(len(d)) < at+4 {
		return
	}
	info.PID = int(int32(h.bo.Uint32(d[at:])))
}

func parseAuxv(d []byte, h header, aux *auxv) {
	ws := h.wordSize()
	word := func(b []byte) uint64 {
		if ws == 8 {
			return h.bo.Uint64(b)
		}
		return uint64(h.bo.Uint32(b))
	}
	for i := uint64(0); i+2*ws <= uint64(len(d)); i += 2 * ws {
		key, val := word(d[i:]), word(d[i+ws:])
		switch key {
		case atNull:
			return
		case atEntry:
			aux.entry = val
		case atPhdr:
			aux.phdr = val
		case atExecFn:
			aux.execfn = val
		case atPhent:
			aux.phent = val
		case atPhnum:
			aux.phnum = val
		}
	}
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// exeFile picks the executable's mapping, in the order the package
// documentation gives.
func exeFile(aux auxv, comm string, img *image) (File, bool) {
	for _, a := range []uint64{aux.entry, aux.phdr} {
		if a == 0 {
			continue
		}
		for _, f := range aux.files {
			if f.Start <= a && a < f.End {
				return f, true
			}
		}
	}
	if aux.execfn != 0 {
		if s, ok := img.cstring(aux.execfn, maxExecFn); ok && s != "" {
			if !path.IsAbs(s) {
				rel := path.Clean(s)
				if rel != ".." && !strings.HasPrefix(rel, "../") {
					for _, f := range aux.files {
						if strings.HasSuffix(f.Path, "/"+rel) {
							return f, true
						}
					}
				}
			}
			for _, f := range aux.files {
				if f.Path == s {
					return f, true
				}
			}
			return File{Path: s}, true
		}
	}
	if comm != "" {
		for _, f := range aux.files {
			base := path.Base(f.Path)
			if base == comm || (len(comm) == 15 && strings.HasPrefix(base, comm)) {
				return f, true
			}
		}
	}
	return File{}, false
}
