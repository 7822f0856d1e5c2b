package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
)

// This file builds small synthetic core files for unit tests and for the
// fuzz seed corpus. The layout is the kernel's: ELF header, program
// headers (one PT_NOTE, then the PT_LOADs), the notes, then the dumped
// memory of each PT_LOAD.

type synthNote struct {
	name string
	typ  uint32
	desc []byte
}

type synthLoad struct {
	vaddr uint64
	data  []byte // the dumped bytes (filesz)
	memsz uint64 // 0 means len(data)
}

type synthCore struct {
	class elf.Class
	bo    binary.ByteOrder
	typ   elf.Type
	notes []synthNote
	loads []synthLoad
}

func newSynth(class elf.Class, bo binary.ByteOrder) *synthCore {
	return &synthCore{class: class, bo: bo, typ: elf.ET_CORE}
}

func (c *synthCore) is64() bool { return c.class == elf.ELFCLASS64 }

func (c *synthCore) word(b *bytes.Buffer, v uint64) {
	if c.is64() {
		binary.Write(b, c.bo, v)
	} else {
		binary.Write(b, c.bo, uint32(v))
	}
}

func (c *synthCore) note(name string, typ uint32, desc []byte) *synthCore {
	c.notes = append(c.notes, synthNote{name, typ, desc})
	return c
}

func (c *synthCore) load(vaddr uint64, data []byte) *synthCore {
	c.loads = append(c.loads, synthLoad{vaddr: vaddr, data: data})
	return c
}

func pad4(b *bytes.Buffer) {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}

func (c *synthCore) notesBytes() []byte {
	var b bytes.Buffer
	for _, n := range c.notes {
		c.writeNote(&b, n)
	}
	return b.Bytes()
}

// writeNote appends one ELF note: the header, the name and the
// descriptor, each padded to 4 bytes.
func (c *synthCore) writeNote(b *bytes.Buffer, n synthNote) {
	name := n.name + "\x00"
	binary.Write(b, c.bo, uint32(len(name)))
	binary.Write(b, c.bo, uint32(len(n.desc)))
	binary.Write(b, c.bo, n.typ)
	b.WriteString(name)
	pad4(b)
	b.Write(n.desc)
	pad4(b)
}

// sizes returns e_ehsize and e_phentsize for the class.
func (c *synthCore) sizes() (ehsize, phentsize int) {
	if c.is64() {
		return 64, 56
	}
	return 52, 32
}

// header writes the ELF header of a file of type typ whose phnum program
// headers follow it directly; it has no section headers.
func (c *synthCore) header(b *bytes.Buffer, typ elf.Type, entry uint64, phnum int) {
	ehsize, phentsize := c.sizes()
	data := byte(elf.ELFDATA2LSB)
	if c.bo == binary.BigEndian {
		data = byte(elf.ELFDATA2MSB)
	}
	b.WriteString(elf.ELFMAG)
	b.Write([]byte{byte(c.class), data, 1, 0})
	b.Write(make([]byte, 8))
	binary.Write(b, c.bo, uint16(typ))
	binary.Write(b, c.bo, uint16(elf.EM_X86_64))
	binary.Write(b, c.bo, uint32(1))
	c.word(b, entry)          // e_entry
	c.word(b, uint64(ehsize)) // e_phoff
	c.word(b, 0)              // e_shoff
	binary.Write(b, c.bo, uint32(0))
	binary.Write(b, c.bo, uint16(ehsize))
	binary.Write(b, c.bo, uint16(phentsize))
	binary.Write(b, c.bo, uint16(phnum))
	binary.Write(b, c.bo, uint16(0)) // e_shentsize
	binary.Write(b, c.bo, uint16(0)) // e_shnum
	binary.Write(b, c.bo, uint16(0)) // e_shstrndx
}

