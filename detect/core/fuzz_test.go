package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the fuzz seed corpus in testdata/fuzz")

// FuzzParseNTFile feeds arbitrary NT_FILE payloads to the parser in every
// class and byte order. The seed corpus is testdata/fuzz/FuzzParseNTFile.
func FuzzParseNTFile(f *testing.F) {
	f.Add(cat(le64(1, 4096, 0x400000, 0x401000, 0), []byte("/usr/bin/python3.11\x00")), false, false)
	f.Add(cat(le32(1, 4096, 0x8048000, 0x8049000, 0), []byte("/a (deleted)\x00")), true, false)
	f.Add(cat(le64(1<<60, 4096, 1, 2, 0), []byte("/x\x00")), false, false)
	f.Fuzz(func(t *testing.T, desc []byte, is32, big bool) {
		class, ws := elf.ELFCLASS64, 8
		if is32 {
			class, ws = elf.ELFCLASS32, 4
		}
		var bo binary.ByteOrder = binary.LittleEndian
		if big {
			bo = binary.BigEndian
		}
		files, err := ParseNTFile(desc, bo, class)
		if err != nil {
			var fe *elfinfo.FormatError
			if !errors.As(err, &fe) || fe.Section != "NT_FILE" || fe.Off > int64(len(desc)) || !errors.Is(err, elfinfo.ErrCorrupt) {
				t.Fatalf("error %v (%T): want a *elfinfo.FormatError in NT_FILE within the %d bytes", err, err, len(desc))
			}
			return
		}
		if max := len(desc) / (3*ws + 1); len(files) > max {
			t.Fatalf("%d files from %d bytes", len(files), len(desc))
		}
		for _, f := range files {
			if f.End < f.Start {
				t.Fatalf("mapping %+v ends before it starts", f)
			}
			if len(f.Path) > len(desc) {
				t.Fatalf("path longer than the payload")
			}
		}
	})
}

// FuzzRead feeds whole files to Read. The seed corpus in
// testdata/fuzz/FuzzRead holds the small synthetic cores of synthSeeds.
func FuzzRead(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := Read(bytes.NewReader(b))
		if err != nil {
			var fe *elfinfo.FormatError
			if !errors.As(err, &fe) && !errors.Is(err, elfinfo.ErrNotELF) && !errors.Is(err, ErrNotCore) {
				t.Fatalf("error %v (%T): want a *elfinfo.FormatError, ErrNotELF or ErrNotCore", err, err)
			}
			return
		}
		if !sort.SliceIsSorted(info.Files, func(i, j int) bool { return info.Files[i].Start < info.Files[j].Start }) {
			t.Fatalf("files not sorted: %+v", info.Files)
		}
		seen := map[string]bool{}
		ids := map[string]bool{"": true}
		for _, f := range info.Files {
			if seen[rawPath(f)] {
				t.Fatalf("path %q twice", rawPath(f))
			}
			seen[rawPath(f)] = true
			if _, err := hex.DecodeString(f.BuildID); err != nil {
				t.Fatalf("build-id %q is not hex", f.BuildID)
			}
			ids[f.BuildID] = true
		}
		if !ids[info.ExeBuildID] {
			t.Fatalf("ExeBuildID %q is no file's", info.ExeBuildID)
		}
		if len(info.Comm) > 16 || len(info.Args) > 80 {
			t.Fatalf("comm %q or args %q too long", info.Comm, info.Args)
		}
	})
}

// synthSeeds are the FuzzRead seeds: small synthetic cores, each under
// 16 KB, covering both classes and byte orders, every note Read uses,
// the exe fallbacks and a PN_XNUM core.
func synthSeeds() map[string][]byte {
	seeds := map[string][]byte{
		"python-64le": synthPython(elf.ELFCLASS64, binary.LittleEndian).bytes(),
		"python-32le": synthPython(elf.ELFCLASS32, binary.LittleEndian).bytes(),
		"python-64be": synthPython(elf.ELFCLASS64, binary.BigEndian).bytes(),
		"python-32be": synthPython(elf.ELFCLASS32, binary.BigEndian).bytes(),
	}
	c := synthPython(elf.ELFCLASS64, binary.LittleEndian)
	c.notes[3].desc = c.auxv(atExecFn, 0x7f00_0000_0000+0x100_0000+0x10)
	seeds["execfn-64le"] = c.bytes()

	c = newSynth(elf.ELFCLASS64, binary.LittleEndian)
	c.note("CORE", NTPRStatus, c.prstatus(9))
	seeds["prstatus-only"] = c.bytes()

	c = newSynth(elf.ELFCLASS64, binary.LittleEndian)
	c.note("CORE", NTPRStatus, prstatus64(binary.LittleEndian, 9, x86Regs(202, 0x1002, 0x55)))
	c.note("CORE", NTPRStatus, prstatus64(binary.LittleEndian, 10, x86Regs(-1, 0x2000, 0)))
	seeds["threads-64le"] = c.bytes()

	seeds["pn-xnum"] = pnXNum(synthPython(elf.ELFCLASS64, binary.LittleEndian).bytes())
	return seeds
}

// ntfileSeeds are the FuzzParseNTFile seeds; a name ending in "32le" is a
// 32-bit payload.
func ntfileSeeds() map[string][]byte {
	return map[string][]byte{
		"kernel-64le": cat(le64(3, 4096,
			0x400000, 0x41f000, 0,
			0x41f000, 0x6cf000, 0x1f,
			0x7f0000000000, 0x7f0000026000, 0),
			[]byte("/usr/bin/python3.11\x00/usr/bin/python3.11\x00/usr/lib/x86_64-linux-gnu/libc.so.6\x00")),
		"gdb-32le": cat(le32(2, 1, 0x8048000, 0x8049000, 0, 0xf7d00000, 0xf7d20000, 0x2000),
			[]byte("/app/a.out\x00/tmp/libx.so (deleted)\x00")),
		"huge-count": cat(le64(1<<60, 4096, 1, 2, 0), []byte("/x\x00")),
	}
}

// corpusFile encodes values in the format of go test's fuzz corpus.
func corpusFile(vals ...any) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	for _, v := range vals {
		switch v := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case bool:
			fmt.Fprintf(&b, "bool(%v)\n", v)
		}
	}
	return b.Bytes()
}

// TestFuzzSeedCorpus checks that the committed seed corpus is what
// synthSeeds and ntfileSeeds build; run with -update-seeds to rewrite it.
func TestFuzzSeedCorpus(t *testing.T) {
	want := map[string][]byte{}
	for name, b := range synthSeeds() {
		if len(b) >= 16<<10 {
			t.Errorf("seed %s is %d bytes", name, len(b))
		}
		want[filepath.Join("testdata", "fuzz", "FuzzRead", name)] = corpusFile(b)
	}
	for name, b := range ntfileSeeds() {
		want[filepath.Join("testdata", "fuzz", "FuzzParseNTFile", name)] = corpusFile(b, strings.HasSuffix(name, "32le"), false)
	}
	for name, content := range want {
		if *updateSeeds {
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(got, content) {
			t.Errorf("%s is missing or stale (%v); run go test -run TestFuzzSeedCorpus -update-seeds", name, err)
		}
	}
}
