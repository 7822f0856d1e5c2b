package dump

import (
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"io"
	"strconv"

	"github.com/pyattach/pyattach/cmd/internal/ptrace"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/unwind"
)

// hostMachine is the ELF machine of the registers ptrace gives.
func hostMachine() elf.Machine {
	switch unwind.HostArch() {
	case unwind.AMD64:
		return elf.EM_X86_64
	case unwind.ARM64:
		return elf.EM_AARCH64
	}
	return elf.EM_NONE
}

// threadViews is, for each thread whose registers were read while the
// process was stopped, the system call it was in, as the walker's
// kernel_view gives it from /proc/PID/task/TID/syscall: [number, first
// argument or null] in a call, [null, null] in user space; a thread the
// registers do not tell of is left out. The call is derived from the
// registers as a core's are (core.ThreadSyscall), the code at the pc
// read through mem (the process's memory: code does not change). The
// result is the JSON object the walker reads after "resumed".
func threadViews(regs []ptrace.ThreadRegs, mem io.ReaderAt) []byte {
	text := func(addr uint64, n int) ([]byte, bool) {
		if addr >= 1<<63 || n <= 0 || n > 16 {
			return nil, false
		}
		b := make([]byte, n)
		got, _ := mem.ReadAt(b, int64(addr))
		return b, got == n
	}
	m := hostMachine()
	out := map[string][2]any{}
	for _, r := range regs {
		words := make([]uint64, len(r.Raw)/8)
		for i := range words {
			words[i] = binary.LittleEndian.Uint64(r.Raw[8*i:])
		}
		s := core.ThreadSyscall(m, words, text)
		if !s.Known {
			continue
		}
		var v [2]any
		if s.In {
			v[0] = s.Nr
			if s.ArgKnown {
				v[1] = s.Arg
			}
		}
		out[strconv.Itoa(r.Tid)] = v
	}
	b, _ := json.Marshal(out)
	return b
}
