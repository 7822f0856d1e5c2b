package gcore

// xstateComponents are the standard (non-compacted) offset and size in
// the XSAVE area of each state component past SSE, by XCR0 bit: AVX,
// MPX BNDREGS and BNDCSR, AVX-512 opmask, ZMM_Hi256 and Hi16_ZMM, PKRU.
var xstateComponents = map[uint]struct{ off, size int }{
	2: {576, 256}, 3: {960, 64}, 4: {1024, 64}, 5: {1088, 64}, 6: {1152, 512}, 7: {1664, 1024}, 9: {2688, 8},
}

// padXState pads the XSAVE area to the size its XCR0 (saved at byte 464,
// in the software-reserved bytes) implies in the standard layout: the
// size gdb checks NT_X86_XSTATE against (it warns "Section .reg-xstate
// in core file too small" and drops the set otherwise). Some kernels
// return less than that.
func padXState(b []byte) []byte {
	if len(b) < 472 {
		return b
	}
	xcr0 := le.Uint64(b[464:])
	want := 576
	for bit, c := range xstateComponents {
		if xcr0&(1<<bit) != 0 {
			want = max(want, c.off+c.size)
		}
	}
	if len(b) < want {
		b = append(b, make([]byte, want-len(b))...)
	}
	return b
}