// bytes lays out the core.
func (c *synthCore) bytes() []byte {
	ehsize, phentsize := c.sizes()
	phnum := 1 + len(c.loads)
	notes := c.notesBytes()
	noteOff := uint64(ehsize + phnum*phentsize)
	off := noteOff + uint64(len(notes))
	loadOffs := make([]uint64, len(c.loads))
	for i, l := range c.loads {
		loadOffs[i] = off
		off += uint64(len(l.data))
	}

	var b bytes.Buffer
	c.header(&b, c.typ, 0, phnum)
	c.phdr(&b, elf.PT_NOTE, 0, noteOff, 0, uint64(len(notes)), 0, 4)
	for i, l := range c.loads {
		memsz := l.memsz
		if memsz == 0 {
			memsz = uint64(len(l.data))
		}
		c.phdr(&b, elf.PT_LOAD, uint32(elf.PF_R), loadOffs[i], l.vaddr, uint64(len(l.data)), memsz, 1)
	}
	b.Write(notes)
	for _, l := range c.loads {
		b.Write(l.data)
	}
	return b.Bytes()
}

func (c *synthCore) phdr(b *bytes.Buffer, typ elf.ProgType, flags uint32, off, vaddr, filesz, memsz, align uint64) {
	binary.Write(b, c.bo, uint32(typ))
	if c.is64() {
		binary.Write(b, c.bo, flags)
	}
	c.word(b, off)
	c.word(b, vaddr)
	c.word(b, 0) // p_paddr
	c.word(b, filesz)
	c.word(b, memsz)
	if !c.is64() {
		binary.Write(b, c.bo, flags)
	}
	c.word(b, align)
}

// psinfo builds NT_PRPSINFO in the x86-64 layout (136 bytes) or the i386
// layout (124 bytes, 16-bit uid and gid).
func (c *synthCore) psinfo(pid int, fname, args string) []byte {
	var b bytes.Buffer
	b.Write([]byte{'S', 'S', 0, 0}) // state, sname, zomb, nice
	if c.is64() {
		b.Write(make([]byte, 4)) // padding before pr_flag
		binary.Write(&b, c.bo, uint64(0x400600))
		binary.Write(&b, c.bo, uint32(1000)) // uid
		binary.Write(&b, c.bo, uint32(1000)) // gid
	} else {
		binary.Write(&b, c.bo, uint32(0x400600))
		binary.Write(&b, c.bo, uint16(1000))
		binary.Write(&b, c.bo, uint16(1000))
	}
	for _, v := range []int{pid, 1, pid, pid} { // pid, ppid, pgrp, sid
		binary.Write(&b, c.bo, int32(v))
	}
	fn := make([]byte, 16)
	copy(fn, fname)
	b.Write(fn)
	ps := make([]byte, 80)
	copy(ps, args)
	b.Write(ps)
	return b.Bytes()
}

// prstatus builds an NT_PRSTATUS prefix long enough to hold pr_pid.
func (c *synthCore) prstatus(pid int) []byte {
	var b bytes.Buffer
	b.Write(make([]byte, 12+4)) // pr_info, pr_cursig and padding
	c.word(&b, 0)               // pr_sigpend
	c.word(&b, 0)               // pr_sighold
	binary.Write(&b, c.bo, int32(pid))
	b.Write(make([]byte, 64))
	return b.Bytes()
}

// auxv builds NT_AUXV from key, value pairs and appends AT_NULL.
func (c *synthCore) auxv(kv ...uint64) []byte {
	var b bytes.Buffer
	for _, v := range kv {
		c.word(&b, v)
	}
	c.word(&b, 0)
	c.word(&b, 0)
	return b.Bytes()
}

// ntfile builds an NT_FILE payload; offsets in files are in bytes and are
// written in pages of pageSize.
func (c *synthCore) ntfile(pageSize uint64, files ...File) []byte {
	var b bytes.Buffer
	c.word(&b, uint64(len(files)))
	c.word(&b, pageSize)
	for _, f := range files {
		c.word(&b, f.Start)
		c.word(&b, f.End)
		c.word(&b, f.Offset/pageSize)
	}
	for _, f := range files {
		b.WriteString(rawPath(f))
		b.WriteByte(0)
	}
	return b.Bytes()
}

