package dwarfform

import "testing"

func TestInitialLength(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     []byte
		length uint64
		offsz  int
		pos    int
	}{
		{"32-bit", []byte{0x10, 0, 0, 0, 0xaa}, 0x10, 4, 4},
		{"64-bit", []byte{0xff, 0xff, 0xff, 0xff, 0x20, 0, 0, 0, 0, 0, 0, 0, 0xaa}, 0x20, 8, 12},
		{"reserved", []byte{0xf0, 0xff, 0xff, 0xff, 0xaa}, 0xfffffff0, 0, 4},
		{"reserved, last", []byte{0xfe, 0xff, 0xff, 0xff}, 0xfffffffe, 0, 4},
	} {
		r := &bytesReader{b: tc.in}
		length, offsz := InitialLength(r)
		if length != tc.length || offsz != tc.offsz || r.pos != tc.pos {
			t.Errorf("%s: %#x, %d (read %d bytes); want %#x, %d (%d bytes)", tc.name, length, offsz, r.pos, tc.length, tc.offsz, tc.pos)
		}
	}
}
