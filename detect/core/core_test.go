package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

func TestReadSynthetic(t *testing.T) {
	for _, tc := range []struct {
		name  string
		class elf.Class
		bo    binary.ByteOrder
	}{
		{"64-bit LE", elf.ELFCLASS64, binary.LittleEndian},
		{"32-bit LE", elf.ELFCLASS32, binary.LittleEndian},
		{"64-bit BE", elf.ELFCLASS64, binary.BigEndian},
		{"32-bit BE", elf.ELFCLASS32, binary.BigEndian},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := synthPython(tc.class, tc.bo)
			b := c.bytes()
			info, err := Read(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			base := uint64(0x7f00_0000_0000)
			if tc.class == elf.ELFCLASS32 {
				base = 0xf700_0000
			}
			want := &Info{
				PID:        4242,
				Comm:       "python",
				Args:       ".venv/bin/python app.py",
				Owner:      &Owner{UID: 1000, GID: 1000},
				Exe:        "/home/u/app/.venv/bin/python",
				ExeBuildID: synthExeID,
				Machine:    elf.EM_X86_64,
				Threads:    []Thread{{TID: 4242}},
				Files: []File{
					{Start: 0x400000, End: 0x401000, Path: "/home/u/app/.venv/bin/python", BuildID: synthExeID},
					{Start: base, End: base + 0x1000, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6", BuildID: synthLibcID},
					{Start: base + 0x10000, End: base + 0x11000, Path: "/usr/lib/x86_64-linux-gnu/libz.so.1"},
					{Start: base + 0x20000, End: base + 0x21000, Path: "/usr/lib/locale/C.utf8/LC_CTYPE"},
					{Start: base + 0x30000, End: base + 0x31000, Path: "/tmp/libgone.so", Deleted: true, BuildID: "0123456789abcdef"},
				},
			}
			// Every NT_FILE mapping, without build-ids: the lowest of each
			// file's is its entry in Files.
			got := map[File]bool{}
			for _, m := range info.Mappings {
				got[m] = true
			}
			for _, f := range want.Files {
				f.BuildID = ""
				if !got[f] {
					t.Errorf("Mappings %+v lack %+v", info.Mappings, f)
				}
			}
			if len(info.Mappings) != 8 {
				t.Errorf("%d mappings, want 8", len(info.Mappings))
			}
			want.Mappings = info.Mappings
			if !reflect.DeepEqual(info, want) {
				t.Errorf("Read =\n%+v\nwant\n%+v", info, want)
			}
			if len(b) > 16<<10 {
				t.Errorf("synthetic core is %d bytes", len(b))
			}
		})
	}
}

