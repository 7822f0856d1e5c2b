//go:build linux && arm64

package gcore

import (
	"debug/elf"

	"github.com/pyattach/pyattach/detect/core"
)

// The AArch64 core: struct user_pt_regs (x0-x30, sp, pc, pstate) in
// NT_PRSTATUS, struct user_fpsimd_state in NT_FPREGSET, and the thread
// pointer (NT_ARM_TLS) that gdb reads thread-local variables through.
const (
	supported = true
	machine   = elf.EM_AARCH64
	gregSize  = 34 * 8
)

var regSets = []regSet{
	{typ: core.NTPRFPReg, note: "CORE", size: 528, fp: true},
	{typ: core.NTARMTLS, note: "LINUX", size: 64, optional: true},
}
