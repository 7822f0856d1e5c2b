package unwind

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"runtime"
)

// Arch is an architecture the unwinder knows.
type Arch uint8

const (
	// AMD64 is x86-64: DWARF registers 0-16 are rax, rdx, rcx, rbx,
	// rsi, rdi, rbp, rsp, r8-r15 and the return address (rip).
	AMD64 Arch = iota + 1
	// ARM64 is AArch64: DWARF registers 0-30 are x0-x30 (x29 the frame
	// pointer, x30 the link register), 31 sp, 32 pc.
	ARM64
)

// NumRegs is how many DWARF registers a Regs holds: the general
// registers, the stack pointer and the pc of either architecture.
const NumRegs = 33

// DWARF register numbers of x86-64 and AArch64.
const (
	AMD64RAX = 0
	AMD64RDX = 1
	AMD64RCX = 2
	AMD64RBX = 3
	AMD64RSI = 4
	AMD64RDI = 5
	AMD64RBP = 6
	AMD64RSP = 7
	AMD64R8  = 8
	AMD64R15 = 15
	AMD64RIP = 16

	ARM64FP = 29
	ARM64LR = 30
	ARM64SP = 31
	ARM64PC = 32
)

// HostArch is the running program's architecture, 0 if neither.
func HostArch() Arch {
	switch runtime.GOARCH {
	case "amd64":
		return AMD64
	case "arm64":
		return ARM64
	}
	return 0
}

// ArchOf is the Arch of an ELF machine, 0 if neither.
func ArchOf(m elf.Machine) Arch {
	switch m {
	case elf.EM_X86_64:
		return AMD64
	case elf.EM_AARCH64:
		return ARM64
	}
	return 0
}

func (a Arch) String() string {
	switch a {
	case AMD64:
		return "x86-64"
	case ARM64:
		return "aarch64"
	}
	return fmt.Sprintf("arch(%d)", uint8(a))
}

func (a Arch) byteOrder() binary.ByteOrder { return binary.LittleEndian }

// pcReg, spReg, fpReg are the DWARF numbers of the pc, the stack pointer
// and the frame pointer; raReg the return address column's default.
func (a Arch) pcReg() uint64 {
	if a == ARM64 {
		return ARM64PC
	}
	return AMD64RIP
}

func (a Arch) spReg() uint64 {
	if a == ARM64 {
		return ARM64SP
	}
	return AMD64RSP
}

func (a Arch) fpReg() uint64 {
	if a == ARM64 {
		return ARM64FP
	}
	return AMD64RBP
}

// calleeSaved reports the registers a call preserves: in a caller's
// frame without a rule they keep the callee's value; the others are
// unknown there.
func (a Arch) calleeSaved(reg uint64) bool {
	switch a {
	case AMD64:
		switch reg {
		case AMD64RBX, AMD64RBP, AMD64RSP, 12, 13, 14, 15:
			return true
		}
	case ARM64:
		return reg >= 19 && reg <= 29 || reg == ARM64SP
	}
	return false
}

// Regs is a thread's registers by DWARF number; Valid has bit i set
// when R[i] is known.
type Regs struct {
	Arch  Arch
	R     [NumRegs]uint64
	Valid uint64
}

// Set sets register reg (a DWARF number below NumRegs) to v.
func (r *Regs) Set(reg uint64, v uint64) {
	if reg < NumRegs {
		r.R[reg] = v
		r.Valid |= 1 << reg
	}
}

// get is register reg and whether it is known.
func (r *Regs) get(reg uint64) (uint64, bool) {
	if r == nil || reg >= NumRegs || r.Valid&(1<<reg) == 0 {
		return 0, false
	}
	return r.R[reg], true
}

// PC is the pc, SP the stack pointer (0 when unknown).
func (r *Regs) PC() uint64 { v, _ := r.get(r.Arch.pcReg()); return v }

// SP is the stack pointer (0 when unknown).
func (r *Regs) SP() uint64 { v, _ := r.get(r.Arch.spReg()); return v }

// RegisterError is an unknown register a rule needs.
type RegisterError struct{ Reg uint64 }

func (e *RegisterError) Error() string {
	return fmt.Sprintf("register %d not known in this frame", e.Reg)
}

// PRStatusSize is the size of the general registers of arch as
// PTRACE_GETREGSET NT_PRSTATUS returns them (struct user_regs_struct,
// struct user_pt_regs), 0 for an unknown arch.
func PRStatusSize(arch Arch) int {
	switch arch {
	case AMD64:
		return 27 * 8
	case ARM64:
		return 34 * 8
	}
	return 0
}

// amd64Order is struct user_regs_struct's order of the registers Regs
// holds, as DWARF numbers (-1: not held).
var amd64Order = [...]int{
	15, 14, 13, 12, AMD64RBP, AMD64RBX, 11, 10, 9, 8, AMD64RAX, AMD64RCX, AMD64RDX, AMD64RSI, AMD64RDI,
	-1, // orig_rax
	AMD64RIP,
	-1, -1, // cs, eflags
	AMD64RSP,
}

// ParsePRStatus reads the general registers of arch from b, as
// PTRACE_GETREGSET NT_PRSTATUS (or a core's NT_PRSTATUS pr_reg) holds
// them.
func ParsePRStatus(arch Arch, b []byte) (Regs, error) {
	n := PRStatusSize(arch)
	if n == 0 {
		return Regs{}, fmt.Errorf("registers of %v: unknown architecture", arch)
	}
	if len(b) < n {
		return Regs{}, fmt.Errorf("registers of %v: %d bytes, want %d", arch, len(b), n)
	}
	r := Regs{Arch: arch}
	le := binary.LittleEndian
	switch arch {
	case AMD64:
		for i, reg := range amd64Order {
			if reg >= 0 {
				r.Set(uint64(reg), le.Uint64(b[8*i:]))
			}
		}
	case ARM64:
		for i := 0; i < 33; i++ { // x0-x30, sp, pc
			r.Set(uint64(i), le.Uint64(b[8*i:]))
		}
	}
	return r, nil
}
