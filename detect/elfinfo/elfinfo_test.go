package elfinfo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

const helloC = `#include <stdio.h>
int answer(int x) { return x * 2; }
int main(void) { printf("%d\n", answer(21)); return 0; }
`

func TestGccFixtureFacts(t *testing.T) {
	dir := t.TempDir()
	full := testenv.CC(t, dir, "full", helloC, "-g", "-O2", "-Wl,--build-id=sha1")
	info, err := Open(full, Options{Producer: true, Dynamic: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := testenv.ReadelfBuildID(t, full); info.BuildID != want || len(want) != 40 {
		t.Errorf("build-id = %q, readelf says %q", info.BuildID, want)
	}
	if !info.DWARF || !info.DebugLine || !info.Symtab || info.Stripped {
		t.Errorf("want DWARF, line table and symtab: %+v", info)
	}
	if info.Producer == nil || info.Producer.GLevel != "2" || info.Producer.OLevel != "2" || !strings.HasPrefix(info.Producer.Compiler, "GNU C") {
		t.Errorf("producer = %+v", info.Producer)
	}
	if len(info.Needed) == 0 || info.Needed[len(info.Needed)-1] != "libc.so.6" {
		t.Errorf("needed = %v", info.Needed)
	}

	g1 := testenv.CC(t, dir, "g1", helloC, "-g1", "-O0")
	info, err = Open(g1, Options{Producer: true})
	if err != nil {
		t.Fatal(err)
	}
	if info.Producer == nil || info.Producer.GLevel != "1" || info.Producer.OLevel != "0" {
		t.Errorf("-g1 -O0 producer = %+v", info.Producer)
	}

	// DWARF 4, compressed sections: the producer is still read.
	z := testenv.CC(t, dir, "z", helloC, "-g3", "-Os", "-gdwarf-4", "-gz")
	info, err = Open(z, Options{Producer: true})
	if err != nil {
		t.Fatal(err)
	}
	if !info.DWARFCompressed || info.Producer == nil || info.Producer.GLevel != "3" || info.Producer.OLevel != "s" {
		t.Errorf("-gz -g3 -Os: compressed=%v producer=%+v", info.DWARFCompressed, info.Producer)
	}

	stripped := testenv.CC(t, dir, "stripped", helloC, "-O2", "-s")
	info, err = Open(stripped, Options{Producer: true})
	if err != nil {
		t.Fatal(err)
	}
	if !info.Stripped || info.DWARF || info.Symtab || info.Producer != nil || info.BuildID == "" {
		t.Errorf("stripped: %+v", info)
	}
}

func TestDebugLinkMatchesObjcopy(t *testing.T) {
	objcopy := testenv.Need(t, "objcopy")
	dir := t.TempDir()
	bin := testenv.CC(t, dir, "prog", helloC, "-g", "-O1")
	dbg := bin + ".debug"
	for _, args := range [][]string{
		{"--only-keep-debug", bin, dbg},
		{"--strip-debug", bin},
		{"--add-gnu-debuglink=" + dbg, bin},
	} {
		if b, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", args, err, b)
		}
	}
	data, err := os.ReadFile(dbg)
	if err != nil {
		t.Fatal(err)
	}
	info, err := Open(bin, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.DebugLink == nil || info.DebugLink.Name != "prog.debug" || info.DebugLink.CRC != crc32.ChecksumIEEE(data) {
		t.Fatalf("debuglink = %+v, want prog.debug with CRC %#x", info.DebugLink, crc32.ChecksumIEEE(data))
	}
	// The separate debug file has no note segments, only note sections.
	id, err := ReadBuildIDFile(dbg)
	if err != nil || id != info.BuildID {
		t.Fatalf("debug file build-id = %q, %v; want %q", id, err, info.BuildID)
	}
}

func TestSystemFilesAgreeWithReadelf(t *testing.T) {
	for _, p := range []string{"/usr/bin/cat", "/usr/bin/gdb", "/usr/bin/python3.11", "/lib/x86_64-linux-gnu/libc.so.6"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		id, err := ReadBuildIDFile(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if want := testenv.ReadelfBuildID(t, p); id != want {
			t.Errorf("%s: build-id %s, readelf %s", p, id, want)
		}
	}
}

func TestNotELFAndTruncated(t *testing.T) {
	if _, err := Read(bytes.NewReader([]byte("#!/bin/sh\necho hi\n")), Options{}); !errors.Is(err, ErrNotELF) {
		t.Errorf("shell script: %v, want ErrNotELF", err)
	}
	if _, err := Read(bytes.NewReader(nil), Options{}); !errors.Is(err, ErrNotELF) {
		t.Errorf("empty file: %v, want ErrNotELF", err)
	}
	dir := t.TempDir()
	bin := testenv.CC(t, dir, "t", helloC, "-g")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{5, 20, 64, 200, len(data) / 2, len(data) - 10} {
		_, err := Read(bytes.NewReader(data[:n]), Options{Producer: true, Dynamic: true})
		if err == nil {
			// Some prefixes still hold everything Read needs; they must
			// then agree with the whole file.
			continue
		}
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotELF) {
			t.Errorf("truncated to %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
}

func TestParseNotes(t *testing.T) {
	le := binary.LittleEndian
	note := func(name string, typ uint32, desc []byte) []byte {
		var b bytes.Buffer
		nm := append([]byte(name), 0)
		binary.Write(&b, le, uint32(len(nm)))
		binary.Write(&b, le, uint32(len(desc)))
		binary.Write(&b, le, typ)
		b.Write(nm)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		b.Write(desc)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		return b.Bytes()
	}
	id := []byte{0xc5, 0x61, 0xf3, 0xaa, 0x72}
	data := append(note("GNU", 1, []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}), note("GNU", NTGNUBuildID, id)...)
	notes, err := ParseNotes(data, le)
	if err != nil || len(notes) != 2 || notes[1].Name != "GNU" || !bytes.Equal(notes[1].Desc, id) {
		t.Fatalf("ParseNotes = %+v, %v", notes, err)
	}
	if _, err := ParseNotes(data[:len(data)-6], le); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated desc: %v", err)
	}
	bad := note("GNU", 3, id)
	le.PutUint32(bad[0:], 0xfffffff0)
	if _, err := ParseNotes(bad, le); !errors.Is(err, ErrCorrupt) {
		t.Errorf("huge namesz: %v", err)
	}
}

func TestParseDebugLink(t *testing.T) {
	b := []byte("python3.11.debug\x00\x00\x00\x00\x78\x56\x34\x12")
	dl, err := ParseDebugLink(b, binary.LittleEndian)
	if err != nil || dl.Name != "python3.11.debug" || dl.CRC != 0x12345678 {
		t.Fatalf("got %+v, %v", dl, err)
	}
	for _, bad := range []string{"", "\x00\x00\x00\x00\x01\x02\x03\x04", "name", "a.debug\x00\x01\x02", "../x\x00\x00\x00\x00\x01\x02\x03\x04", "a/b\x00\x01\x02\x03\x04"} {
		if _, err := ParseDebugLink([]byte(bad), binary.LittleEndian); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", bad, err)
		}
	}
}

func TestParseAltLink(t *testing.T) {
	al, err := ParseAltLink([]byte("/usr/lib/debug/.dwz/x86_64-linux-gnu/coreutils.debug\x00\x76\xeb\x9c"))
	if err != nil || al.Name != "/usr/lib/debug/.dwz/x86_64-linux-gnu/coreutils.debug" || al.BuildID != "76eb9c" {
		t.Fatalf("got %+v, %v", al, err)
	}
	if _, err := ParseAltLink([]byte("x\x00")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("no build-id: %v", err)
	}
}

func TestParseProducer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Producer
	}{
		{"GNU C11 12.2.0 -mtune=generic -march=x86-64 -g -O3 -std=c11 -fPIC",
			Producer{Compiler: "GNU C11", Version: "12.2.0", GLevel: "2", OLevel: "3"}},
		{"GNU GIMPLE 12.2.0 -mtune=generic -march=x86-64 -g -g -O3 -O3 -O3 -fno-openmp -fltrans -fno-PIE",
			Producer{Compiler: "GNU GIMPLE", Version: "12.2.0", GLevel: "2", OLevel: "3", LTO: true}},
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g1 -Og",
			Producer{Compiler: "GNU C17", Version: "12.2.0", GLevel: "1", OLevel: "g"}},
		{"GNU C++17 12.2.0 -ggdb3 -O0 -flto=auto",
			Producer{Compiler: "GNU C++17", Version: "12.2.0", GLevel: "3", OLevel: "0", LTO: true}},
		{"Debian clang version 14.0.6",
			Producer{Compiler: "Debian clang", Version: "14.0.6"}},
		{"", Producer{}},
	} {
		got := ParseProducer(tc.in)
		tc.want.Raw = tc.in
		if got != tc.want {
			t.Errorf("ParseProducer(%q)\n got %+v\nwant %+v", tc.in, got, tc.want)
		}
	}
}

