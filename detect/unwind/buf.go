package unwind

import (
	"encoding/binary"
	"errors"

	"github.com/pyattach/pyattach/detect/formaterr"
)

// Errors, matched with errors.Is.
var (
	// ErrCorrupt is the Kind of the *formaterr.Error returned for bad
	// call frame information (.eh_frame, .eh_frame_hdr, .debug_frame)
	// or a bad DWARF expression in it.
	ErrCorrupt = errors.New("corrupt call frame information")
	// ErrNoFDE means no FDE covers a pc.
	ErrNoFDE = errors.New("no call frame information for pc")
	// ErrMemory means a stack read fell outside the captured bytes and
	// no other reader could serve it.
	ErrMemory = errors.New("memory not captured")
)

// corrupt returns an *formaterr.Error of kind ErrCorrupt.
func corrupt(section string, off int64, format string, args ...any) error {
	return formaterr.Newf(ErrCorrupt, "", section, off, format, args...)
}

// buf reads little- or big-endian values from b, bounds-checked: a read
// past the end sets err and returns zeros, and every later read fails
// too.
type buf struct {
	b    []byte
	off  int // position in b
	base int64
	bo   binary.ByteOrder
	sec  string
	err  error
}

func (r *buf) fail(format string, args ...any) {
	if r.err == nil {
		r.err = corrupt(r.sec, r.base+int64(r.off), format, args...)
	}
	r.off = len(r.b)
}

func (r *buf) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail("%d bytes past the end", n)
		return false
	}
	return true
}

func (r *buf) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *buf) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := r.bo.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *buf) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := r.bo.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *buf) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := r.bo.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *buf) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) || !r.need(int(n)) {
		r.fail("block of %d bytes past the end", n)
		return nil
	}
	v := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return v
}

// uleb reads an unsigned LEB128 number; bits past 64 are dropped.
func (r *buf) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v
		}
		if shift > 70 {
			r.fail("LEB128 number longer than 10 bytes")
			return 0
		}
	}
}

// sleb reads a signed LEB128 number.
func (r *buf) sleb() int64 {
	var v int64
	var shift uint
	for {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
		if shift > 70 {
			r.fail("LEB128 number longer than 10 bytes")
			return 0
		}
	}
}

// cstring reads a NUL-terminated string.
func (r *buf) cstring() string {
	if r.err != nil {
		return ""
	}
	for i := r.off; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.off:i])
			r.off = i + 1
			return s
		}
	}
	r.fail("unterminated string")
	return ""
}

// Pointer encodings (DW_EH_PE_*) of .eh_frame and .eh_frame_hdr.
const (
	peAbsptr   = 0x00
	peULEB128  = 0x01
	peUdata2   = 0x02
	peUdata4   = 0x03
	peUdata8   = 0x04
	peSLEB128  = 0x09
	peSdata2   = 0x0a
	peSdata4   = 0x0b
	peSdata8   = 0x0c
	pePCRel    = 0x10
	peTextRel  = 0x20
	peDataRel  = 0x30
	peFuncRel  = 0x40
	peAligned  = 0x50
	peIndirect = 0x80
	peOmit     = 0xff
)

// ptrCtx is what relative pointer encodings are relative to: the
// link-time address of b[0] (pcrel), the data base (.eh_frame_hdr's
// address in that section, the GOT's in .eh_frame), the text base, and
// a reader of the module's own bytes by address for indirect pointers.
type ptrCtx struct {
	addr     uint64
	dataBase uint64
	textBase uint64
	funcBase uint64
	ptrSize  int
	deref    func(addr uint64) (uint64, bool)
}

// ptr reads a pointer in encoding enc. An omitted one (0xff) is 0.
func (r *buf) ptr(enc uint8, c *ptrCtx) uint64 {
	if enc == peOmit {
		return 0
	}
	pos := c.addr + uint64(r.off)
	if enc&0x70 == peAligned {
		a := c.ptrSize
		if a <= 0 {
			a = 8
		}
		for (pos)%uint64(a) != 0 && r.err == nil {
			r.u8()
			pos++
		}
		enc = peAbsptr
	}
	var v uint64
	switch enc & 0x0f {
	case peAbsptr:
		if c.ptrSize == 4 {
			v = uint64(r.u32())
		} else {
			v = r.u64()
		}
	case peULEB128:
		v = r.uleb()
	case peUdata2:
		v = uint64(r.u16())
	case peUdata4:
		v = uint64(r.u32())
	case peUdata8:
		v = r.u64()
	case peSLEB128:
		v = uint64(r.sleb())
	case peSdata2:
		v = uint64(int64(int16(r.u16())))
	case peSdata4:
		v = uint64(int64(int32(r.u32())))
	case peSdata8:
		v = r.u64()
	default:
		r.fail("pointer encoding %#x", enc)
		return 0
	}
	if r.err != nil {
		return 0
	}
	switch enc & 0x70 {
	case 0:
	case pePCRel:
		v += pos
	case peTextRel:
		v += c.textBase
	case peDataRel:
		v += c.dataBase
	case peFuncRel:
		v += c.funcBase
	default:
		r.fail("pointer encoding %#x", enc)
		return 0
	}
	if c.ptrSize == 4 {
		v &= 0xffffffff
	}
	if enc&peIndirect != 0 {
		if c.deref == nil {
			r.fail("indirect pointer encoding %#x without memory", enc)
			return 0
		}
		w, ok := c.deref(v)
		if !ok {
			r.fail("indirect pointer %#x not readable", v)
			return 0
		}
		v = w
	}
	return v
}

// ptrSizeOK reports whether enc has a fixed or LEB128 size (the table of
// .eh_frame_hdr needs a fixed one: see fixedSize).
func fixedSize(enc uint8, ptrSize int) int {
	switch enc & 0x0f {
	case peAbsptr:
		return ptrSize
	case peUdata2, peSdata2:
		return 2
	case peUdata4, peSdata4:
		return 4
	case peUdata8, peSdata8:
		return 8
	}
	return 0
}
