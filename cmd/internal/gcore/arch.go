package gcore

import (
	"debug/elf"
	"runtime"

	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/unwind"
)

// arch is what a core of one architecture holds: its ELF machine, the
// size of the general registers in NT_PRSTATUS, and the register sets
// read beside them.
type arch struct {
	machine  elf.Machine
	gregSize int
	regSets  []regSet
}

// arches are the architectures Take writes cores of, by GOARCH:
//   - amd64: struct user_regs_struct (27 registers) in NT_PRSTATUS, the
//     FXSAVE area (512 bytes) in NT_FPREGSET and the XSAVE area in
//     NT_X86_XSTATE, as the kernel's own core dumps hold them;
//   - arm64: struct user_pt_regs (x0-x30, sp, pc, pstate) in
//     NT_PRSTATUS, struct user_fpsimd_state in NT_FPREGSET, and the
//     thread pointer (NT_ARM_TLS) that gdb reads thread-local variables
//     through.
var arches = map[string]arch{
	"amd64": {machine: elf.EM_X86_64, gregSize: unwind.PRStatusSize(unwind.AMD64), regSets: []regSet{
		{typ: core.NTPRFPReg, note: "CORE", size: 512, fp: true},
		{typ: core.NTX86XState, note: "LINUX", size: 64 << 10, fix: padXState},
	}},
	"arm64": {machine: elf.EM_AARCH64, gregSize: unwind.PRStatusSize(unwind.ARM64), regSets: []regSet{
		{typ: core.NTPRFPReg, note: "CORE", size: 528, fp: true},
		{typ: core.NTARMTLS, note: "LINUX", size: 64, optional: true},
	}},
}

// host is the running architecture; supported is false where Take
// cannot write a core (not Linux, or another architecture: Take returns
// ErrUnsupported), and host the zero arch then.
var host, supported = func() (arch, bool) {
	a, ok := arches[runtime.GOARCH]
	if !ok || runtime.GOOS != "linux" {
		return arch{}, false
	}
	return a, true
}()
