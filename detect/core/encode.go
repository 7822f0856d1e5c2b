package core

import "encoding/binary"

// Note types, in the "CORE" namespace unless said: what Read decodes
// and what a core writer (cmd/internal/gcore) encodes with the functions
// below, so that a change of format touches this package alone.
const (
	NTPRStatus  = 1          // NT_PRSTATUS
	NTPRFPReg   = 2          // NT_PRFPREG (NT_FPREGSET)
	NTPRPSInfo  = 3          // NT_PRPSINFO
	NTAuxv      = 6          // NT_AUXV
	NTX86XState = 0x202      // NT_X86_XSTATE ("LINUX")
	NTARMTLS    = 0x401      // NT_ARM_TLS ("LINUX")
	NTSigInfo   = 0x53494749 // NT_SIGINFO, "SIGI"
	NTFile      = 0x46494c45 // NT_FILE, "FILE"
)

// The encoders write the layouts of a 64-bit little-endian Linux
// (x86-64, AArch64), the cores cmd/internal/gcore takes.
var le = binary.LittleEndian

// AppendNote appends one ELF note to b: name and descriptor, each
// padded to 4 bytes.
func AppendNote(b []byte, name string, typ uint32, desc []byte) []byte {
	b = le.AppendUint32(b, uint32(len(name)+1))
	b = le.AppendUint32(b, uint32(len(desc)))
	b = le.AppendUint32(b, typ)
	b = append(b, name...)
	b = append(b, 0)
	b = align4(b)
	b = append(b, desc...)
	return align4(b)
}

func align4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// PRStatus is what NT_PRSTATUS says of one thread.
type PRStatus struct {
	Sig                  int // the signal it stopped with, or 0
	PID, PPID, PGRP, SID int // PID: the thread's id
	GRegs                []byte
	FPValid              bool // a floating-point register set follows
}

// EncodePRStatus64 is struct elf_prstatus of a 64-bit Linux: siginfo (3
// ints), pr_cursig, sigpend, sighold, pid, ppid, pgrp, sid, four
// timevals, the general registers, pr_fpvalid (parseStatusPID reads
// pr_pid back).
func EncodePRStatus64(s PRStatus) []byte {
	n := len(s.GRegs)
	b := make([]byte, 112+n+8)
	le.PutUint32(b[0:], uint32(s.Sig))
	le.PutUint16(b[12:], uint16(s.Sig))
	putInts(b[32:], s.PID, s.PPID, s.PGRP, s.SID)
	copy(b[112:112+n], s.GRegs)
	if s.FPValid {
		le.PutUint32(b[112+n:], 1)
	}
	return b
}

// putInts writes vs as consecutive 32-bit words at the start of b (the
// ids of elf_prstatus and elf_prpsinfo).
func putInts(b []byte, vs ...int) {
	for i, v := range vs {
		le.PutUint32(b[4*i:], uint32(v))
	}
}

// PSInfo is what NT_PRPSINFO says of a process.
type PSInfo struct {
	PID, PPID, PGRP, SID int
	UID, GID             int
	State                byte // one letter of PID/stat
	Nice                 int
	Flags                uint64
	Comm                 string
	Args                 []byte // PID/cmdline
}

// EncodePSInfo64 is struct elf_prpsinfo of a 64-bit Linux (136 bytes;
// parsePSInfo reads it back).
func EncodePSInfo64(p PSInfo) []byte {
	b := make([]byte, 136)
	const states = "RSDTZW"
	st := 0
	for i := range len(states) {
		if states[i] == p.State {
			st = i
		}
	}
	b[0] = byte(st)
	b[1] = p.State
	if p.State == 'Z' {
		b[2] = 1
	}
	b[3] = byte(int8(p.Nice))
	le.PutUint64(b[8:], p.Flags)
	putInts(b[16:], p.UID, p.GID, p.PID, p.PPID, p.PGRP, p.SID)
	copy(b[40:55], p.Comm) // pr_fname[16], NUL-terminated
	args := p.Args
	for len(args) > 0 && args[len(args)-1] == 0 {
		args = args[:len(args)-1]
	}
	if len(args) > 79 {
		args = args[:79]
	}
	for i, c := range args {
		if c == 0 {
			c = ' '
		}
		b[56+i] = c
	}
	return b
}

// EncodeNTFile64 is the NT_FILE payload (ParseNTFile reads it back):
// count, page size, (start, end, offset in pages) per mapping, then the
// names, NUL-terminated. Each file's Path is written as it is (a deleted
// file's " (deleted)" suffix included); Offset is in bytes, a multiple
// of pageSize.
func EncodeNTFile64(files []File, pageSize uint64) []byte {
	var b []byte
	b = le.AppendUint64(b, uint64(len(files)))
	b = le.AppendUint64(b, pageSize)
	for _, f := range files {
		b = le.AppendUint64(b, f.Start)
		b = le.AppendUint64(b, f.End)
		b = le.AppendUint64(b, f.Offset/pageSize)
	}
	for _, f := range files {
		b = append(b, f.Path...)
		b = append(b, 0)
	}
	return b
}
