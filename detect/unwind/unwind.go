package unwind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/nativesym"
)

// MaxDepth is the default bound on the frames of one thread.
const MaxDepth = 4096

// Via is how a frame's registers were recovered.
type Via uint8

const (
	// ViaRegisters: the innermost frame, the thread's own registers.
	ViaRegisters Via = iota
	// ViaCFI: the callee's call frame information (.eh_frame or
	// .debug_frame).
	ViaCFI
	// ViaFramePointer: the callee had no call frame information; its
	// frame pointer chain was followed (a guess that looked sane).
	ViaFramePointer
)

func (v Via) String() string {
	switch v {
	case ViaRegisters:
		return "registers"
	case ViaCFI:
		return "cfi"
	case ViaFramePointer:
		return "frame-pointer"
	}
	return fmt.Sprintf("via(%d)", uint8(v))
}

// Frame is one frame of a thread's stack, innermost first.
type Frame struct {
	// PC is the frame's pc: where the thread runs (the innermost
	// frame, a frame a signal interrupted) or a return address.
	PC uint64
	// Exact is true when PC is the instruction the frame executes (the
	// innermost frame, a frame interrupted by a signal); false for a
	// return address, whose call instruction is at PC-1 (LookupPC).
	Exact bool
	// SP is the frame's stack pointer; CFA its canonical frame address
	// (the caller's stack pointer before the call), 0 when the frame's
	// caller was not found by call frame information.
	SP, CFA uint64
	// Via is how the frame's registers were found.
	Via Via
	// Signal is true for a signal trampoline's frame (__restore_rt):
	// its caller is the interrupted frame.
	Signal bool
}

// LookupPC is the address to look a frame's function and line up by:
// PC for an exact pc, PC-1 (inside the call) for a return address.
func (f Frame) LookupPC() uint64 {
	if f.Exact || f.PC == 0 {
		return f.PC
	}
	return f.PC - 1
}

// End is why a walk stopped.
type End uint8

const (
	// EndOfStack: the return address is undefined (_start, clone3,
	// thread_start): the stack's outermost frame was reached.
	EndOfStack End = iota + 1
	// EndPCZero: a return address of 0.
	EndPCZero
	// EndNoModule: a pc outside every mapped file (JIT code, a
	// corrupt stack) with no sane frame pointer to go on with.
	EndNoModule
	// EndNoCFI: no call frame information for a pc and no sane frame
	// pointer.
	EndNoCFI
	// EndCFANotIncreasing: the caller's stack pointer is not above the
	// callee's: a loop or a corrupt stack.
	EndCFANotIncreasing
	// EndMaxDepth: the walk reached its bound.
	EndMaxDepth
	// EndTruncated: a read went past the captured stack bytes, which
	// were cut at the capture's limit (Stack.Truncated).
	EndTruncated
	// EndMemory: a read the memory could not serve.
	EndMemory
	// EndError: bad call frame information (Trace.Err says what).
	EndError
)

func (e End) String() string {
	switch e {
	case EndOfStack:
		return "end of stack"
	case EndPCZero:
		return "pc 0"
	case EndNoModule:
		return "pc outside any module"
	case EndNoCFI:
		return "no call frame information"
	case EndCFANotIncreasing:
		return "stack pointer not increasing"
	case EndMaxDepth:
		return "too many frames"
	case EndTruncated:
		return "stack capture truncated"
	case EndMemory:
		return "memory not readable"
	case EndError:
		return "bad call frame information"
	}
	return fmt.Sprintf("end(%d)", uint8(e))
}

// Complete reports an end that is the stack's real end (EndOfStack,
// EndPCZero), not a walk cut short.
func (e End) Complete() bool { return e == EndOfStack || e == EndPCZero }

// Trace is one thread's frames and why the walk stopped.
type Trace struct {
	Frames []Frame
	End    End
	// Err is the error behind End (for EndError, EndMemory,
	// EndTruncated, EndNoCFI), nil otherwise.
	Err error
}

