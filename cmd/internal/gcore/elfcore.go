package gcore

import (
	"debug/elf"
	"encoding/binary"
)

// Note types and register sets.
const (
	ntPRStatus  = 1
	ntPRFPReg   = 2 // NT_PRFPREG and NT_FPREGSET
	ntPRPSInfo  = 3
	ntAuxv      = 6
	ntX86XState = 0x202
	ntARMTLS    = 0x401
	ntSigInfo   = 0x53494749
	ntFile      = 0x46494c45
)

// ELF64 sizes.
const (
	ehdrSize = 64
	phdrSize = 56
	shdrSize = 64
	// pnXNum in e_phnum says the count is in section 0's sh_info.
	pnXNum = 0xffff
)

var le = binary.LittleEndian

// regSet is one register set read per thread beside NT_PRSTATUS.
type regSet struct {
	typ      int    // PTRACE_GETREGSET type, also the note type
	note     string // note name: "CORE" or "LINUX"
	size     int    // buffer size (the kernel fills what the set has)
	fp       bool   // its presence sets pr_fpvalid
	optional bool   // a kernel without it is not an error
	// fix, when set, adjusts what the kernel returned for the note.
	fix func([]byte) []byte
}

// thread is one thread as the core describes it.
type thread struct {
	tid     int
	sig     int    // the signal it stopped with, or 0
	siginfo []byte // 128 bytes when sig != 0 and readable
	gregs   []byte // NT_PRSTATUS register set
	sets    [][]byte
}

// process holds what NT_PRPSINFO and NT_PRSTATUS say of the process.
type process struct {
	pid, ppid, pgrp, sid int
	uid, gid             int
	state                byte // one letter of PID/stat
	nice                 int
	flags                uint64
	comm                 string
	args                 []byte // PID/cmdline
}

// segment is one PT_LOAD.
type segment struct {
	start, end uint64
	flags      elf.ProgFlag
	filesz     uint64
	off        uint64 // file offset, set by layout
	perms      string // as maps shows them, for Skip
	path       string
}

