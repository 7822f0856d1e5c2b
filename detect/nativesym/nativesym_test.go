package nativesym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// fixtureSrc has a static function (in .symtab only) and an exported
// one, each on known lines.
const fixtureSrc = `#include <stdio.h>

static int __attribute__((noinline)) helper(int x)
{
	return x * 3 + 1;
}

int __attribute__((noinline)) exported(int x)
{
	return helper(x) + 2;
}

int main(int argc, char **argv)
{
	printf("%d\n", exported(argc));
	return 0;
}
`

// files opens the module itself and, when debug is set, that file as
// its separate debug file.
type files struct{ debug string }

func (f files) Open(r Region) (File, error) { return os.Open(r.Path) }
func (f files) OpenDebug(r Region) (File, error) {
	if f.debug == "" {
		return nil, nil
	}
	return os.Open(f.debug)
}

// region maps path at base as the loader would (PIE: offset 0 at base).
func region(t *testing.T, path string, base uint64) []Region {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Region
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			start := base + p.Vaddr&^0xfff
			out = append(out, Region{Start: start, End: base + p.Vaddr + p.Memsz, Offset: p.Off &^ 0xfff, Path: path})
		}
	}
	return out
}

// TestLookup: a PIE built with DWARF (plain and with compressed debug
// sections), the same stripped with its symbols and DWARF in a separate
// file, and stripped with none: the static function is named from
// .symtab (the module's or the debug file's), with file and line from
// the line table; with nothing but .dynsym only the exported function
// is named, with no line.
func TestLookup(t *testing.T) {
	dir := t.TempDir()
	plain := testenv.CC(t, dir, "plain", fixtureSrc, "-g", "-O1", "-fPIE", "-pie", "-rdynamic")
	gz := testenv.CC(t, dir, "gz", fixtureSrc, "-g", "-O1", "-fPIE", "-pie", "-rdynamic", "-gz")
	objcopy := testenv.Need(t, "objcopy")
	strip := testenv.Need(t, "strip")
	dbg := filepath.Join(dir, "plain.debug")
	stripped := filepath.Join(dir, "stripped")
	for _, c := range [][]string{
		{objcopy, "--only-keep-debug", plain, dbg},
		{strip, "--strip-all", "-o", stripped, plain},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	helper, exported := testenv.SymbolAddr(t, plain, "helper"), testenv.SymbolAddr(t, plain, "exported")
	const base = 0x5555_0000_0000
	for _, tc := range []struct {
		name, path, debug string
		lines, static     bool
	}{
		{"dwarf", plain, "", true, true},
		{"compressed", gz, "", true, true},
		{"debug-file", stripped, dbg, true, true},
		{"dynsym-only", stripped, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := New(region(t, tc.path, base), files{tc.debug})
			defer tab.Close()
			h := tab.Lookup(base + helper + 1)
			e := tab.Lookup(base + exported + 1)
			if tc.static && h.Function != "helper" || !tc.static && h.Function != "" {
				t.Errorf("helper: %+v", h)
			}
			if e.Function != "exported" {
				t.Errorf("exported: %+v", e)
			}
			if tc.lines {
				if !strings.HasSuffix(h.File, "plain.c") && !strings.HasSuffix(h.File, "gz.c") || h.Line < 3 || h.Line > 6 {
					t.Errorf("helper's line: %+v, want lines 3-6 of the source", h)
				}
				if e.Line < 8 || e.Line > 11 {
					t.Errorf("exported's line: %+v, want lines 8-11", e)
				}
			} else if h.File != "" || e.File != "" {
				t.Errorf("lines without DWARF: %+v %+v", h, e)
			}
			if f := tab.Lookup(base - 1); f != (Frame{}) {
				t.Errorf("an address outside every mapping: %+v", f)
			}
		})
	}
}

// TestParseAranges: one 64-bit-address unit with padding and two
// ranges, an empty range dropped, a truncated second unit reported
// with what was read.
func TestParseAranges(t *testing.T) {
	var b bytes.Buffer
	le := binary.LittleEndian
	unit := func(off uint32, ranges [][2]uint64) []byte {
		var u bytes.Buffer
		binary.Write(&u, le, uint16(2))
		binary.Write(&u, le, off)
		u.Write([]byte{8, 0})
		u.Write(make([]byte, 4)) // to 16 bytes from the unit's start
		for _, r := range ranges {
			binary.Write(&u, le, r)
		}
		binary.Write(&u, le, [2]uint64{})
		var h bytes.Buffer
		binary.Write(&h, le, uint32(u.Len()))
		h.Write(u.Bytes())
		return h.Bytes()
	}
	b.Write(unit(0x40, [][2]uint64{{0x2000, 0x10}, {0x1000, 0x20}, {0x3000, 0}}))
	a, err := parseAranges(b.Bytes(), le)
	if err != nil || len(a) != 2 || a[0] != (arange{0x1000, 0x1020, 0x40}) || a[1] != (arange{0x2000, 0x2010, 0x40}) {
		t.Fatalf("parseAranges = %+v, %v", a, err)
	}
	if u, ok := findArange(a, 0x201f); ok {
		t.Errorf("0x201f in unit %#x", u)
	}
	if u, ok := findArange(a, 0x100f); !ok || u != 0x40 {
		t.Errorf("0x100f: %#x %v", u, ok)
	}
	first := b.Len()
	b.Write([]byte{0x40, 0, 0, 0, 2})
	a, err = parseAranges(b.Bytes(), le)
	var fe *elfinfo.FormatError
	if len(a) != 2 || !errors.As(err, &fe) || fe.Section != ".debug_aranges" || fe.Off != int64(first) {
		t.Errorf("truncated: %+v, %v", a, err)
	}
}

