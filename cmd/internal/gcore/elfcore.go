package gcore

import (
	"debug/elf"
	"encoding/binary"

	"github.com/pyattach/pyattach/detect/core"
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

// segment is one PT_LOAD.
type segment struct {
	start, end uint64
	flags      elf.ProgFlag
	filesz     uint64
	off        uint64 // file offset, set by layout
	perms      string // as maps shows them, for Skip
	path       string
}

// notes is the PT_NOTE segment's content, encoded by detect/core
// (which reads it back).
func notes(p core.PSInfo, threads []thread, auxv []byte, files []core.File, pageSize uint64) []byte {
	var b []byte
	for i, t := range threads {
		fpvalid := false
		for j, s := range t.sets {
			if s != nil && host.regSets[j].fp {
				fpvalid = true
			}
		}
		b = core.AppendNote(b, "CORE", core.NTPRStatus, core.EncodePRStatus64(core.PRStatus{
			Sig: t.sig, PID: t.tid, PPID: p.PPID, PGRP: p.PGRP, SID: p.SID, GRegs: t.gregs, FPValid: fpvalid,
		}))
		if i == 0 {
			b = core.AppendNote(b, "CORE", core.NTPRPSInfo, core.EncodePSInfo64(p))
			if t.siginfo != nil {
				b = core.AppendNote(b, "CORE", core.NTSigInfo, t.siginfo)
			}
			b = core.AppendNote(b, "CORE", core.NTAuxv, auxv)
			b = core.AppendNote(b, "CORE", core.NTFile, core.EncodeNTFile64(files, pageSize))
		}
		for j, s := range t.sets {
			if s != nil {
				b = core.AppendNote(b, host.regSets[j].note, uint32(host.regSets[j].typ), s)
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