// Unwinder walks the C stacks of one process (or core): it holds the
// process's mappings and the call frame information read from its
// modules, once each, for its lifetime. It is safe for concurrent use
// (walks are serialized).
type Unwinder struct {
	regions []nativesym.Region
	files   nativesym.Files
	mu      sync.Mutex
	mods    map[string]*module
	// MaxDepth bounds the frames of one thread (default MaxDepth).
	MaxDepth int
}

// New returns an Unwinder over the process's file mappings, opening the
// modules (and, for .debug_frame, their separate debug files) through
// files: the same Files a nativesym.Table uses.
func New(regions []nativesym.Region, files nativesym.Files) *Unwinder {
	rs := append([]nativesym.Region(nil), regions...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	return &Unwinder{regions: rs, files: files, mods: map[string]*module{}, MaxDepth: MaxDepth}
}

// VDSOPath is the path /proc/PID/maps gives the vDSO's mapping.
const VDSOPath = "[vdso]"

// AddVDSO adds the process's vDSO, an ELF image the kernel maps at
// [start, end) (image: its bytes, read from the process), so that a
// thread stopped inside it (clock_gettime, gettimeofday) is walked
// through its .eh_frame. Without it such a thread's walk ends at its
// first frame unless its frame pointer leads on.
func (u *Unwinder) AddVDSO(start, end uint64, image []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := nativesym.Region{Start: start, End: end, Path: VDSOPath}
	rs := u.regions[:0:0]
	for _, x := range u.regions {
		if x.Path != VDSOPath && (x.End <= start || x.Start >= end) {
			rs = append(rs, x)
		}
	}
	rs = append(rs, r)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	u.regions = rs
	m := readModule(bytes.NewReader(image), r)
	// The image's own .debug_frame is all it has: no debug file.
	m.debugDone = m.obj != nil && m.obj.Section(".debug_frame") == nil
	u.mods[VDSOPath] = m
}

// Close closes every file the Unwinder opened.
func (u *Unwinder) Close() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	var errs []error
	for _, m := range u.mods {
		errs = append(errs, m.close())
	}
	u.mods = map[string]*module{}
	return errors.Join(errs...)
}

// resolve is the module mapped at pc and pc's link-time address in it.
func (u *Unwinder) resolve(pc uint64) (*module, uint64, bool) {
	i := sort.Search(len(u.regions), func(i int) bool { return u.regions[i].Start > pc }) - 1
	if i < 0 || pc >= u.regions[i].End || u.regions[i].Path == "" || strings.HasPrefix(u.regions[i].Path, "[") && u.regions[i].Path != VDSOPath {
		return nil, 0, false
	}
	r := u.regions[i]
	m, ok := u.mods[r.Path]
	if !ok && r.Path == VDSOPath {
		return nil, 0, false
	}
	if !ok {
		m = loadModule(u.files, r)
		u.mods[r.Path] = m
	}
	if m.obj == nil {
		return nil, 0, false
	}
	addr, ok := m.vaddr(pc - r.Start + r.Offset)
	return m, addr, ok
}

// Stack is a thread's stack bytes captured while it was stopped: Data
// holds the memory at [Addr, Addr+len(Data)). Reads elsewhere go to
// Fallback (for example /proc/PID/mem of a process still stopped, or a
// core), or fail.
type Stack struct {
	Addr uint64
	Data []byte
	// Truncated is true when the capture stopped at its limit before
	// the end of the stack's mapping: a read past Data then ends the
	// walk with EndTruncated rather than EndMemory.
	Truncated bool
	// Fallback serves reads outside Data (ReadAt's offset is the
	// address); nil for none.
	Fallback io.ReaderAt
}

// ErrTruncated is the error of a read past a truncated capture.
var ErrTruncated = errors.New("stack capture truncated at its limit")