// note appends one ELF note (4-byte aligned name and descriptor).
func note(b []byte, name string, typ uint32, desc []byte) []byte {
	b = le.AppendUint32(b, uint32(len(name)+1))
	b = le.AppendUint32(b, uint32(len(desc)))
	b = le.AppendUint32(b, typ)
	b = append(b, name...)
	b = append(b, 0)
	b = pad4(b)
	b = append(b, desc...)
	return pad4(b)
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// prstatus is struct elf_prstatus of a 64-bit Linux: siginfo (3 ints),
// pr_cursig, sigpend, sighold, pid, ppid, pgrp, sid, four timevals, the
// general registers, pr_fpvalid.
func prstatus(p process, t thread, fpvalid bool) []byte {
	b := make([]byte, 112+host.gregSize+8)
	le.PutUint32(b[0:], uint32(t.sig))
	le.PutUint16(b[12:], uint16(t.sig))
	putInts(b[32:], t.tid, p.ppid, p.pgrp, p.sid)
	copy(b[112:112+host.gregSize], t.gregs)
	if fpvalid {
		le.PutUint32(b[112+host.gregSize:], 1)
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

// prpsinfo is struct elf_prpsinfo of a 64-bit Linux (136 bytes).
func prpsinfo(p process) []byte {
	b := make([]byte, 136)
	const states = "RSDTZW"
	st := 0
	for i := range len(states) {
		if states[i] == p.state {
			st = i
		}
	}
	b[0] = byte(st)
	b[1] = p.state
	if p.state == 'Z' {
		b[2] = 1
	}
	b[3] = byte(int8(p.nice))
	le.PutUint64(b[8:], p.flags)
	putInts(b[16:], p.uid, p.gid, p.pid, p.ppid, p.pgrp, p.sid)
	copy(b[40:55], p.comm) // pr_fname[16], NUL-terminated
	args := p.args
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

// fileEntry is one NT_FILE mapping.
type fileEntry struct {
	start, end, pgoff uint64
	name              string
}

// ntFileDesc is the NT_FILE payload: count, page size, (start, end,
// offset in pages) per mapping, then the names, NUL-terminated.
func ntFileDesc(files []fileEntry, pageSize uint64) []byte {
	var b []byte
	b = le.AppendUint64(b, uint64(len(files)))
	b = le.AppendUint64(b, pageSize)
	for _, f := range files {
		b = le.AppendUint64(b, f.start)
		b = le.AppendUint64(b, f.end)
		b = le.AppendUint64(b, f.pgoff)
	}
	for _, f := range files {
		b = append(b, f.name...)
		b = append(b, 0)
	}
	return b
}

// notes is the PT_NOTE segment's content.
func notes(p process, threads []thread, auxv []byte, files []fileEntry, pageSize uint64) []byte {
	var b []byte
	for i, t := range threads {
		fpvalid := false
		for j, s := range t.sets {
			if s != nil && host.regSets[j].fp {
				fpvalid = true
			}
		}
		b = note(b, "CORE", ntPRStatus, prstatus(p, t, fpvalid))
		if i == 0 {
			b = note(b, "CORE", ntPRPSInfo, prpsinfo(p))
			if t.siginfo != nil {
				b = note(b, "CORE", ntSigInfo, t.siginfo)
			}
			b = note(b, "CORE", ntAuxv, auxv)
			b = note(b, "CORE", ntFile, ntFileDesc(files, pageSize))
		}
		for j, s := range t.sets {
			if s != nil {
				b = note(b, host.regSets[j].note, uint32(host.regSets[j].typ), s)
			}
		}
	}
	return b
}

// layout places the notes and the segments and returns the headers
// (ELF header, program headers) and the file's size. Segment data
// starts on a page boundary; each segment's filesz is a page multiple.
func layout(segs []segment, noteSize, pageSize uint64) (head []byte, size uint64) {
	nph := uint64(len(segs) + 1)
	noteOff := ehdrSize + nph*phdrSize
	off := (noteOff + noteSize + pageSize - 1) / pageSize * pageSize
	for i := range segs {
		segs[i].off = off
		off += segs[i].filesz
	}
	size = off
	var shoff uint64
	if nph >= pnXNum {
		shoff = size
		size += shdrSize
	}

	h := make([]byte, 0, noteOff)
	h = append(h, 0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT), byte(elf.ELFOSABI_NONE))
	h = append(h, make([]byte, 8)...)
	h = le.AppendUint16(h, uint16(elf.ET_CORE))
	h = le.AppendUint16(h, uint16(host.machine))
	h = le.AppendUint32(h, uint32(elf.EV_CURRENT))
	h = le.AppendUint64(h, 0)        // e_entry
	h = le.AppendUint64(h, ehdrSize) // e_phoff
	h = le.AppendUint64(h, shoff)    // e_shoff
	h = le.AppendUint32(h, 0)        // e_flags
	h = le.AppendUint16(h, ehdrSize)
	h = le.AppendUint16(h, phdrSize)
	if nph >= pnXNum {
		h = le.AppendUint16(h, pnXNum)
		h = le.AppendUint16(h, shdrSize)
		h = le.AppendUint16(h, 1)
	} else {
		h = le.AppendUint16(h, uint16(nph))
		h = le.AppendUint16(h, 0)
		h = le.AppendUint16(h, 0)
	}
	h = le.AppendUint16(h, 0) // e_shstrndx

	h = phdr(h, elf.PT_NOTE, 0, noteOff, 0, noteSize, noteSize, 4)
	for _, s := range segs {
		h = phdr(h, elf.PT_LOAD, s.flags, s.off, s.start, s.filesz, s.end-s.start, pageSize)
	}
	return h, size
}

// xnumSection is section 0 of a core with PN_XNUM program headers: its
// sh_info holds their count.
func xnumSection(nph int) []byte {
	b := make([]byte, shdrSize)
	le.PutUint32(b[44:], uint32(nph))
	return b
}

func phdr(b []byte, typ elf.ProgType, flags elf.ProgFlag, off, vaddr, filesz, memsz, align uint64) []byte {
	b = le.AppendUint32(b, uint32(typ))
	b = le.AppendUint32(b, uint32(flags))
	b = le.AppendUint64(b, off)
	b = le.AppendUint64(b, vaddr)
	b = le.AppendUint64(b, 0) // p_paddr
	b = le.AppendUint64(b, filesz)
	b = le.AppendUint64(b, memsz)
	return le.AppendUint64(b, align)
}
