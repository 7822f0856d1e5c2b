package nativesym

import (
	"encoding/binary"
	"sort"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// arange is one address range of .debug_aranges: [lo, hi) belongs to
// the compilation unit at unit in .debug_info.
type arange struct {
	lo, hi uint64
	unit   uint64
}

// maxAranges bounds the ranges kept of one file.
const maxAranges = 1 << 20

// parseAranges reads a .debug_aranges section (DWARF 2 to 5, 32- and
// 64-bit units, 4- or 8-byte addresses) into ranges sorted by lo. Empty
// ranges are dropped. A unit it cannot read ends the parse with a
// *elfinfo.FormatError; the ranges read before it are returned too.
func parseAranges(b []byte, bo binary.ByteOrder) ([]arange, error) {
	var out []arange
	corrupt := func(off int, msg string) ([]arange, error) {
		sortAranges(out)
		return out, elfinfo.Corruptf(".debug_aranges", int64(off), "%s", msg)
	}
	off := 0
	for off < len(b) {
		start := off
		if len(b)-off < 4 {
			return corrupt(start, "truncated unit length")
		}
		length := uint64(bo.Uint32(b[off:]))
		off += 4
		dwarf64 := false
		if length == 0xffffffff {
			if len(b)-off < 8 {
				return corrupt(start, "truncated unit length")
			}
			length = bo.Uint64(b[off:])
			off += 8
			dwarf64 = true
		} else if length >= 0xfffffff0 {
			return corrupt(start, "reserved unit length")
		}
		if length > uint64(len(b)-off) {
			return corrupt(start, "unit longer than the section")
		}
		end := off + int(length)
		u := b[off:end]
		// version, debug_info offset, address size, segment selector size
		hdr := 2 + 4 + 1 + 1
		if dwarf64 {
			hdr += 4
		}
		if len(u) < hdr {
			return corrupt(start, "truncated unit header")
		}
		version := bo.Uint16(u)
		if version < 2 || version > 5 {
			return corrupt(start, "unknown version")
		}
		var unit uint64
		p := 2
		if dwarf64 {
			unit = bo.Uint64(u[p:])
			p += 8
		} else {
			unit = uint64(bo.Uint32(u[p:]))
			p += 4
		}
		asize, ssize := int(u[p]), int(u[p+1])
		p += 2
		if asize != 4 && asize != 8 || ssize != 0 {
			return corrupt(start, "unsupported address or segment size")
		}
		// Tuples start at a multiple of twice the address size from the
		// unit's start.
		if r := (p + (end - len(u) - start)) % (2 * asize); r != 0 {
			p += 2*asize - r
		}
		for p+2*asize <= len(u) {
			var lo, n uint64
			if asize == 8 {
				lo, n = bo.Uint64(u[p:]), bo.Uint64(u[p+8:])
			} else {
				lo, n = uint64(bo.Uint32(u[p:])), uint64(bo.Uint32(u[p+4:]))
			}
			p += 2 * asize
			if lo == 0 && n == 0 {
				break
			}
			if n == 0 || lo+n < lo {
				continue
			}
			if len(out) >= maxAranges {
				return corrupt(start, "too many ranges")
			}
			out = append(out, arange{lo: lo, hi: lo + n, unit: unit})
		}
		off = end
	}
	sortAranges(out)
	return out, nil
}

func sortAranges(a []arange) {
	sort.Slice(a, func(i, j int) bool { return a[i].lo < a[j].lo })
}

// findArange returns the unit of the range holding addr in a (sorted by
// lo; ranges may overlap, the one starting last wins).
func findArange(a []arange, addr uint64) (uint64, bool) {
	i := sort.Search(len(a), func(i int) bool { return a[i].lo > addr }) - 1
	// Overlapping ranges: look back a few.
	for k := 0; i >= 0 && k < 16; i, k = i-1, k+1 {
		if addr < a[i].hi {
			return a[i].unit, true
		}
	}
	return 0, false
}
