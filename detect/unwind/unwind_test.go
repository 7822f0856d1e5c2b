package unwind

import (
	"debug/elf"
	"errors"
	"testing"

	"github.com/pyattach/pyattach/detect/nativesym"
)

// noFiles opens nothing: the test's modules are made in memory.
type noFiles struct{}

func (noFiles) Open(nativesym.Region) (nativesym.File, error)      { return nil, errors.New("no file") }
func (noFiles) OpenDebug(nativesym.Region) (nativesym.File, error) { return nil, nil }

// fakeUnwinder maps sampleEh's module at 0x400000: its function at
// 0x404000-0x404100 keeps CFA = rbp+16 from 0x404004 on.
func fakeUnwinder(t *testing.T) *Unwinder {
	u := New([]nativesym.Region{{Start: 0x400000, End: 0x500000, Path: "m"}}, noFiles{})
	u.mods["m"] = &module{
		obj:   &elf.File{},
		loads: []*elf.Prog{{ProgHeader: elf.ProgHeader{Type: elf.PT_LOAD, Filesz: 0x100000, Memsz: 0x100000}}},
		eh:    sampleEh(t),
	}
	return u
}

// chain writes n frames of the sample function on a stack at 0x10000:
// each frame's rbp points to its saved rbp, the return address above.
// The outermost returns to ret.
func chain(n int, ret uint64) (Regs, *Stack) {
	const base = 0x10000
	st := &Stack{Addr: base, Data: make([]byte, 0x100*(n+1))}
	regs := Regs{Arch: AMD64}
	regs.Set(AMD64RIP, 0x404010)
	regs.Set(AMD64RSP, base)
	for i := 0; i < n; i++ {
		fp := uint64(base + 0x100*i + 0x80)
		if i == 0 {
			regs.Set(AMD64RBP, fp)
		}
		next := fp + 0x100
		ra := uint64(0x404050)
		if i == n-1 {
			next, ra = 0, ret
		}
		le.PutUint64(st.Data[fp-base:], next)
		le.PutUint64(st.Data[fp+8-base:], ra)
	}
	return regs, st
}

func TestUnwindEnds(t *testing.T) {
	u := fakeUnwinder(t)
	regs, st := chain(10, 0)
	tr := u.Unwind(regs, st)
	if tr.End != EndPCZero || len(tr.Frames) != 10 || !tr.Frames[0].Exact || tr.Frames[1].Exact || tr.Frames[1].Via != ViaCFI {
		t.Fatalf("end %v, %d frames: %+v", tr.End, len(tr.Frames), tr.Frames)
	}
	if tr.Frames[1].PC != 0x404050 || tr.Frames[1].LookupPC() != 0x40404f || tr.Frames[0].CFA != 0x10090 || tr.Frames[1].SP != 0x10090 {
		t.Errorf("frame 1: %+v, frame 0 %+v", tr.Frames[1], tr.Frames[0])
	}

	u.MaxDepth = 4
	if tr := u.Unwind(regs, st); tr.End != EndMaxDepth || len(tr.Frames) != 4 {
		t.Errorf("max depth: %v, %d frames", tr.End, len(tr.Frames))
	}
	u.MaxDepth = 0

	// A return address outside every module, with no frame pointer.
	regs, st = chain(3, 0x900000)
	if tr := u.Unwind(regs, st); tr.End != EndNoModule || len(tr.Frames) != 4 {
		t.Errorf("no module: %v, %d frames", tr.End, len(tr.Frames))
	}

	// A saved rbp that points below: the caller's stack pointer does
	// not grow.
	regs, st = chain(3, 0)
	le.PutUint64(st.Data[0x180:], 0x10000)
	if tr := u.Unwind(regs, st); tr.End != EndCFANotIncreasing {
		t.Errorf("loop: %v, %d frames", tr.End, len(tr.Frames))
	}

	// The capture cut in the middle of the chain.
	regs, st = chain(5, 0)
	st.Data, st.Truncated = st.Data[:0x200], true
	if tr := u.Unwind(regs, st); tr.End != EndTruncated || !errors.Is(tr.Err, ErrTruncated) || len(tr.Frames) != 3 {
		t.Errorf("truncated: %v %v, %d frames", tr.End, tr.Err, len(tr.Frames))
	}
	st.Truncated = false
	if tr := u.Unwind(regs, st); tr.End != EndMemory || !errors.Is(tr.Err, ErrMemory) {
		t.Errorf("unreadable: %v %v", tr.End, tr.Err)
	}
	// A fallback reader serves what the capture lacks.
	full := st.Data[:cap(st.Data)]
	st.Fallback = readerAt(func(p []byte, off int64) (int, error) {
		return copy(p, full[off-0x10000:]), nil
	})
	if tr := u.Unwind(regs, st); tr.End != EndPCZero || len(tr.Frames) != 5 {
		t.Errorf("fallback: %v %v, %d frames", tr.End, tr.Err, len(tr.Frames))
	}
}