func TestFirstDIEProducerForms(t *testing.T) {
	// DWARF 5 unit: DIE with DW_AT_name (strp), DW_AT_producer (string).
	unit := []byte{0, 0, 0, 0, 5, 0, 1, 8, 0, 0, 0, 0, 1, 9, 0, 0, 0, 'G', 'N', 'U', ' ', 'C', '1', '1', 0}
	unit[0] = byte(len(unit) - 4)
	abbrev := []byte{1, 0x11, 1, 0x03, 0x0e, 0x25, 0x08, 0, 0, 0}
	got, err := FirstDIEProducer(unit, binary.LittleEndian,
		func(off uint64) ([]byte, error) { return abbrev, nil },
		func(sec string, off uint64) (string, error) { return "x.c", nil })
	if err != nil || got != "GNU C11" {
		t.Fatalf("got %q, %v", got, err)
	}
	// DWARF 4 unit with producer as strp.
	unit4 := []byte{0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1, 0x22, 0, 0, 0}
	unit4[0] = byte(len(unit4) - 4)
	abbrev4 := []byte{1, 0x11, 1, 0x25, 0x0e, 0, 0, 0}
	got, err = FirstDIEProducer(unit4, binary.LittleEndian,
		func(off uint64) ([]byte, error) { return abbrev4, nil },
		func(sec string, off uint64) (string, error) {
			if sec != ".debug_str" || off != 0x22 {
				t.Errorf("asked for %s+%#x", sec, off)
			}
			return "GNU C99 9.4.0 -g1", nil
		})
	if err != nil || got != "GNU C99 9.4.0 -g1" {
		t.Fatalf("got %q, %v", got, err)
	}
	// Truncated unit and unknown forms are errors, not panics.
	if _, err := FirstDIEProducer(unit[:10], binary.LittleEndian,
		func(uint64) ([]byte, error) { return abbrev, nil },
		func(string, uint64) (string, error) { return "", nil }); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := FirstDIEProducer(unit, binary.LittleEndian,
		func(uint64) ([]byte, error) { return []byte{1, 0x11, 1, 0x03, 0x7f, 0x25, 0x08, 0, 0, 0}, nil },
		func(string, uint64) (string, error) { return "", nil }); !errors.Is(err, ErrCorrupt) {
		t.Errorf("unknown form: %v", err)
	}
}

// Go's linker puts .note.gnu.build-id outside the PT_NOTE segment (which
// holds only .note.go.buildid); the build-id must still be found.
func TestGoLinkerBuildIDOutsideNoteSegment(t *testing.T) {
	goTool := testenv.Need(t, "go")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	bin := filepath.Join(dir, "x")
	cmd := exec.Command(goTool, "build", "-ldflags=-B 0x0123456789abcdef0123456789abcdef01234567", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	id, err := ReadBuildIDFile(bin)
	if err != nil || id != "0123456789abcdef0123456789abcdef01234567" {
		t.Fatalf("build-id %q, %v", id, err)
	}
	if want := testenv.ReadelfBuildID(t, bin); want != id {
		t.Fatalf("readelf says %q", want)
	}
}
