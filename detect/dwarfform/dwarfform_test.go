package dwarfform

import (
	"errors"
	"testing"
)

// bytesReader reads little-endian values from a slice, counting what it
// consumed.
type bytesReader struct {
	b   []byte
	pos int
}

func (r *bytesReader) U8() uint64 { v := r.b[r.pos]; r.pos++; return uint64(v) }
func (r *bytesReader) Fixed(n int) uint64 {
	var v uint64
	for i := 0; i < n; i++ {
		v |= uint64(r.b[r.pos+i]) << (8 * i)
	}
	r.pos += n
	return v
}
func (r *bytesReader) ULEB() uint64 {
	var v uint64
	for shift := 0; ; shift += 7 {
		c := r.b[r.pos]
		r.pos++
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}
func (r *bytesReader) Skip(n uint64) { r.pos += int(n) }
func (r *bytesReader) CStr() string {
	start := r.pos
	for r.b[r.pos] != 0 {
		r.pos++
	}
	r.pos++
	return string(r.b[start : r.pos-1])
}

func TestSkipLengths(t *testing.T) {
	for _, tc := range []struct {
		name   string
		form   uint64
		data   []byte
		offsz  int
		ver    uint64
		length int
	}{
		{"addr", 0x01, make([]byte, 8), 4, 5, 8},
		{"block1", 0x0a, []byte{3, 1, 2, 3}, 4, 5, 4},
		{"block2", 0x03, []byte{2, 0, 9, 9}, 4, 5, 4},
		{"string", 0x08, []byte("abc\x00"), 4, 5, 4},
		{"udata", 0x0f, []byte{0x80, 0x01}, 4, 5, 2},
		{"strp 32-bit", 0x0e, make([]byte, 4), 4, 5, 4},
		{"strp 64-bit", 0x0e, make([]byte, 8), 8, 5, 8},
		{"line_strp", 0x1f, make([]byte, 4), 4, 5, 4},
		{"ref_addr v2 is address-sized", 0x10, make([]byte, 8), 4, 2, 8},
		{"ref_addr v4 is offset-sized", 0x10, make([]byte, 4), 4, 4, 4},
		{"flag_present", 0x19, nil, 4, 5, 0},
		{"implicit_const", ImplicitConst, nil, 4, 5, 0},
		{"strx3", 0x27, make([]byte, 3), 4, 5, 3},
		{"data16", 0x1e, make([]byte, 16), 4, 5, 16},
		{"indirect data2", 0x16, []byte{0x05, 0, 0}, 4, 5, 3},
	} {
		r := &bytesReader{b: tc.data}
		if err := Skip(r, tc.form, tc.offsz, 8, tc.ver); err != nil || r.pos != tc.length {
			t.Errorf("%s: skipped %d bytes, err %v; want %d", tc.name, r.pos, err, tc.length)
		}
	}
	for _, bad := range [][]byte{{0x16}, {0x21}} {
		r := &bytesReader{b: bad}
		if err := Skip(r, 0x16, 4, 8, 5); !errors.Is(err, ErrForm) {
			t.Errorf("indirect %#x: %v", bad[0], err)
		}
	}
	if err := Skip(&bytesReader{}, 0x7f, 4, 8, 5); !errors.Is(err, ErrForm) {
		t.Errorf("unknown form: %v", err)
	}
}