// TestExeFallbacks removes, one after the other, the facts that name the
// executable, and checks the next one in the documented order is used.
func TestExeFallbacks(t *testing.T) {
	exe := "/home/u/app/.venv/bin/python"
	withAuxv := func(c *synthCore, aux []byte) *synthCore {
		for i, n := range c.notes {
			if n.typ == NTAuxv {
				c.notes[i].desc = aux
			}
		}
		return c
	}
	le := binary.LittleEndian
	stack := uint64(0x7f00_0000_0000 + 0x100_0000)
	tests := []struct {
		name, exe, buildID string
		core               func() *synthCore
	}{
		{"entry", exe, synthExeID, func() *synthCore { return synthPython(elf.ELFCLASS64, le) }},
		{"phdr when entry is unmapped", exe, synthExeID, func() *synthCore {
			c := synthPython(elf.ELFCLASS64, le)
			return withAuxv(c, c.auxv(atEntry, 0x999999, atPhdr, 0x400040))
		}},
		{"relative execfn completed from NT_FILE", exe, synthExeID, func() *synthCore {
			c := synthPython(elf.ELFCLASS64, le)
			return withAuxv(c, c.auxv(atEntry, 0x999999, atExecFn, stack+0x10))
		}},
		{"execfn not in NT_FILE", "/opt/py/bin/python3", "", func() *synthCore {
			c := synthPython(elf.ELFCLASS64, le)
			c.loads[len(c.loads)-1].data = []byte("/opt/py/bin/python3\x00")
			return withAuxv(c, c.auxv(atEntry, 0x999999, atExecFn, stack))
		}},
		{"execfn without NUL falls back to comm", exe, synthExeID, func() *synthCore {
			c := synthPython(elf.ELFCLASS64, le)
			c.loads[len(c.loads)-1].data = []byte("/opt/py/bin/python3")
			return withAuxv(c, c.auxv(atExecFn, stack))
		}},
		{"comm", exe, synthExeID, func() *synthCore {
			c := synthPython(elf.ELFCLASS64, le)
			return withAuxv(c, nil)
		}},
		{"nothing", "", "", func() *synthCore {
			c := synthPython(elf.ELFCLASS64, le)
			withAuxv(c, nil)
			c.notes[1].desc = c.psinfo(4242, "ruby", "")
			return c
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := Read(bytes.NewReader(tc.core().bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if info.Exe != tc.exe || info.ExeBuildID != tc.buildID {
				t.Errorf("Exe, ExeBuildID = %q, %q; want %q, %q", info.Exe, info.ExeBuildID, tc.exe, tc.buildID)
			}
		})
	}
}

func TestCommOf15BytesMatchesLongerName(t *testing.T) {
	c := newSynth(elf.ELFCLASS64, binary.LittleEndian)
	long := "/opt/bin/python3.12-custom-build"
	c.note("CORE", NTPRPSInfo, c.psinfo(7, "python3.12-cust", long))
	c.note("CORE", NTFile, c.ntfile(0x1000, File{Start: 0x1000, End: 0x2000, Path: "/lib/libc.so.6"}, File{Start: 0x5000, End: 0x6000, Path: long}))
	info, err := Read(bytes.NewReader(c.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if info.Exe != long {
		t.Errorf("Exe = %q, want %q", info.Exe, long)
	}
}

func TestPIDFromPRStatusWithoutPRPSInfo(t *testing.T) {
	for _, class := range []elf.Class{elf.ELFCLASS64, elf.ELFCLASS32} {
		c := newSynth(class, binary.LittleEndian)
		c.note("CORE", NTPRStatus, c.prstatus(31337))
		c.note("CORE", NTPRStatus, c.prstatus(31338)) // second thread
		info, err := Read(bytes.NewReader(c.bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if info.PID != 31337 || info.Comm != "" || info.Exe != "" || len(info.Files) != 0 {
			t.Errorf("%v: Read = %+v", class, info)
		}
	}
}

func TestDeduplicatesByPathKeepingLowestStart(t *testing.T) {
	c := newSynth(elf.ELFCLASS64, binary.LittleEndian)
	lib := "/usr/lib/libpython3.12.so.1.0"
	// Out of order, and the lowest mapping of the path is not at offset 0
	// (a hostile or odd core); the build-id still comes from the one
	// that is.
	c.note("CORE", NTFile, c.ntfile(0x1000,
		File{Start: 0x20000, End: 0x21000, Offset: 0, Path: lib},
		File{Start: 0x10000, End: 0x11000, Offset: 0x5000, Path: lib},
		File{Start: 0x30000, End: 0x31000, Offset: 0, Path: lib, Deleted: true},
	))
	c.load(0x20000, c.module(synthLibcID))
	info, err := Read(bytes.NewReader(c.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Start: 0x10000, End: 0x11000, Offset: 0x5000, Path: lib, BuildID: synthLibcID},
		{Start: 0x30000, End: 0x31000, Path: lib, Deleted: true},
	}
	if !reflect.DeepEqual(info.Files, want) {
		t.Errorf("Files =\n%+v\nwant\n%+v", info.Files, want)
	}
}

// TestBuildIDNoteOutsideFirstMapping puts the module's note in a later
// mapping of the file (at a file offset the first mapping does not cover).
func TestBuildIDNoteOutsideFirstMapping(t *testing.T) {
	c := newSynth(elf.ELFCLASS64, binary.LittleEndian)
	lib := "/usr/lib/libfoo.so"
	mod := c.module(synthLibcID)
	hdr := mod[:64+2*56]
	note := mod[64+2*56:]
	// Point PT_NOTE at file offset 0x2010.
	binary.LittleEndian.PutUint64(hdr[64+56+8:], 0x2010)
	c.note("CORE", NTFile, c.ntfile(0x1000,
		File{Start: 0x40000, End: 0x40100, Offset: 0, Path: lib},
		File{Start: 0x50000, End: 0x51000, Offset: 0x2000, Path: lib},
	))
	c.load(0x40000, hdr)
	c.load(0x50000, append(make([]byte, 0x10), note...))
	info, err := Read(bytes.NewReader(c.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Files) != 1 || info.Files[0].BuildID != synthLibcID {
		t.Errorf("Files = %+v", info.Files)
	}
}

func TestReadErrors(t *testing.T) {
	good := synthPython(elf.ELFCLASS64, binary.LittleEndian).bytes()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	notCore := synthPython(elf.ELFCLASS64, binary.LittleEndian)
	notCore.typ = elf.ET_DYN
	headerOnly := good[:64]
	hugePhnum := bytes.Clone(good)
	binary.LittleEndian.PutUint16(hugePhnum[56:], 0xffff) // PN_XNUM without section headers
	badPhentsize := bytes.Clone(good)
	binary.LittleEndian.PutUint16(badPhentsize[54:], 8)
	hugeNote := bytes.Clone(good)
	binary.LittleEndian.PutUint64(hugeNote[64+32:], 1<<40) // PT_NOTE p_filesz
	badFile := synthPython(elf.ELFCLASS64, binary.LittleEndian)
	badFile.notes[4].desc = badFile.notes[4].desc[:40]
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, elfinfo.ErrNotELF},
		{"text", []byte("#!/bin/sh\necho hello\n"), elfinfo.ErrNotELF},
		{"short magic", []byte("\x7fEL"), elfinfo.ErrNotELF},
		{"test binary", exe, ErrNotCore},
		{"shared object type", notCore.bytes(), ErrNotCore},
		{"ident only", good[:16], elfinfo.ErrCorrupt},
		{"header without program headers", headerOnly, elfinfo.ErrCorrupt},
		{"cut in program headers", good[:64+56+20], elfinfo.ErrCorrupt},
		{"cut in notes", good[:64+6*56+200], elfinfo.ErrCorrupt},
		{"PN_XNUM without section header", hugePhnum, elfinfo.ErrCorrupt},
		{"bad phentsize", badPhentsize, elfinfo.ErrCorrupt},
		{"note segment larger than the file", hugeNote, elfinfo.ErrCorrupt},
		{"NT_FILE names missing", badFile.bytes(), elfinfo.ErrCorrupt},
		{"bad class", append([]byte("\x7fELF\x07\x01\x01"), make([]byte, 60)...), elfinfo.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := Read(bytes.NewReader(tc.b))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Read = %+v, %v; want %v", info, err, tc.want)
			}
		})
	}
}

// TestTruncatedMemory cuts a core inside its memory image: the notes are
// intact, so Read succeeds, reports Truncated, and loses only the
// build-ids it can no longer read.
func TestTruncatedMemory(t *testing.T) {
	c := synthPython(elf.ELFCLASS64, binary.LittleEndian)
	b := c.bytes()
	full, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if full.Truncated {
		t.Error("whole core reported truncated")
	}
	// Keep the executable's page, lose libc's and everything after.
	end := len(b) - len(c.loads[len(c.loads)-1].data) - len(c.loads[len(c.loads)-2].data) -
		len(c.loads[len(c.loads)-3].data) - len(c.loads[len(c.loads)-5].data) + 10
	info, err := Read(bytes.NewReader(b[:end]))
	if err != nil {
		t.Fatal(err)
	}
	if !info.Truncated {
		t.Error("Truncated = false")
	}
	if info.ExeBuildID != synthExeID || info.Files[1].BuildID != "" {
		t.Errorf("ExeBuildID %q, libc build-id %q", info.ExeBuildID, info.Files[1].BuildID)
	}
}

func TestPNXNUM(t *testing.T) {
	b := pnXNum(synthPython(elf.ELFCLASS64, binary.LittleEndian).bytes())
	info, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if info.ExeBuildID != synthExeID || len(info.Files) != 5 {
		t.Errorf("Read = %+v", info)
	}
}

func TestNoteNamesOtherThanCOREAreIgnored(t *testing.T) {
	c := newSynth(elf.ELFCLASS64, binary.LittleEndian)
	c.note("LINUX", NTPRPSInfo, c.psinfo(1, "evil", "evil"))
	c.note("CORE", NTPRPSInfo, c.psinfo(2, "good", "good"))
	c.note("GNU", NTFile, []byte{0xff})
	info, err := Read(bytes.NewReader(c.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if info.PID != 2 || info.Comm != "good" {
		t.Errorf("Read = %+v", info)
	}
}