// module builds the first bytes of an ELF shared object: the ELF header,
// a PT_LOAD and a PT_NOTE program header, and a GNU build-id note, as a
// core holds them in the first dumped page of the mapping.
func (c *synthCore) module(buildID string) []byte {
	id, err := hex.DecodeString(buildID)
	if err != nil {
		panic(err)
	}
	ehsize, phentsize := c.sizes()
	noteOff := uint64(ehsize + 2*phentsize)
	var note bytes.Buffer
	c.writeNote(&note, synthNote{"GNU", 3, id}) // NT_GNU_BUILD_ID

	var b bytes.Buffer
	c.header(&b, elf.ET_DYN, 0x1040, 2)
	c.phdr(&b, elf.PT_LOAD, uint32(elf.PF_R), 0, 0, 0x1000, 0x1000, 0x1000)
	c.phdr(&b, elf.PT_NOTE, uint32(elf.PF_R), noteOff, noteOff, uint64(note.Len()), uint64(note.Len()), 4)
	b.Write(note.Bytes())
	return b.Bytes()
}

// pnXNum rewrites a little-endian ELFCLASS64 core b as one with
// e_phnum = PN_XNUM: it appends a section header 0 holding the real count
// in sh_info.
func pnXNum(b []byte) []byte {
	phnum := binary.LittleEndian.Uint16(b[56:])
	shoff := uint64(len(b))
	sh := make([]byte, 64)
	binary.LittleEndian.PutUint32(sh[44:], uint32(phnum))
	b = append(b, sh...)
	binary.LittleEndian.PutUint64(b[40:], shoff)
	binary.LittleEndian.PutUint16(b[58:], 64)
	binary.LittleEndian.PutUint16(b[60:], 1)
	binary.LittleEndian.PutUint16(b[56:], 0xffff)
	return b
}

// Build-ids used by the synthetic cores.
const (
	synthExeID  = "c561f3aa7232f2bd6ac6d56bd475f1c154a00486"
	synthLibcID = "93ac61ec5a8eb1396f9fbd350e3169a558528a40"
)

// synthPython returns a small core of a process "python" (PID 4242) run
// as .venv/bin/python, in the given class and byte order. Its files:
// the executable (header dumped, entry point in its second mapping),
// libc (header dumped), a library whose first page was not dumped, a
// data file that is not ELF, and a deleted library.
func synthPython(class elf.Class, bo binary.ByteOrder) *synthCore {
	c := newSynth(class, bo)
	exe := "/home/u/app/.venv/bin/python"
	var base uint64 = 0x7f00_0000_0000
	if class == elf.ELFCLASS32 {
		base = 0xf700_0000
	}
	stack := base + 0x100_0000
	files := []File{
		{Start: 0x400000, End: 0x401000, Offset: 0, Path: exe},
		{Start: 0x401000, End: 0x403000, Offset: 0x1000, Path: exe},
		{Start: 0x403000, End: 0x404000, Offset: 0x3000, Path: exe},
		{Start: base, End: base + 0x1000, Offset: 0, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{Start: base + 0x1000, End: base + 0x3000, Offset: 0x1000, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{Start: base + 0x10000, End: base + 0x11000, Offset: 0, Path: "/usr/lib/x86_64-linux-gnu/libz.so.1"},
		{Start: base + 0x20000, End: base + 0x21000, Offset: 0, Path: "/usr/lib/locale/C.utf8/LC_CTYPE"},
		{Start: base + 0x30000, End: base + 0x31000, Offset: 0, Path: "/tmp/libgone.so", Deleted: true},
	}
	c.note("CORE", NTPRStatus, c.prstatus(4242))
	c.note("CORE", NTPRPSInfo, c.psinfo(4242, "python", ".venv/bin/python app.py "))
	c.note("LINUX", 0x202, make([]byte, 32)) // NT_X86_XSTATE, ignored
	c.note("CORE", NTAuxv, c.auxv(atPhdr, 0x400040, atEntry, 0x401234, atExecFn, stack+0x10))
	c.note("CORE", NTFile, c.ntfile(0x1000, files...))
	c.load(0x400000, c.module(synthExeID))
	c.load(base, c.module(synthLibcID))
	c.loads = append(c.loads, synthLoad{vaddr: base + 0x10000, memsz: 0x1000}) // not dumped
	c.load(base+0x20000, []byte("not an ELF file"))
	c.load(base+0x30000, c.module("0123456789abcdef"))
	c.load(stack, append(make([]byte, 0x10), ".venv/bin/python\x00"...))
	return c
}
