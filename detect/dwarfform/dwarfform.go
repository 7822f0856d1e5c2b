// Package dwarfform knows how long each DWARF attribute form is, so that
// pyattach's small DWARF readers (the first DIE of a unit in elfinfo,
// unit and line-table headers in srcscan) can skip the values they do
// not need without decoding the whole DIE tree. It also reads the initial
// length that starts every unit and line table.
package dwarfform

import (
	"errors"
	"fmt"
)

// ErrForm means a form this package does not know, or a nested
// DW_FORM_indirect.
var ErrForm = errors.New("unknown or invalid DWARF form")

// ImplicitConst is DW_FORM_implicit_const: its value lives in the
// abbreviation, not in the DIE.
const ImplicitConst = 0x21

// Reader is what skipping a value needs from a reader (CStr's string is
// dropped). Readers record their first error themselves (a short read)
// and report it later.
type Reader interface {
	U8() uint64
	Fixed(n int) uint64
	ULEB() uint64
	Skip(n uint64)
	CStr() string
}

// InitialLength reads the initial length of a unit or line table: the
// length and the offset size of what follows, 4, or 8 in the 64-bit
// format (0xffffffff, then an 8-byte length). A reserved value
// (0xfffffff0 to 0xfffffffe) returns offset size 0 and the value as
// length.
func InitialLength(r Reader) (length uint64, offsz int) {
	length = r.Fixed(4)
	switch {
	case length == 0xffffffff:
		return r.Fixed(8), 8
	case length >= 0xfffffff0:
		return length, 0
	}
	return length, 4
}

// Skip skips one attribute value of form. offsz is the unit's offset
// size (4 or 8), addrsz its address size, version its DWARF version.
func Skip(r Reader, form uint64, offsz int, addrsz, version uint64) error {
	switch form {
	case 0x01: // addr
		r.Skip(addrsz)
	case 0x03: // block2
		r.Skip(r.Fixed(2))
	case 0x04: // block4
		r.Skip(r.Fixed(4))
	case 0x05, 0x12, 0x26, 0x2a: // data2, ref2, strx2, addrx2
		r.Skip(2)
	case 0x06, 0x13, 0x1c, 0x28, 0x2c: // data4, ref4, ref_sup4, strx4, addrx4
		r.Skip(4)
	case 0x07, 0x14, 0x20, 0x24: // data8, ref8, ref_sig8, ref_sup8
		r.Skip(8)
	case 0x1e: // data16
		r.Skip(16)
	case 0x08: // string
		r.CStr()
	case 0x09, 0x18: // block, exprloc
		r.Skip(r.ULEB())
	case 0x0a: // block1
		r.Skip(r.U8())
	case 0x0b, 0x0c, 0x11, 0x25, 0x29: // data1, flag, ref1, strx1, addrx1
		r.Skip(1)
	case 0x0d, 0x0f, 0x15, 0x1a, 0x1b, 0x22, 0x23, 0x1f02, 0x1f03: // sdata, udata, ref_udata, strx, addrx, loclistx, rnglistx, GNU_addr_index, GNU_str_index
		r.ULEB()
	case 0x0e, 0x17, 0x1d, 0x1f, 0x1f20, 0x1f21: // strp, sec_offset, strp_sup, line_strp, GNU_ref_alt, GNU_strp_alt
		r.Skip(uint64(offsz))
	case 0x10: // ref_addr: address-sized in DWARF 2
		if version == 2 {
			r.Skip(addrsz)
		} else {
			r.Skip(uint64(offsz))
		}
	case 0x19, ImplicitConst: // flag_present; implicit_const lives in the abbreviation
	case 0x27, 0x2b: // strx3, addrx3
		r.Skip(3)
	case 0x16: // indirect
		f := r.ULEB()
		if f == 0x16 || f == ImplicitConst {
			return fmt.Errorf("%w: DW_FORM_indirect naming %#x", ErrForm, f)
		}
		return Skip(r, f, offsz, addrsz, version)
	default:
		return fmt.Errorf("%w %#x", ErrForm, form)
	}
	return nil
}