// read reads size (1-8) bytes at addr, little-endian.
func (s *Stack) read(addr uint64, size int) (uint64, error) {
	var b [8]byte
	if addr >= s.Addr && addr-s.Addr <= uint64(len(s.Data)) && uint64(len(s.Data))-(addr-s.Addr) >= uint64(size) {
		copy(b[:], s.Data[addr-s.Addr:addr-s.Addr+uint64(size)])
		return binary.LittleEndian.Uint64(b[:]), nil
	}
	if s.Fallback != nil && addr < 1<<63 {
		if n, err := s.Fallback.ReadAt(b[:size], int64(addr)); n == size {
			return binary.LittleEndian.Uint64(b[:]), nil
		} else if err == nil {
			err = io.ErrUnexpectedEOF
		}
	}
	if s.Truncated && addr >= s.Addr+uint64(len(s.Data)) {
		return 0, fmt.Errorf("%d bytes at %#x: %w", size, addr, ErrTruncated)
	}
	return 0, fmt.Errorf("%d bytes at %#x: %w", size, addr, ErrMemory)
}

// Unwind walks the stack of a thread stopped with registers regs, its
// stack memory in stack, innermost frame first.
func (u *Unwinder) Unwind(regs Regs, stack *Stack) Trace {
	u.mu.Lock()
	defer u.mu.Unlock()
	if stack == nil {
		stack = &Stack{}
	}
	maxDepth := u.MaxDepth
	if maxDepth <= 0 {
		maxDepth = MaxDepth
	}
	arch := regs.Arch
	if arch == 0 {
		arch = HostArch()
		regs.Arch = arch
	}
	t := Trace{Frames: make([]Frame, 0, 64)}
	cur := regs
	exact, via := true, ViaRegisters
	for {
		pc := cur.PC()
		if pc == 0 {
			t.End = EndPCZero
			return t
		}
		if len(t.Frames) >= maxDepth {
			t.End = EndMaxDepth
			return t
		}
		fr := Frame{PC: pc, Exact: exact, SP: cur.SP(), Via: via}
		t.Frames = append(t.Frames, fr)
		lookup := fr.LookupPC()
		m, addr, ok := u.resolve(lookup)
		var c cachedRow
		if ok {
			c = m.rowAt(u.files, addr)
		}
		if c.r == nil {
			caller, ok := framePointer(&cur, stack)
			if !ok || !u.inModule(caller.PC()) {
				switch {
				case !u.inModule(pc):
					t.End = EndNoModule
				case c.err != nil:
					t.End, t.Err = EndError, c.err
				default:
					t.End, t.Err = EndNoCFI, fmt.Errorf("pc %#x: %w", pc, ErrNoFDE)
				}
				return t
			}
			cur, exact, via = caller, false, ViaFramePointer
			continue
		}
		caller, cfa, undefined, err := step(&cur, c.r, c.raReg, stack)
		if err != nil {
			t.End, t.Err = endOf(err), err
			return t
		}
		t.Frames[len(t.Frames)-1].CFA = cfa
		t.Frames[len(t.Frames)-1].Signal = c.signal
		if undefined {
			t.End = EndOfStack
			return t
		}
		// The caller's stack pointer is above the callee's; equal only
		// for a leaf that keeps its return address in a register (an
		// AArch64 leaf: the innermost frame, or one a signal
		// interrupted).
		if !c.signal && (caller.SP() < cur.SP() || caller.SP() == cur.SP() && !exact) {
			t.End = EndCFANotIncreasing
			return t
		}
		// The frame a signal interrupted runs at its pc exactly.
		cur, exact, via = caller, c.signal, ViaCFI
	}
}

func endOf(err error) End {
	switch {
	case errors.Is(err, ErrTruncated):
		return EndTruncated
	case errors.Is(err, ErrMemory):
		return EndMemory
	}
	return EndError
}

// inModule reports whether pc lies in a mapped file.
func (u *Unwinder) inModule(pc uint64) bool {
	_, _, ok := u.resolve(pc)
	return ok
}

