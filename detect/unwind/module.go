package unwind

import (
	"bytes"
	"debug/elf"
	"errors"
	"io"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/nativesym"
)

// maxCFISection bounds the bytes of one .eh_frame, .eh_frame_hdr or
// .debug_frame read: a larger one is not read.
const maxCFISection = 256 << 20

// exactRead is the largest section read into a buffer of the size the
// file claims; a larger one grows as its bytes come.
const exactRead = 16 << 20

// module is the call frame information of one mapped file, read once.
type module struct {
	closers []io.Closer
	obj     *elf.File
	loads   []*elf.Prog
	arch    Arch
	hdr     *ehHdr
	eh      *cfiSection
	// debug is .debug_frame (the module's, else its debug file's),
	// read the first time no .eh_frame FDE covers a pc.
	debug     *cfiSection
	debugDone bool
	region    nativesym.Region
	err       error // why the module has no tables
	// rows caches the row found for a link-time address (nil row: no
	// FDE covers it), up to maxCachedRows.
	rows map[uint64]cachedRow
}

// maxCachedRows bounds the rows one module caches (about 1.6 KB each):
// real stacks return to few distinct addresses; a hostile one cannot
// make the cache grow past a few MB per module.
const maxCachedRows = 1 << 12

// cachedRow is what rowAt found for an address.
type cachedRow struct {
	r      *row
	raReg  uint64
	signal bool
	err    error
}

// rowAt is the row for link-time address addr, its CIE's return address
// column and signal flag; a nil row when no FDE covers addr (err says
// why when the tables are bad).
func (m *module) rowAt(files nativesym.Files, addr uint64) cachedRow {
	if c, ok := m.rows[addr]; ok {
		return c
	}
	var c cachedRow
	f, sec, err := m.find(files, addr)
	switch {
	case f != nil:
		r, err := execute(sec.name, f, addr)
		if err != nil {
			c.err = err
		} else {
			c = cachedRow{r: &r, raReg: f.cie.raReg, signal: f.cie.signal}
		}
	default:
		c.err = err
	}
	if m.rows == nil {
		m.rows = map[uint64]cachedRow{}
	}
	if len(m.rows) < maxCachedRows {
		m.rows[addr] = c
	}
	return c
}

