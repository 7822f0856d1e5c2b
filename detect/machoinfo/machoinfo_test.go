package machoinfo_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// objdumpUUIDs is what llvm-objdump --macho --private-headers says the
// LC_UUID of each architecture is (llvm-objdump 14 has no --uuid).
func objdumpUUIDs(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command(testenv.Need(t, "llvm-objdump-14"), "--macho", "--private-headers", "--arch=all", path).CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-objdump: %v\n%s", err, out)
	}
	var ids []string
	for _, m := range regexp.MustCompile(`(?m)^\s*uuid ([0-9A-F-]{36})$`).FindAllStringSubmatch(string(out), -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestReadFixture(t *testing.T) {
	fx := testenv.MachO(t)
	linked, err := machoinfo.Open(fx.Linked)
	if err != nil {
		t.Fatal(err)
	}
	if linked.Universal || len(linked.Arches) != 1 {
		t.Fatalf("linked: %+v, want one thin arch", linked)
	}
	a := linked.Arches[0]
	if a.CPU != "x86_64" || a.Type != "bundle" || a.DWARF || !a.Symtab {
		t.Errorf("linked: %+v, want an x86_64 bundle with a symbol table and no DWARF", a)
	}
	if want := objdumpUUIDs(t, fx.Linked); len(want) != 1 || a.UUID != want[0] {
		t.Errorf("UUID %s, llvm-objdump says %v", a.UUID, want)
	}
	if len(a.DebugMap) != 1 || a.DebugMap[0] != fx.Object {
		t.Errorf("debug map %q, want [%s]", a.DebugMap, fx.Object)
	}

	stripped, err := machoinfo.Open(fx.SO)
	if err != nil {
		t.Fatal(err)
	}
	if s := stripped.Arches[0]; s.UUID != a.UUID || len(s.DebugMap) != 0 {
		t.Errorf("stripped -x: %+v, want the same UUID and no debug map", s)
	}
	dw, err := machoinfo.Open(fx.DSYMDWARF)
	if err != nil {
		t.Fatal(err)
	}
	if d := dw.Arches[0]; d.Type != "dsym" || !d.DWARF || d.UUID != a.UUID {
		t.Errorf("dSYM DWARF file: %+v, want type dsym with DWARF and UUID %s", d, a.UUID)
	}

	fat, err := machoinfo.Open(fx.Fat)
	if err != nil {
		t.Fatal(err)
	}
	want := objdumpUUIDs(t, fx.Fat)
	if !fat.Universal || len(fat.Arches) != 2 || len(want) != 2 {
		t.Fatalf("fat: %+v (llvm-objdump %v), want two arches", fat, want)
	}
	for i, cpu := range []string{"x86_64", "arm64"} {
		if fat.Arches[i].CPU != cpu || fat.Arches[i].UUID != want[i] {
			t.Errorf("fat arch %d: %s %s, want %s %s", i, fat.Arches[i].CPU, fat.Arches[i].UUID, cpu, want[i])
		}
	}
	if fat.Arch("x86_64").UUID != a.UUID {
		t.Errorf("fat x86_64 UUID %s, want the thin file's %s", fat.Arch("x86_64").UUID, a.UUID)
	}
	fd, err := machoinfo.Open(fat_dwarf(fx))
	if err != nil {
		t.Fatal(err)
	}
	if got := fd.UUIDs(); got["x86_64"] != want[0] || got["arm64"] != want[1] || !fd.Arches[0].DWARF || !fd.Arches[1].DWARF {
		t.Errorf("fat dSYM: %+v, want both arches with DWARF and the binary's UUIDs", fd)
	}
}

func fat_dwarf(fx *testenv.MachOFixture) string {
	return fx.FatDSYM + "/Contents/Resources/DWARF/" + testenv.MachOName
}

// TestRefused: a truncated file and a fat file whose header lies about an
// architecture's offset are refused with a *FormatError saying where.
func TestRefused(t *testing.T) {
	fx := testenv.MachO(t)
	b, err := os.ReadFile(fx.Linked)
	if err != nil {
		t.Fatal(err)
	}
	fat, err := os.ReadFile(fx.Fat)
	if err != nil {
		t.Fatal(err)
	}
	lying := bytes.Clone(fat)
	binary.BigEndian.PutUint32(lying[8+20+8:], uint32(len(fat)+0x1000)) // the arm64 entry's offset
	overlap := bytes.Clone(fat)
	binary.BigEndian.PutUint32(overlap[8+20+8:], binary.BigEndian.Uint32(fat[8+8:])) // arm64 at x86_64's offset
	// A section claiming a million relocations past the end of the file.
	relocs := bytes.Clone(b)
	for off, i := 32, uint32(0); i < binary.LittleEndian.Uint32(b[16:]); i++ {
		cmd, size := binary.LittleEndian.Uint32(b[off:]), int(binary.LittleEndian.Uint32(b[off+4:]))
		if cmd == 0x19 && binary.LittleEndian.Uint32(b[off+64:]) > 0 { // LC_SEGMENT_64 with sections
			binary.LittleEndian.PutUint32(relocs[off+72+56:], uint32(len(b)))
			binary.LittleEndian.PutUint32(relocs[off+72+60:], 1<<20)
			break
		}
		off += size
	}
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"truncated":      {b[:len(b)/2], "the file ends"},
		"headers only":   {b[:40], "load commands"},
		"lying offset":   {lying, "arm64 slice: fat header at offset 0x1c: architecture at offset"},
		"overlap":        {overlap, "overlaps the x86_64 one"},
		"fat header cut": {fat[:12], "fat header"},
		"relocations":    {relocs, "relocations at offset"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := machoinfo.Read(bytes.NewReader(tc.data))
			var fe *machoinfo.FormatError
			if !errors.As(err, &fe) || !errors.Is(err, machoinfo.ErrCorrupt) {
				t.Fatalf("error %v (%T), want a *FormatError", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line naming %q", err, tc.want)
			}
		})
	}
	if _, err := machoinfo.Read(bytes.NewReader([]byte("\x7fELF\x02\x01\x01"))); !errors.Is(err, machoinfo.ErrNotMachO) {
		t.Errorf("ELF magic: %v, want ErrNotMachO", err)
	}
}

func TestFormatUUID(t *testing.T) {
	b := []byte{0x4c, 0x4c, 0x44, 0x71, 0x55, 0x55, 0x31, 0x44, 0xa1, 0xb1, 0x37, 0x1b, 0x07, 0x78, 0x58, 0x87}
	got := machoinfo.FormatUUID(b)
	if got != "4C4C4471-5555-3144-A1B1-371B07785887" || !machoinfo.ValidUUID(got) {
		t.Errorf("FormatUUID = %s", got)
	}
	for _, bad := range []string{"", "4c4c4471-5555-3144-a1b1-371b07785887", "4C4C4471-5555-3144-A1B1-371B0778588/", "../../../../../../../../../../../../x"} {
		if machoinfo.ValidUUID(bad) {
			t.Errorf("ValidUUID(%q) = true", bad)
		}
	}
}
