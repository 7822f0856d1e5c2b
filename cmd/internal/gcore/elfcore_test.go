package gcore

import (
	"bytes"
	"debug/elf"
	"testing"

	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestDecide: what the core holds of each kind of mapping, with the
// kernel's default coredump_filter and with others.
func TestDecide(t *testing.T) {
	area := func(perms, path string, anon uint64, flags ...string) proc.Area {
		a := proc.Area{Mapping: proc.Mapping{Start: 0x1000, End: 0x3000, Offset: 0x1000, Perms: perms, Path: path}, Anonymous: anon, VmFlags: flags}
		if path != "" && path[0] == '/' {
			a.Inode = 42
		}
		return a
	}
	type want struct {
		ext extent
		why string
	}
	dflt := func(a proc.Area) want { e, w := decide(a, DefaultFilter); return want{e, w} }
	testenv.Cases(t, "decide", func(k string) want {
		return dflt(map[string]proc.Area{
			"heap":        area("rw-p", "[heap]", 0),
			"anon":        area("rw-p", "", 0),
			"stack":       area("rw-p", "[stack]", 0),
			"vdso":        area("r-xp", "[vdso]", 0),
			"guard":       area("---p", "", 0),
			"vvar":        area("r--p", "[vvar]", 0),
			"vsyscall":    area("--xp", "[vsyscall]", 0),
			"text":        area("r-xp", "/usr/bin/python3.11", 0),
			"relro":       area("r--p", "/usr/lib/libc.so.6", 4096),
			"data":        area("rw-p", "/usr/lib/libc.so.6", 4096),
			"data-clean":  area("rw-p", "/usr/lib/libc.so.6", 0),
			"shm-anon":    area("rw-s", "/dev/zero", 0),
			"shared-file": area("rw-s", "/srv/db", 0),
			"dontdump":    area("rw-p", "", 0, "rd", "wr", "dd"),
			"io":          area("rw-s", "/dev/mem", 0, "io"),
		}[k])
	}, map[string]want{
		"heap":        {dumpAll, ""},
		"anon":        {dumpAll, ""},
		"stack":       {dumpAll, ""},
		"vdso":        {dumpAll, ""},
		"guard":       {dumpNone, ReasonNoRead},
		"vvar":        {dumpNone, ReasonVvar},
		"vsyscall":    {omit, ReasonVsyscall},
		"text":        {dumpNone, ReasonFile},
		"relro":       {dumpAll, ""},
		"data":        {dumpAll, ""},
		"data-clean":  {dumpNone, ReasonFile},
		"shared-file": {dumpNone, ReasonFile},
		"dontdump":    {dumpNone, ReasonDontDump},
		"io":          {dumpNone, ReasonIO},
	})
	hdr := area("r--p", "/usr/bin/python3.11", 0)
	hdr.Offset = 0
	if e, _ := decide(area("rw-s", "/dev/zero", 0), DefaultFilter); e != dumpNone {
		t.Errorf("a shared mapping of a file: %v, want nothing", e)
	}
	if e, _ := decide(hdr, DefaultFilter); e != dumpHeader {
		t.Errorf("the first mapping of a file: %v, want its ELF header page", e)
	}
	if e, _ := decide(hdr, DefaultFilter&^filterELFHeaders); e != dumpNone {
		t.Errorf("without filter bit 4: %v, want nothing", e)
	}
	shm := area("rw-s", "/dev/zero", 0)
	shm.Deleted = true
	if e, _ := decide(shm, DefaultFilter); e != dumpAll {
		t.Errorf("shared anonymous memory: %v, want all", e)
	}
	if e, _ := decide(area("rw-p", "", 0), 0); e != dumpNone {
		t.Errorf("anonymous memory with filter 0: %v, want nothing", e)
	}
	if e, _ := decide(area("r-xp", "/usr/bin/python3.11", 0), DefaultFilter|filterFilePrivate); e != dumpAll {
		t.Errorf("text with filter bit 2: %v, want all", e)
	}
}

// TestCoreReadBack: a core made of notes and segments as Take writes
// them reads back through detect/core: pid, comm, arguments, owner,
// NT_FILE mappings, the executable (by AT_ENTRY) and its build-id from
// the ELF header page.
func TestCoreReadBack(t *testing.T) {
	const page = 4096
	// An ELF header page with a build-id note, as a mapped executable's
	// first page holds it.
	hdr := make([]byte, page)
	copy(hdr, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le.PutUint16(hdr[16:], uint16(elf.ET_EXEC))
	le.PutUint16(hdr[18:], uint16(elf.EM_X86_64))
	le.PutUint32(hdr[20:], 1)
	le.PutUint64(hdr[32:], 64) // e_phoff
	le.PutUint16(hdr[52:], 64)
	le.PutUint16(hdr[54:], 56)
	le.PutUint16(hdr[56:], 1)
	id := []byte{0xc5, 0x61, 0xf3, 0xaa, 0x72, 0x32, 0xf2, 0xbd, 0x6a, 0xc6, 0xd5, 0x6b, 0xd4, 0x75, 0xf1, 0xc1, 0x54, 0xa0, 0x04, 0x86}
	gnu := note(nil, "GNU", 3, id)
	copy(hdr[0x200:], gnu)
	copy(hdr[64:], phdr(nil, elf.PT_NOTE, elf.PF_R, 0x200, 0x400200, uint64(len(gnu)), uint64(len(gnu)), 4))

	p := process{pid: 4242, ppid: 1, pgrp: 4242, sid: 4242, uid: 1000, gid: 1001, state: 'S', comm: "python3.11", args: []byte("/usr/bin/python3.11\x00app.py\x00")}
	threads := []thread{{tid: 4242, gregs: make([]byte, host.gregSize)}, {tid: 4243, gregs: make([]byte, host.gregSize)}}
	var auxv []byte
	for _, kv := range [][2]uint64{{9, 0x401000}, {6, page}, {0, 0}} { // AT_ENTRY, AT_PAGESZ, AT_NULL
		auxv = le.AppendUint64(auxv, kv[0])
		auxv = le.AppendUint64(auxv, kv[1])
	}
	files := []fileEntry{{0x400000, 0x401000, 0, "/usr/bin/python3.11"}, {0x401000, 0x403000, 1, "/usr/bin/python3.11"}}
	segs := []segment{{start: 0x400000, end: 0x401000, flags: elf.PF_R, filesz: page}, {start: 0x401000, end: 0x403000, flags: elf.PF_R | elf.PF_X}}
	nt := notes(p, threads, auxv, files, page)
	head, size := layout(segs, uint64(len(nt)), page)
	img := make([]byte, size)
	copy(img, head)
	copy(img[len(head):], nt)
	copy(img[segs[0].off:], hdr)

	info, err := core.Read(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if info.PID != 4242 || info.Comm != "python3.11" || info.Args != "/usr/bin/python3.11 app.py" {
		t.Errorf("core says pid %d, comm %q, args %q", info.PID, info.Comm, info.Args)
	}
	if info.Owner == nil || info.Owner.UID != 1000 || info.Owner.GID != 1001 {
		t.Errorf("owner %+v, want 1000:1001", info.Owner)
	}
	if info.Exe != "/usr/bin/python3.11" || info.ExeBuildID != "c561f3aa7232f2bd6ac6d56bd475f1c154a00486" {
		t.Errorf("exe %q build-id %q", info.Exe, info.ExeBuildID)
	}
	if len(info.Mappings) != 2 || info.Mappings[1].Offset != page {
		t.Errorf("mappings %+v", info.Mappings)
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != elf.ET_CORE || len(f.Progs) != 3 || f.Progs[2].Memsz != 2*page || f.Progs[2].Filesz != 0 {
		t.Errorf("headers: type %v, %d program headers", f.Type, len(f.Progs))
	}
}

// TestLayoutXNum: past 65534 program headers the count moves to section
// 0's sh_info (PN_XNUM), which debug/elf reads back.
func TestLayoutXNum(t *testing.T) {
	segs := make([]segment, pnXNum)
	for i := range segs {
		segs[i] = segment{start: uint64(i) * 4096, end: uint64(i+1) * 4096, flags: elf.PF_R}
	}
	head, size := layout(segs, 0, 4096)
	img := make([]byte, size)
	copy(img, head)
	copy(img[size-shdrSize:], xnumSection(len(segs)+1))
	// debug/elf does not read PN_XNUM: the fields themselves.
	shoff := le.Uint64(img[40:])
	if le.Uint16(img[56:]) != pnXNum || le.Uint16(img[60:]) != 1 || shoff != size-shdrSize {
		t.Fatalf("e_phnum %#x, e_shnum %d, e_shoff %#x", le.Uint16(img[56:]), le.Uint16(img[60:]), shoff)
	}
	if n := le.Uint32(img[shoff+44:]); n != uint32(len(segs)+1) {
		t.Errorf("sh_info %d, want %d", n, len(segs)+1)
	}
	if got := le.Uint64(img[64+56*uint64(len(segs))+16:]); got != segs[len(segs)-1].start {
		t.Errorf("last PT_LOAD at %#x, want %#x", got, segs[len(segs)-1].start)
	}
}
