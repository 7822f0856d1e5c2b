package unwind

import (
	"encoding/binary"
	"sort"
)

// Bounds on what one module's call frame information may make the
// parser do.
const (
	// maxFDEs bounds the FDEs indexed by a linear scan of a section
	// without a search table.
	maxFDEs = 1 << 20
	// maxStateStack bounds DW_CFA_remember_state nesting.
	maxStateStack = 64
	// maxCIEs bounds the CIEs kept parsed per section.
	maxCIEs = 1 << 16
)

// cie is a Common Information Entry.
type cie struct {
	version   uint8
	aug       string
	codeAlign uint64
	dataAlign int64
	raReg     uint64
	fdeEnc    uint8
	lsdaEnc   uint8
	signal    bool // 'S': the frames it describes are signal trampolines
	z         bool // the FDEs carry augmentation data
	addrSize  int
	bo        binary.ByteOrder
	init      []byte // initial instructions
}

// fde is a Frame Description Entry: the code [lo, hi) (link-time
// addresses) and its instructions.
type fde struct {
	cie    *cie
	lo, hi uint64
	insns  []byte
}

// cfiSection is a .eh_frame or .debug_frame section's bytes, data[0] at
// link-time address addr (0 for .debug_frame, which is not loaded).
type cfiSection struct {
	name     string
	data     []byte
	addr     uint64
	eh       bool
	bo       binary.ByteOrder
	ptrSize  int
	dataBase uint64 // DW_EH_PE_datarel base of .eh_frame (the GOT)
	deref    func(uint64) (uint64, bool)
	cies     map[int]*cie
	// index is the FDEs by lo, built by a scan when no search table
	// serves the section.
	index    []fdeRef
	indexErr error
	indexed  bool
}

// fdeRef is where an FDE is: its lo, hi and offset in the section.
type fdeRef struct {
	lo, hi uint64
	off    int
}

func (s *cfiSection) ctx(off int) *ptrCtx {
	return &ptrCtx{addr: s.addr + uint64(off), dataBase: s.dataBase, ptrSize: s.ptrSize, deref: s.deref}
}

// entry is one CIE or FDE's framing: its body (after the id), whether it
// is a CIE, the offset of the CIE it points to (an FDE), and the offset
// of the entry after it. end is true at a zero terminator.
type entry struct {
	body   buf
	isCIE  bool
	cieOff int
	next   int
	end    bool
}

func (s *cfiSection) entryAt(off int) (entry, error) {
	if off < 0 || off >= len(s.data) {
		return entry{}, corrupt(s.name, int64(off), "entry offset outside the section")
	}
	r := buf{b: s.data, off: off, bo: s.bo, sec: s.name}
	length := uint64(r.u32())
	wide := false
	if length == 0xffffffff {
		length = r.u64()
		wide = true
	}
	if r.err != nil {
		return entry{}, r.err
	}
	if length == 0 {
		if s.eh {
			return entry{end: true, next: r.off}, nil
		}
		return entry{}, corrupt(s.name, int64(off), "entry of length 0")
	}
	if length > uint64(len(s.data)-r.off) {
		return entry{}, corrupt(s.name, int64(off), "entry of %d bytes past the section's end", length)
	}
	start := r.off
	end := start + int(length)
	body := buf{b: s.data[:end], off: start, bo: s.bo, sec: s.name}
	e := entry{next: end}
	idPos := body.off
	var id uint64
	if wide && !s.eh {
		id = body.u64()
	} else {
		id = uint64(body.u32())
	}
	if body.err != nil {
		return entry{}, body.err
	}
	if s.eh {
		e.isCIE = id == 0
		if !e.isCIE {
			if id > uint64(idPos) {
				return entry{}, corrupt(s.name, int64(off), "CIE pointer %#x before the section's start", id)
			}
			e.cieOff = idPos - int(id)
		}
	} else {
		e.isCIE = id == 0xffffffff || wide && id == ^uint64(0)
		if !e.isCIE {
			if id >= uint64(len(s.data)) {
				return entry{}, corrupt(s.name, int64(off), "CIE pointer %#x outside the section", id)
			}
			e.cieOff = int(id)
		}
	}
	e.body = body
	return e, nil
}