// FuzzParseAranges: any bytes give sorted, non-empty ranges and, on
// error, an elfinfo.FormatError inside the input.
func FuzzParseAranges(f *testing.F) {
	f.Add([]byte("\x2c\x00\x00\x00\x02\x00\x40\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\xff\xff\xff\xff\x10\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			a, err := parseAranges(b, bo)
			if err != nil {
				var fe *elfinfo.FormatError
				if !errors.As(err, &fe) || fe.Off < 0 || fe.Off > int64(len(b)) || !errors.Is(err, elfinfo.ErrCorrupt) {
					t.Fatalf("error %v is not a FormatError inside the input", err)
				}
			}
			for i, r := range a {
				if r.hi <= r.lo || i > 0 && a[i-1].lo > r.lo {
					t.Fatalf("ranges %+v", a)
				}
			}
		}
	})
}

// bytesFile is a module held in memory.
type bytesFile struct{ *bytes.Reader }

func (bytesFile) Close() error { return nil }

type memFiles struct{ obj, debug []byte }

func (m memFiles) Open(Region) (File, error) { return bytesFile{bytes.NewReader(m.obj)}, nil }
func (m memFiles) OpenDebug(Region) (File, error) {
	if m.debug == nil {
		return nil, nil
	}
	return bytesFile{bytes.NewReader(m.debug)}, nil
}

// FuzzLookup feeds arbitrary module and debug file bytes to a Table:
// it must not panic, and must not name what it cannot read. Seeds: the
// fixture binary with DWARF, compressed DWARF, and its debug file.
func FuzzLookup(f *testing.F) {
	dir := f.TempDir()
	plain := testenv.CC(f, dir, "plain", fixtureSrc, "-g", "-O1", "-fPIE", "-pie")
	gz := testenv.CC(f, dir, "gz", fixtureSrc, "-g", "-O1", "-fPIE", "-pie", "-gz")
	for _, p := range []string{plain, gz} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte(nil), uint64(0x1139))
		f.Add([]byte("\x7fELF\x02\x01\x01"), b, uint64(0x1139))
	}
	f.Fuzz(func(t *testing.T, obj, debug []byte, pc uint64) {
		tab := New([]Region{{Start: 0, End: 1 << 40, Offset: 0, Path: "/m"}}, memFiles{obj, debug})
		defer tab.Close()
		for _, a := range []uint64{pc, pc + 1, pc &^ 0xfff, 0x1139} {
			fr := tab.Lookup(a)
			if fr.File != "" && fr.Function == "" {
				t.Fatalf("a line without a function: %+v", fr)
			}
		}
	})
}

// TestRanges: a function's run-time range from a stripped module's
// separate debug file, none for a module not asked for or a name that
// is only a prefix of the function's.
func TestRanges(t *testing.T) {
	dir := t.TempDir()
	plain := testenv.CC(t, dir, "plain", fixtureSrc, "-g", "-O1", "-fPIE", "-pie", "-rdynamic")
	objcopy := testenv.Need(t, "objcopy")
	strip := testenv.Need(t, "strip")
	dbg := filepath.Join(dir, "plain.debug")
	stripped := filepath.Join(dir, "stripped")
	for _, c := range [][]string{
		{objcopy, "--only-keep-debug", plain, dbg},
		{strip, "--strip-all", "-o", stripped, plain},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	f, err := elf.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := f.Symbols()
	f.Close()
	var size uint64
	for _, s := range ss {
		if s.Name == "helper" {
			size = s.Size
		}
	}
	if size == 0 {
		t.Fatal("helper has no size")
	}
	const base = 0x5555_0000_0000
	tab := New(region(t, stripped, base), files{dbg})
	defer tab.Close()
	lo := base + testenv.SymbolAddr(t, plain, "helper")
	if got := tab.Ranges(func(p string) bool { return p == stripped }, "helper"); len(got) != 1 || got[0] != [2]uint64{lo, lo + size} {
		t.Errorf("helper: %#x, want [%#x %#x)", got, lo, lo+size)
	}
	if got := tab.Ranges(func(p string) bool { return p == stripped }, "help"); len(got) != 0 {
		t.Errorf("help: %#x, want none", got)
	}
	if got := tab.Ranges(func(string) bool { return false }, "helper"); len(got) != 0 {
		t.Errorf("no module asked for: %#x", got)
	}
}