func (m *module) close() error {
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// loadModule opens the file r maps and reads its .eh_frame_hdr and
// .eh_frame (by section, else by PT_GNU_EH_FRAME).
func loadModule(files nativesym.Files, r nativesym.Region) *module {
	f, err := files.Open(r)
	if err != nil || f == nil {
		return &module{region: r, err: errors.Join(errors.New("module not readable"), err)}
	}
	m := readModule(f, r)
	m.closers = append(m.closers, f)
	return m
}

// readModule reads the module r maps from f.
func readModule(f io.ReaderAt, r nativesym.Region) *module {
	m := &module{region: r}
	obj, err := elfinfo.NewFile(f)
	if err != nil {
		m.err = err
		return m
	}
	m.obj = obj
	m.arch = ArchOf(obj.Machine)
	for _, p := range obj.Progs {
		if p.Type == elf.PT_LOAD {
			m.loads = append(m.loads, p)
		}
	}
	ptrSize := 8
	if obj.Class == elf.ELFCLASS32 {
		ptrSize = 4
	}
	var hdrData []byte
	var hdrAddr uint64
	if s := obj.Section(".eh_frame_hdr"); s != nil && s.Type != elf.SHT_NOBITS {
		hdrData, _ = readSection(s)
		hdrAddr = s.Addr
	} else {
		for _, p := range obj.Progs {
			if p.Type == elf.PT_GNU_EH_FRAME {
				hdrData, _ = readAt(p, 0, p.Filesz)
				hdrAddr = p.Vaddr
			}
		}
	}
	if hdrData != nil {
		if h, err := parseEhHdr(hdrData, hdrAddr, obj.ByteOrder, ptrSize); err == nil {
			m.hdr = h
		} else {
			m.err = err
		}
	}
	eh := &cfiSection{name: ".eh_frame", eh: true, bo: obj.ByteOrder, ptrSize: ptrSize, cies: map[int]*cie{}, deref: m.deref}
	if s := obj.Section(".got"); s != nil {
		eh.dataBase = s.Addr
	}
	if s := obj.Section(".eh_frame"); s != nil && s.Type != elf.SHT_NOBITS {
		eh.data, err = readSection(s)
		eh.addr = s.Addr
		if err != nil {
			m.err = err
		}
	} else if m.hdr != nil && m.hdr.ehPtr != 0 {
		// No section headers: .eh_frame runs from where the header says
		// to the end of the segment holding it.
		for _, p := range m.loads {
			if m.hdr.ehPtr >= p.Vaddr && m.hdr.ehPtr-p.Vaddr < p.Filesz {
				eh.data, _ = readAt(p, m.hdr.ehPtr-p.Vaddr, p.Filesz-(m.hdr.ehPtr-p.Vaddr))
				eh.addr = m.hdr.ehPtr
			}
		}
	}
	if eh.data != nil {
		m.eh = eh
	}
	return m
}

func readSection(s *elf.Section) (b []byte, err error) {
	if s.Size > maxCFISection {
		return nil, corrupt(s.Name, -1, "section of %d bytes is larger than %d", s.Size, maxCFISection)
	}
	defer elfinfo.RecoverCorrupt(&err, s.Name)
	if s.Flags&elf.SHF_COMPRESSED == 0 && s.Size <= exactRead {
		// Read at once: the size is bounded, and a file shorter than
		// it claims fails the read.
		b := make([]byte, s.Size)
		if _, err := s.ReadAt(b, 0); err != nil {
			return nil, corrupt(s.Name, -1, "%w", err)
		}
		return b, nil
	}
	var w bytes.Buffer
	if _, err := w.ReadFrom(io.LimitReader(s.Open(), maxCFISection+1)); err != nil {
		return nil, corrupt(s.Name, -1, "%w", err)
	}
	if w.Len() > maxCFISection {
		return nil, corrupt(s.Name, -1, "section larger than %d bytes", maxCFISection)
	}
	return w.Bytes(), nil
}

// readAt reads n bytes of segment p from off.
func readAt(p *elf.Prog, off, n uint64) ([]byte, error) {
	if n > maxCFISection {
		n = maxCFISection
	}
	var w bytes.Buffer
	k, err := w.ReadFrom(io.NewSectionReader(p, int64(off), int64(n)))
	if err != nil || uint64(k) != n {
		return nil, corrupt("segment", int64(p.Off+off), "%d of %d bytes read: %v", k, n, err)
	}
	return w.Bytes(), nil
}

// deref reads a pointer of the module's own bytes at link-time address
// addr (an indirect pointer encoding).
func (m *module) deref(addr uint64) (uint64, bool) {
	for _, p := range m.loads {
		if addr >= p.Vaddr && addr-p.Vaddr+8 <= p.Filesz {
			var b [8]byte
			if _, err := p.ReadAt(b[:], int64(addr-p.Vaddr)); err != nil {
				return 0, false
			}
			return m.obj.ByteOrder.Uint64(b[:]), true
		}
	}
	return 0, false
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

// find returns the FDE covering link-time address addr and the section
// holding it: .eh_frame by its search table (else a scan), then
// .debug_frame. nil when none does.
func (m *module) find(files nativesym.Files, addr uint64) (*fde, *cfiSection, error) {
	var errs []error
	if m.eh != nil {
		var f *fde
		var err error
		if m.hdr != nil && m.hdr.count > 0 {
			fa, ok, e := m.hdr.lookup(addr)
			err = e
			if ok && fa >= m.eh.addr && fa-m.eh.addr < uint64(len(m.eh.data)) {
				f, err = m.eh.fdeAt(int(fa - m.eh.addr))
				if f != nil && (addr < f.lo || addr >= f.hi) {
					f = nil
				}
			}
		} else {
			f, err = m.eh.find(addr)
		}
		if f != nil {
			return f, m.eh, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if d := m.debugFrame(files); d != nil {
		f, err := d.find(addr)
		if f != nil {
			return f, d, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return nil, nil, errors.Join(errs...)
}

// debugFrame reads .debug_frame, the module's or its separate debug
// file's, once.
func (m *module) debugFrame(files nativesym.Files) *cfiSection {
	if m.debugDone {
		return m.debug
	}
	m.debugDone = true
	if files == nil {
		return nil
	}
	obj := m.obj
	s := obj.Section(".debug_frame")
	if s == nil || s.Type == elf.SHT_NOBITS {
		d, err := files.OpenDebug(m.region)
		if err != nil || d == nil {
			return nil
		}
		m.closers = append(m.closers, d)
		de, err := elfinfo.NewFile(d)
		if err != nil {
			return nil
		}
		if s = de.Section(".debug_frame"); s == nil || s.Type == elf.SHT_NOBITS {
			return nil
		}
	}
	data, err := readSection(s)
	if err != nil {
		return nil
	}
	ptrSize := 8
	if obj.Class == elf.ELFCLASS32 {
		ptrSize = 4
	}
	m.debug = &cfiSection{name: ".debug_frame", data: data, bo: obj.ByteOrder, ptrSize: ptrSize, cies: map[int]*cie{}}
	return m.debug
}
