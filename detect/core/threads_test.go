package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"
)

// x86Regs is a made-up user_regs_struct: orig_rax, rip and rdi set.
func x86Regs(origRAX int64, rip, rdi uint64) []uint64 {
	r := make([]uint64, 27)
	r[x86OrigRAX], r[x86RIP], r[x86RDI] = uint64(origRAX), rip, rdi
	r[10] = uint64(0xfffffffffffffe00) // rax: -ERESTARTSYS, as while stopped
	return r
}

// arm64Regs is a made-up user_pt_regs: x8 and pc set, x0 holding the
// call's return value.
func arm64Regs(x8, pc uint64) []uint64 {
	r := make([]uint64, 34)
	r[arm64X8], r[arm64PC] = x8, pc
	r[0] = uint64(0xfffffffffffffe00)
	return r
}

// code is a text reader over made-up code at base.
func code(base uint64, b ...byte) func(uint64, int) ([]byte, bool) {
	return func(addr uint64, n int) ([]byte, bool) {
		if addr < base || addr-base+uint64(n) > uint64(len(b)) {
			return nil, false
		}
		return b[addr-base : addr-base+uint64(n)], true
	}
}

func noCode(uint64, int) ([]byte, bool) { return nil, false }

func TestThreadSyscall(t *testing.T) {
	const base = 0x7f0000001000
	syscallInsn := code(base, 0x90, 0x0f, 0x05, 0x48, 0x3d)           // nop; syscall; cmp ...
	svc := code(base, 0x01, 0x00, 0x00, 0xd4, 0x1f, 0x04, 0x40, 0xb1) // svc #0; cmn x0, #4095
	for _, c := range []struct {
		name string
		m    elf.Machine
		regs []uint64
		text func(uint64, int) ([]byte, bool)
		want Syscall
	}{
		{"x86-64 futex after syscall", elf.EM_X86_64, x86Regs(202, base+3, 0x55aa00), syscallInsn,
			Syscall{Known: true, In: true, Nr: 202, Arg: 0x55aa00, ArgKnown: true}},
		{"x86-64 clock_nanosleep, code unreadable", elf.EM_X86_64, x86Regs(230, base+3, 1), noCode,
			Syscall{Known: true, In: true, Nr: 230, Arg: 1, ArgKnown: true}},
		{"x86-64 restart set up: syscall at rip", elf.EM_X86_64, x86Regs(202, base+1, 7), syscallInsn,
			Syscall{Known: true, In: true, Nr: 202, Arg: 7, ArgKnown: true}},
		{"x86-64 user space (orig_rax -1)", elf.EM_X86_64, x86Regs(-1, base+3, 0), syscallInsn,
			Syscall{Known: true}},
		{"x86-64 orig_rax set, no syscall near rip", elf.EM_X86_64, x86Regs(0, base+4, 0), code(base, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90),
			Syscall{Known: true}},
		{"x86-64 int $0x80", elf.EM_X86_64, x86Regs(240, base+2, 9), code(base, 0xcd, 0x80, 0x90, 0x90),
			Syscall{Known: true, In: true, Nr: 240, Arg: 9, ArgKnown: true}},
		{"x86-64 too few registers", elf.EM_X86_64, make([]uint64, 16), syscallInsn, Syscall{}},
		{"arm64 futex after svc", elf.EM_AARCH64, arm64Regs(98, base+4), svc,
			Syscall{Known: true, In: true, Nr: 98}},
		{"arm64 user space", elf.EM_AARCH64, arm64Regs(98, base+8), svc, Syscall{Known: true}},
		{"arm64 code unreadable", elf.EM_AARCH64, arm64Regs(98, base+4), noCode, Syscall{}},
		{"arm64 pc 0", elf.EM_AARCH64, arm64Regs(98, 0), svc, Syscall{}},
		{"arm64 too few registers", elf.EM_AARCH64, make([]uint64, 32), svc, Syscall{}},
		{"other machine", elf.EM_RISCV, x86Regs(202, base+3, 0), syscallInsn, Syscall{}},
	} {
		if got := ThreadSyscall(c.m, c.regs, c.text); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// prstatus64 is a 64-bit struct elf_prstatus in byte order bo: pr_pid
// and the general registers set.
func prstatus64(bo binary.ByteOrder, tid int, regs []uint64) []byte {
	b := make([]byte, prstatusRegs64+8*len(regs)+8)
	bo.PutUint32(b[32:], uint32(tid))
	for k, v := range regs {
		bo.PutUint64(b[prstatusRegs64+8*k:], v)
	}
	return b
}

// TestReadThreads: Read keeps every thread's NT_PRSTATUS, in order, with
// its registers, and the core's machine; a 32-bit core's threads have
// ids only.
func TestReadThreads(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		c := newSynth(elf.ELFCLASS64, bo)
		tids := []int{100, 101, 105}
		for i, tid := range tids {
			desc := prstatus64(bo, tid, x86Regs(int64(200+i), 0x1000+uint64(i), 0x55))
			c.note("CORE", NTPRStatus, desc)
		}
		info, err := Read(bytes.NewReader(c.bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if info.Machine != elf.EM_X86_64 || info.PID != 100 || len(info.Threads) != len(tids) {
			t.Fatalf("%v: machine %v, pid %d, threads %+v", bo, info.Machine, info.PID, info.Threads)
		}
		for i, th := range info.Threads {
			if th.TID != tids[i] || len(th.Regs) != 27 || th.Regs[x86OrigRAX] != uint64(200+i) || th.Regs[x86RIP] != 0x1000+uint64(i) || th.Regs[x86RDI] != 0x55 {
				t.Errorf("%v: thread %d: %+v", bo, i, th)
			}
		}
	}
	c := newSynth(elf.ELFCLASS32, binary.LittleEndian)
	c.note("CORE", NTPRStatus, c.prstatus(7)).note("CORE", NTPRStatus, c.prstatus(8))
	info, err := Read(bytes.NewReader(c.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Threads) != 2 || info.Threads[0].TID != 7 || info.Threads[1].TID != 8 || info.Threads[0].Regs != nil {
		t.Errorf("32-bit: threads %+v", info.Threads)
	}
}

// FuzzThreadSyscall: any NT_PRSTATUS payload, in either class and byte
// order, parses without panicking into no more registers than it holds,
// and whatever the code reads as, the registers give a consistent
// answer on x86-64 and AArch64.
func FuzzThreadSyscall(f *testing.F) {
	x86 := EncodePRStatus64(PRStatus{PID: 5, GRegs: make([]byte, 27*8)})
	binary.LittleEndian.PutUint64(x86[prstatusRegs64+8*x86OrigRAX:], 202)
	binary.LittleEndian.PutUint64(x86[prstatusRegs64+8*x86RIP:], 0x1002)
	f.Add(x86, false, false, false, []byte{0x0f, 0x05})
	arm := EncodePRStatus64(PRStatus{PID: 6, GRegs: make([]byte, 34*8)})
	binary.LittleEndian.PutUint64(arm[prstatusRegs64+8*arm64PC:], 0x1004)
	f.Add(arm, false, false, true, []byte{0x01, 0x00, 0x00, 0xd4})
	f.Add([]byte{1, 2, 3}, true, true, false, []byte{})
	f.Fuzz(func(t *testing.T, d []byte, is32, big, arm bool, text []byte) {
		h := header{class: elf.ELFCLASS64, bo: binary.LittleEndian}
		if is32 {
			h.class = elf.ELFCLASS32
		}
		if big {
			h.bo = binary.BigEndian
		}
		th := parseStatus(d, h)
		if len(th.Regs)*8 > len(d) || is32 && th.Regs != nil {
			t.Fatalf("%d registers from a %d-byte note (32-bit %v)", len(th.Regs), len(d), is32)
		}
		m := elf.EM_X86_64
		if arm {
			m = elf.EM_AARCH64
		}
		s := ThreadSyscall(m, th.Regs, func(addr uint64, n int) ([]byte, bool) {
			if n > len(text) {
				return nil, false
			}
			return text[:n], true
		})
		if s.In && !s.Known || s.ArgKnown && (!s.In || arm) || !s.In && (s.Nr != 0 || s.Arg != 0) || s.In && s.Nr < 0 && !arm {
			t.Fatalf("inconsistent %+v", s)
		}
	})
}
