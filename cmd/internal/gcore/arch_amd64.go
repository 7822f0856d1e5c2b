//go:build linux && amd64

package gcore

import (
	"debug/elf"

	"github.com/pyattach/pyattach/detect/core"
)

// The x86-64 core: struct user_regs_struct (27 registers) in
// NT_PRSTATUS, the FXSAVE area (512 bytes) in NT_FPREGSET and the XSAVE
// area in NT_X86_XSTATE, as the kernel's own core dumps hold them.
const (
	supported = true
	machine   = elf.EM_X86_64
	gregSize  = 27 * 8
)

var regSets = []regSet{
	{typ: core.NTPRFPReg, note: "CORE", size: 512, fp: true},
	{typ: core.NTX86XState, note: "LINUX", size: 64 << 10, fix: padXState},
}

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