// TestFramePointerFallback: a pc without call frame information is
// left through rbp when the chain looks sane, and said so.
func TestFramePointerFallback(t *testing.T) {
	u := fakeUnwinder(t)
	regs, st := chain(3, 0)
	regs.Set(AMD64RIP, 0x405000) // in the module, no FDE
	tr := u.Unwind(regs, st)
	if tr.End != EndPCZero || len(tr.Frames) != 3 || tr.Frames[1].Via != ViaFramePointer || tr.Frames[2].Via != ViaCFI {
		t.Fatalf("%v %v %+v", tr.End, tr.Err, tr.Frames)
	}
	// An rbp below the stack pointer is not followed.
	regs.Set(AMD64RBP, 0x8000)
	if tr := u.Unwind(regs, st); tr.End != EndNoCFI || !errors.Is(tr.Err, ErrNoFDE) || len(tr.Frames) != 1 {
		t.Errorf("insane rbp: %v %v %d", tr.End, tr.Err, len(tr.Frames))
	}
}

type readerAt func(p []byte, off int64) (int, error)

func (f readerAt) ReadAt(p []byte, off int64) (int, error) { return f(p, off) }

func TestParsePRStatus(t *testing.T) {
	b := make([]byte, PRStatusSize(AMD64))
	for i := 0; i < 27; i++ {
		le.PutUint64(b[8*i:], uint64(100+i))
	}
	r, err := ParsePRStatus(AMD64, b)
	if err != nil {
		t.Fatal(err)
	}
	// user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx
	// rdx rsi rdi orig_rax rip cs eflags rsp.
	want := map[uint64]uint64{15: 100, 12: 103, AMD64RBP: 104, AMD64RBX: 105, 8: 109, AMD64RAX: 110, AMD64RDI: 114, AMD64RIP: 116, AMD64RSP: 119}
	for reg, v := range want {
		if got, ok := r.get(reg); !ok || got != v {
			t.Errorf("register %d: %d, want %d", reg, got, v)
		}
	}
	if r.PC() != 116 || r.SP() != 119 {
		t.Errorf("pc %d sp %d", r.PC(), r.SP())
	}
	if _, err := ParsePRStatus(AMD64, b[:100]); err == nil {
		t.Error("short register set accepted")
	}
	a := make([]byte, PRStatusSize(ARM64))
	le.PutUint64(a[31*8:], 0x7ff0)
	le.PutUint64(a[32*8:], 0x1234)
	if r, err := ParsePRStatus(ARM64, a); err != nil || r.PC() != 0x1234 || r.SP() != 0x7ff0 {
		t.Errorf("arm64: pc %#x sp %#x %v", r.PC(), r.SP(), err)
	}
}

// TestARM64Leaf: an AArch64 leaf keeps its return address in x30 (no
// rule for it) and its CFA at sp: the caller runs at x30, its pointer
// authentication code stripped, with the same stack pointer.
func TestARM64Leaf(t *testing.T) {
	c := &cie{codeAlign: 4, dataAlign: -8, raReg: ARM64LR, bo: le, addrSize: 8, init: []byte{cfaDefCFA, ARM64SP, 0}}
	r, err := execute("t", &fde{cie: c, lo: 0x1000, hi: 0x1100}, 0x1010)
	if err != nil {
		t.Fatal(err)
	}
	regs := Regs{Arch: ARM64}
	regs.Set(ARM64SP, 0x7000)
	regs.Set(ARM64PC, 0x1010)
	regs.Set(ARM64LR, 0x002a000000402000) // signed
	regs.Set(19, 19)
	regs.Set(3, 3)
	caller, cfa, undef, err := step(&regs, &r, ARM64LR, &Stack{})
	if err != nil || undef || cfa != 0x7000 || caller.PC() != 0x402000 || caller.SP() != 0x7000 {
		t.Fatalf("pc %#x sp %#x cfa %#x %v %v", caller.PC(), caller.SP(), cfa, undef, err)
	}
	if v, ok := caller.get(19); !ok || v != 19 {
		t.Errorf("x19 (callee-saved) not kept: %d %v", v, ok)
	}
	if _, ok := caller.get(3); ok {
		t.Errorf("x3 (caller-saved) kept in the caller")
	}
	// A frame-record step: x29 -> [saved x29, x30].
	regs.Set(ARM64FP, 0x7010)
	st := &Stack{Addr: 0x7000, Data: make([]byte, 0x40)}
	le.PutUint64(st.Data[0x10:], 0x7030)
	le.PutUint64(st.Data[0x18:], 0x0055000000403000)
	fp, ok := framePointer(&regs, st)
	if !ok || fp.PC() != 0x403000 || fp.SP() != 0x7020 {
		t.Errorf("frame record: pc %#x sp %#x %v", fp.PC(), fp.SP(), ok)
	}
	if v, _ := fp.get(ARM64FP); v != 0x7030 {
		t.Errorf("saved x29 %#x", v)
	}
}