// cieAt parses (once) the CIE at off.
func (s *cfiSection) cieAt(off int) (*cie, error) {
	if c, ok := s.cies[off]; ok {
		return c, nil
	}
	e, err := s.entryAt(off)
	if err != nil {
		return nil, err
	}
	if e.end || !e.isCIE {
		return nil, corrupt(s.name, int64(off), "FDE's CIE pointer names no CIE")
	}
	r := &e.body
	c := &cie{addrSize: s.ptrSize, bo: s.bo, fdeEnc: peAbsptr, lsdaEnc: peOmit}
	c.version = r.u8()
	switch c.version {
	case 1, 3, 4:
	default:
		if r.err == nil {
			return nil, corrupt(s.name, int64(off), "CIE version %d", c.version)
		}
	}
	c.aug = r.cstring()
	if len(c.aug) >= 2 && c.aug[:2] == "eh" {
		r.bytes(uint64(s.ptrSize)) // the old GNU eh_data pointer
	}
	if c.version == 4 {
		c.addrSize = int(r.u8())
		if seg := r.u8(); seg != 0 && r.err == nil {
			return nil, corrupt(s.name, int64(off), "segment selectors of %d bytes", seg)
		}
		if c.addrSize != 4 && c.addrSize != 8 && r.err == nil {
			return nil, corrupt(s.name, int64(off), "address size %d", c.addrSize)
		}
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if c.version == 1 {
		c.raReg = uint64(r.u8())
	} else {
		c.raReg = r.uleb()
	}
	if len(c.aug) > 0 && c.aug[0] == 'z' {
		c.z = true
		n := r.uleb()
		data := r.bytes(n)
		if r.err != nil {
			return nil, r.err
		}
		a := buf{b: data, bo: s.bo, sec: s.name, base: int64(off)}
		actx := s.ctx(r.off - len(data))
	aug:
		for _, ch := range c.aug[1:] {
			switch ch {
			case 'L':
				c.lsdaEnc = a.u8()
			case 'P':
				enc := a.u8()
				// The personality routine is not needed: skip its pointer
				// without reading through an indirect one.
				pc := *actx
				pc.deref = func(uint64) (uint64, bool) { return 0, true }
				a.ptr(enc, &pc)
			case 'R':
				c.fdeEnc = a.u8()
			case 'S':
				c.signal = true
			case 'B', 'G':
				// AArch64 pointer authentication key B, memory tagging.
			default:
				break aug // the rest is skipped by its length
			}
		}
		if a.err != nil {
			return nil, a.err
		}
	} else if c.aug != "" && c.aug != "eh" {
		return nil, corrupt(s.name, int64(off), "CIE augmentation %q not understood", c.aug)
	}
	if r.err != nil {
		return nil, r.err
	}
	if c.codeAlign == 0 {
		return nil, corrupt(s.name, int64(off), "code alignment factor 0")
	}
	c.init = r.b[r.off:len(r.b):len(r.b)]
	if len(s.cies) < maxCIEs {
		s.cies[off] = c
	}
	return c, nil
}

// fdeAt parses the FDE at off.
func (s *cfiSection) fdeAt(off int) (*fde, error) {
	e, err := s.entryAt(off)
	if err != nil {
		return nil, err
	}
	if e.end || e.isCIE {
		return nil, corrupt(s.name, int64(off), "no FDE at this offset")
	}
	return s.fdeOf(off, e)
}

func (s *cfiSection) fdeOf(off int, e entry) (*fde, error) {
	c, err := s.cieAt(e.cieOff)
	if err != nil {
		return nil, err
	}
	r := &e.body
	ctx := s.ctx(0)
	ctx.addr = s.addr
	enc := c.fdeEnc
	if !s.eh {
		enc = peAbsptr
		ctx.ptrSize = c.addrSize
	}
	f := &fde{cie: c}
	f.lo = r.ptr(enc, ctx)
	rng := r.ptr(enc&0x0f, ctx)
	if c.z {
		n := r.uleb()
		r.bytes(n)
	}
	if r.err != nil {
		return nil, r.err
	}
	f.hi = f.lo + rng
	if f.hi < f.lo {
		return nil, corrupt(s.name, int64(off), "FDE range wraps")
	}
	f.insns = r.b[r.off:len(r.b):len(r.b)]
	return f, nil
}

// scan indexes every FDE of the section (once), sorted by lo.
func (s *cfiSection) scan() error {
	if s.indexed {
		return s.indexErr
	}
	s.indexed = true
	for off := 0; off < len(s.data); {
		e, err := s.entryAt(off)
		if err != nil {
			s.indexErr = err
			break
		}
		if e.end {
			if s.eh {
				break
			}
		} else if !e.isCIE {
			f, err := s.fdeOf(off, e)
			// A bad FDE is skipped: the others still serve.
			if err == nil && f.hi > f.lo {
				if len(s.index) >= maxFDEs {
					s.indexErr = corrupt(s.name, int64(off), "more than %d FDEs", maxFDEs)
					break
				}
				s.index = append(s.index, fdeRef{lo: f.lo, hi: f.hi, off: off})
			}
		}
		off = e.next
	}
	sort.SliceStable(s.index, func(i, j int) bool { return s.index[i].lo < s.index[j].lo })
	return s.indexErr
}

// find is the FDE covering addr by a scan's index; nil when none does.
func (s *cfiSection) find(addr uint64) (*fde, error) {
	err := s.scan()
	i := sort.Search(len(s.index), func(i int) bool { return s.index[i].lo > addr })
	// FDEs may nest or overlap (rare): look back over those that start
	// before addr for one whose range holds it, a few at most.
	for j := i - 1; j >= 0 && j >= i-8; j-- {
		ref := s.index[j]
		if addr >= ref.lo && addr < ref.hi {
			return s.fdeAt(ref.off)
		}
	}
	if err != nil {
		return nil, err
	}
	return nil, nil
}

// ehHdr is a parsed .eh_frame_hdr: its binary search table.
type ehHdr struct {
	data      []byte
	addr      uint64
	bo        binary.ByteOrder
	ptrSize   int
	ehPtr     uint64 // link-time address of .eh_frame
	count     int
	tableOff  int
	tableEnc  uint8
	entrySize int
}

// parseEhHdr parses .eh_frame_hdr (data at link-time address addr).
func parseEhHdr(data []byte, addr uint64, bo binary.ByteOrder, ptrSize int) (*ehHdr, error) {
	r := buf{b: data, bo: bo, sec: ".eh_frame_hdr"}
	h := &ehHdr{data: data, addr: addr, bo: bo, ptrSize: ptrSize}
	if v := r.u8(); v != 1 && r.err == nil {
		return nil, corrupt(".eh_frame_hdr", 0, "version %d", v)
	}
	ehEnc := r.u8()
	countEnc := r.u8()
	h.tableEnc = r.u8()
	ctx := &ptrCtx{addr: addr, dataBase: addr, ptrSize: ptrSize}
	h.ehPtr = r.ptr(ehEnc, ctx)
	if countEnc == peOmit || h.tableEnc == peOmit {
		// No table: only the .eh_frame pointer is of use.
		return h, r.err
	}
	n := r.ptr(countEnc, ctx)
	if r.err != nil {
		return nil, r.err
	}
	h.entrySize = 2 * fixedSize(h.tableEnc, ptrSize)
	if h.entrySize == 0 {
		return nil, corrupt(".eh_frame_hdr", int64(r.off), "table encoding %#x has no fixed size", h.tableEnc)
	}
	h.tableOff = r.off
	if room := uint64(len(data)-r.off) / uint64(h.entrySize); n > room {
		return nil, corrupt(".eh_frame_hdr", int64(r.off), "%d table entries, room for %d", n, room)
	}
	h.count = int(n)
	return h, nil
}

// entry returns table entry i: the initial location and the FDE's
// address.
func (h *ehHdr) entry(i int) (loc, fdeAddr uint64, err error) {
	r := buf{b: h.data, off: h.tableOff + i*h.entrySize, bo: h.bo, sec: ".eh_frame_hdr"}
	ctx := &ptrCtx{addr: h.addr, dataBase: h.addr, ptrSize: h.ptrSize}
	loc = r.ptr(h.tableEnc, ctx)
	fdeAddr = r.ptr(h.tableEnc, ctx)
	return loc, fdeAddr, r.err
}

// lookup returns the address of the FDE whose initial location is the
// last at or before addr; ok false when none is.
func (h *ehHdr) lookup(addr uint64) (fdeAddr uint64, ok bool, err error) {
	lo, hi := 0, h.count
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		loc, _, err := h.entry(m)
		if err != nil {
			return 0, false, err
		}
		if loc > addr {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == 0 {
		return 0, false, nil
	}
	_, fa, err := h.entry(lo - 1)
	return fa, err == nil, err
}
