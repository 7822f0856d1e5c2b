package core

import (
	"debug/elf"
	"encoding/binary"
)

// Thread is what one NT_PRSTATUS says of a thread: its id and its
// general registers.
type Thread struct {
	// TID is pr_pid: the thread's id.
	TID int
	// Regs are the words of elf_gregset_t (x86-64: user_regs_struct,
	// AArch64: user_pt_regs), as many as the note holds; nil in a
	// 32-bit core.
	Regs []uint64
}

// prstatusRegs64 is where elf_gregset_t starts in a 64-bit struct
// elf_prstatus (see EncodePRStatus64); pr_fpvalid, an int, follows it.
const prstatusRegs64 = 112

// parseStatus decodes one NT_PRSTATUS (pr_pid: parseStatusPID's place).
func parseStatus(d []byte, h header) Thread {
	var t Thread
	at := 12 + 4 + 2*h.wordSize()
	if uint64(len(d)) >= at+4 {
		t.TID = int(int32(h.bo.Uint32(d[at:])))
	}
	if h.class != elf.ELFCLASS64 || len(d) < prstatusRegs64+4 {
		return t
	}
	n := (len(d) - prstatusRegs64 - 4) / 8
	t.Regs = make([]uint64, n)
	for i := range t.Regs {
		t.Regs[i] = h.bo.Uint64(d[prstatusRegs64+8*i:])
	}
	return t
}

// Syscall is what a thread's registers say of the system call it was
// in when the core was taken: what /proc/PID/task/TID/syscall says of a
// live thread.
type Syscall struct {
	// Known is false when the registers do not tell (an architecture
	// other than x86-64 and AArch64, too few registers, or on AArch64
	// the instruction before pc could not be read).
	Known bool
	// In is true when the thread was in a system call, Nr.
	In bool
	Nr int64
	// Arg is the call's first argument, when ArgKnown: on x86-64 rdi,
	// which the kernel keeps; AArch64's x0 holds the call's return value
	// (-ERESTARTSYS while it is stopped), so there it is never known.
	Arg      uint64
	ArgKnown bool
}

// Register indices in elf_gregset_t.
const (
	x86RDI     = 14
	x86OrigRAX = 15
	x86RIP     = 16
	arm64X8    = 8
	arm64PC    = 32
)

// ThreadSyscall derives a thread's system call from its registers (a
// Thread's Regs) on machine m. text reads n bytes of the process's code
// at an address (false when it cannot); the core rarely holds code, so
// the caller reads it from the mapped file.
//
// x86-64: orig_rax is the call's number, -1 out of a system call, as
// the kernel reports it for a live thread; when the code can be read,
// a syscall instruction (syscall, sysenter or int $0x80) must end at
// rip, or start there (a call the kernel has set up to restart).
// AArch64: the number is in x8, which is an ordinary register outside a
// call, so the thread is in a call only when the instruction before pc
// is svc #0; when that cannot be read, the state is not Known.
func ThreadSyscall(m elf.Machine, regs []uint64, text func(addr uint64, n int) ([]byte, bool)) Syscall {
	switch m {
	case elf.EM_X86_64:
		if len(regs) <= x86RIP {
			return Syscall{}
		}
		nr, rip := int64(regs[x86OrigRAX]), regs[x86RIP]
		if nr < 0 {
			return Syscall{Known: true}
		}
		if rip >= 2 {
			before, ok1 := text(rip-2, 2)
			at, ok2 := text(rip, 2)
			if ok1 && ok2 && !x86SyscallInsn(before) && !x86SyscallInsn(at) {
				return Syscall{Known: true}
			}
		}
		return Syscall{Known: true, In: true, Nr: nr, Arg: regs[x86RDI], ArgKnown: true}
	case elf.EM_AARCH64:
		if len(regs) <= arm64PC || regs[arm64PC] < 4 {
			return Syscall{}
		}
		b, ok := text(regs[arm64PC]-4, 4)
		if !ok || len(b) != 4 {
			return Syscall{}
		}
		// A64 instructions are little-endian whatever the data's order.
		if binary.LittleEndian.Uint32(b) != arm64SVC0 {
			return Syscall{Known: true}
		}
		return Syscall{Known: true, In: true, Nr: int64(regs[arm64X8])}
	}
	return Syscall{}
}

// arm64SVC0 is the A64 encoding of svc #0.
const arm64SVC0 = 0xd4000001

// x86SyscallInsn reports whether b is syscall (0f 05), sysenter (0f 34)
// or int $0x80 (cd 80).
func x86SyscallInsn(b []byte) bool {
	if len(b) != 2 {
		return false
	}
	return b[0] == 0x0f && (b[1] == 0x05 || b[1] == 0x34) || b[0] == 0xcd && b[1] == 0x80
}