// step computes the caller's registers from the callee's (cur) and the
// row for its pc; undefined is true when the return address is
// undefined (the outermost frame).
func step(cur *Regs, r *row, raReg uint64, stack *Stack) (caller Regs, cfa uint64, undefined bool, err error) {
	arch := cur.Arch
	env := &exprEnv{regs: cur, read: stack.read, ptrSize: 8}
	if r.cfaExpr != nil {
		cfa, err = evalExpr(r.cfaExpr, env)
		if err != nil {
			return Regs{}, 0, false, err
		}
	} else {
		v, ok := cur.get(r.cfaReg)
		if !ok {
			return Regs{}, 0, false, &RegisterError{Reg: r.cfaReg}
		}
		cfa = v + uint64(r.cfaOff)
	}
	caller = Regs{Arch: arch}
	for reg := uint64(0); reg < NumRegs; reg++ {
		ru := r.regs[reg]
		var v uint64
		switch ru.kind {
		case ruleUnset:
			// No rule: a callee-saved register keeps its value, as does
			// the return address column (x30 on AArch64 in a leaf).
			if !arch.calleeSaved(reg) && (reg != raReg || raReg == arch.pcReg()) {
				continue
			}
			var ok bool
			if v, ok = cur.get(reg); !ok {
				continue
			}
		case ruleSame:
			var ok bool
			if v, ok = cur.get(reg); !ok {
				continue
			}
		case ruleUndefined:
			if reg == raReg {
				return caller, cfa, true, nil
			}
			continue
		case ruleOffset:
			if v, err = stack.read(cfa+uint64(ru.off), 8); err != nil {
				return Regs{}, cfa, false, err
			}
		case ruleValOffset:
			v = cfa + uint64(ru.off)
		case ruleRegister:
			var ok bool
			if v, ok = cur.get(ru.reg); !ok {
				continue
			}
		case ruleExpr, ruleValExpr:
			a, e := evalExpr(ru.expr, env, cfa)
			if e != nil {
				return Regs{}, cfa, false, e
			}
			v = a
			if ru.kind == ruleExpr {
				if v, err = stack.read(a, 8); err != nil {
					return Regs{}, cfa, false, err
				}
			}
		}
		caller.Set(reg, v)
	}
	if _, ok := caller.get(raReg); !ok {
		if raReg < NumRegs {
			// No rule and no value: nothing to return to.
			return caller, cfa, true, nil
		}
		return Regs{}, cfa, false, &RegisterError{Reg: raReg}
	}
	ra, _ := caller.get(raReg)
	if arch == ARM64 {
		ra = stripPAC(ra)
	}
	// The caller's pc is the return address; its stack pointer the CFA
	// unless a rule restored it (a signal frame's).
	caller.Set(arch.pcReg(), ra)
	if r.regs[arch.spReg()].kind == ruleUnset || r.regs[arch.spReg()].kind == ruleSame {
		caller.Set(arch.spReg(), cfa)
	}
	return caller, cfa, false, nil
}

// stripPAC clears the pointer authentication code of an AArch64 return
// address (the bits above a 48-bit user address).
func stripPAC(ra uint64) uint64 { return ra & (1<<48 - 1) }

// maxFrameSize bounds the distance between a stack pointer and the
// frame pointer a frame-pointer step trusts.
const maxFrameSize = 16 << 20

// framePointer is the caller of cur by the frame pointer chain, when the
// frame pointer looks sane: above the stack pointer, aligned, within
// maxFrameSize. (The saved frame pointer is the caller's: a caller with
// call frame information may use the register for anything.)
func framePointer(cur *Regs, stack *Stack) (Regs, bool) {
	arch := cur.Arch
	fp, ok1 := cur.get(arch.fpReg())
	sp, ok2 := cur.get(arch.spReg())
	if !ok1 || !ok2 || fp < sp || fp-sp > maxFrameSize || fp%8 != 0 {
		return Regs{}, false
	}
	savedFP, err1 := stack.read(fp, 8)
	ra, err2 := stack.read(fp+8, 8)
	if err1 != nil || err2 != nil || ra == 0 {
		return Regs{}, false
	}
	if arch == ARM64 {
		ra = stripPAC(ra)
	}
	caller := Regs{Arch: arch}
	for reg := uint64(0); reg < NumRegs; reg++ {
		if arch.calleeSaved(reg) {
			if v, ok := cur.get(reg); ok {
				caller.Set(reg, v)
			}
		}
	}
	caller.Set(arch.fpReg(), savedFP)
	caller.Set(arch.spReg(), fp+16)
	caller.Set(arch.pcReg(), ra)
	return caller, true
}
