package ptrace

import (
	"errors"
	"fmt"
	"io"

	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/unwind"
)

// DefaultStackLimit is how many bytes of each thread's stack Capture
// reads above its stack pointer unless told otherwise.
const DefaultStackLimit = 256 << 10

// redZone is the bytes below the stack pointer a leaf function may use
// without moving it (the x86-64 ABI's red zone; AArch64 has none).
func redZone(a unwind.Arch) uint64 {
	if a == unwind.AMD64 {
		return 128
	}
	return 0
}

// ThreadRegs is one held thread's general registers.
type ThreadRegs struct {
	Tid int
	// Raw is the NT_PRSTATUS register set as the kernel gives it
	// (struct user_regs_struct, struct user_pt_regs).
	Raw []byte
	// Regs is Raw by DWARF register number.
	Regs unwind.Regs
}

// ThreadStack is one held thread's registers and the stack bytes
// captured from its stack pointer up.
type ThreadStack struct {
	ThreadRegs
	// Stack holds the bytes [Addr, Addr+len(Data)): from the stack
	// pointer less the red zone (not below the start of its mapping) to
	// the stack pointer plus the limit or the end of the mapping holding
	// it, whichever is lower; Truncated when the limit cut it. A walk
	// that reads past a truncated capture ends with unwind.EndTruncated.
	Stack unwind.Stack
	// Err says why no stack bytes were read (the stack pointer in no
	// mapping, a failed read); the registers are still good.
	Err error
}

// Registers reads every held thread's general registers, the
// process's main thread first (Tids' order).
func (s *Stopped) Registers() ([]ThreadRegs, error) {
	var (
		out []ThreadRegs
		err error
	)
	s.Do(func() {
		for _, tid := range s.Tids() {
			var raw []byte
			if raw, err = GetGRegs(tid); err != nil {
				return
			}
			t := ThreadRegs{Tid: tid, Raw: raw}
			if t.Regs, err = unwind.ParsePRStatus(unwind.HostArch(), raw); err != nil {
				err = fmt.Errorf("thread %d: %w", tid, err)
				return
			}
			out = append(out, t)
		}
	})
	return out, err
}

// Capture reads every held thread's registers and stack bytes (at most
// limit above each stack pointer; DefaultStackLimit when limit <= 0)
// and returns them in Tids' order. The stacks are read in one
// process_vm_readv where the kernel allows it, else (and for what it
// did not read) through mem, the process's memory (/proc/PID/mem:
// ReadAt's offset is the address); maps are its mappings. The process
// may be resumed as soon as Capture returns: what a walk needs is in the
// result.
func (s *Stopped) Capture(mem io.ReaderAt, maps []proc.Mapping, limit int) ([]ThreadStack, error) {
	regs, err := s.Registers()
	if err != nil {
		return nil, err
	}
	out := make([]ThreadStack, len(regs))
	var (
		bufs  [][]byte
		addrs []uint64
		which []int
	)
	for i, r := range regs {
		out[i].ThreadRegs = r
		lo, hi, truncated, err := stackRange(maps, r.Regs.Arch, r.Regs.SP(), limit)
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i].Stack = unwind.Stack{Addr: lo, Data: make([]byte, hi-lo), Truncated: truncated}
		bufs = append(bufs, out[i].Stack.Data)
		addrs = append(addrs, lo)
		which = append(which, i)
	}
	done := vmRead(s.PID(), bufs, addrs)
	for k := done; k < len(which); k++ {
		st := &out[which[k]]
		st.Stack, st.Err = readRange(mem, st.Stack.Addr, uint64(len(st.Stack.Data)), st.Stack.Truncated)
	}
	return out, nil
}

// ErrNoStackMapping means a stack pointer lies in no mapping.
var ErrNoStackMapping = errors.New("stack pointer in no mapping")

// ReadStack reads the stack bytes of a thread whose stack pointer is sp
// (see ThreadStack.Stack) through mem.
func ReadStack(mem io.ReaderAt, maps []proc.Mapping, arch unwind.Arch, sp uint64, limit int) (unwind.Stack, error) {
	lo, hi, truncated, err := stackRange(maps, arch, sp, limit)
	if err != nil {
		return unwind.Stack{}, err
	}
	return readRange(mem, lo, hi-lo, truncated)
}

// stackRange is the stack bytes [lo, hi) to capture for a stack
// pointer sp: from sp less the red zone (not below the start of its
// mapping) to sp plus limit or the mapping's end, whichever is lower
// (truncated when the limit is).
func stackRange(maps []proc.Mapping, arch unwind.Arch, sp uint64, limit int) (lo, hi uint64, truncated bool, err error) {
	if limit <= 0 {
		limit = DefaultStackLimit
	}
	var m *proc.Mapping
	for i := range maps {
		if sp >= maps[i].Start && sp < maps[i].End {
			m = &maps[i]
			break
		}
	}
	if m == nil {
		return 0, 0, false, fmt.Errorf("stack pointer %#x: %w", sp, ErrNoStackMapping)
	}
	lo, hi = sp-min(redZone(arch), sp-m.Start), m.End
	if m.End-sp > uint64(limit) {
		hi, truncated = sp+uint64(limit), true
	}
	if lo >= 1<<63 || hi > 1<<63 {
		return 0, 0, false, fmt.Errorf("stack pointer %#x: address out of range", sp)
	}
	return lo, hi, truncated, nil
}

// readRange reads n bytes at addr through mem. What was read before a
// fault still serves: the walk ends where it runs out, as if truncated.
func readRange(mem io.ReaderAt, addr, n uint64, truncated bool) (unwind.Stack, error) {
	b := make([]byte, n)
	k, err := mem.ReadAt(b, int64(addr))
	if k < len(b) {
		if k == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return unwind.Stack{}, fmt.Errorf("stack at %#x: %w", addr, err)
		}
		b, truncated = b[:k], true
	}
	return unwind.Stack{Addr: addr, Data: b, Truncated: truncated}, nil
}

// maxVDSO bounds the vDSO image read (the kernel's are 8 KiB or so).
const maxVDSO = 1 << 20

// ReadVDSO reads the vDSO image of the process whose memory is mem and
// mappings maps, for unwind.Unwinder.AddVDSO: its bounds and bytes; a
// zero end when the process has none. It may be read while the process
// runs (the image never changes).
func ReadVDSO(mem io.ReaderAt, maps []proc.Mapping) (start, end uint64, image []byte, err error) {
	for _, m := range maps {
		if m.Path != unwind.VDSOPath {
			continue
		}
		if m.End-m.Start > maxVDSO || m.Start >= 1<<63 {
			return 0, 0, nil, fmt.Errorf("vdso of %d bytes at %#x: not read", m.End-m.Start, m.Start)
		}
		b := make([]byte, m.End-m.Start)
		if n, err := mem.ReadAt(b, int64(m.Start)); n < len(b) {
			return 0, 0, nil, fmt.Errorf("vdso at %#x: %w", m.Start, err)
		}
		return m.Start, m.End, b, nil
	}
	return 0, 0, nil, nil
}
