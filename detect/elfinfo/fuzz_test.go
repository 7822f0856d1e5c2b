package elfinfo

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func FuzzParseNotes(f *testing.F) {
	f.Add([]byte("\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00\xc5\x61\xf3\xaa\x72\x32\xf2\xbd\x6a\xc6\xd5\x6b\xd4\x75\xf1\xc1\x54\xa0\x04\x86"))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\xff\xff\xff\xff\x00\x00\x00\x00\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		notes, _ := ParseNotes(b, binary.LittleEndian)
		for _, n := range notes {
			if len(n.Desc) > len(b) {
				t.Fatalf("desc longer than input")
			}
		}
		ParseNotes(b, binary.BigEndian)
	})
}

func FuzzParseDebugLink(f *testing.F) {
	f.Add([]byte("python3.11.debug\x00\x00\x00\x00\x78\x56\x34\x12"))
	f.Add([]byte("a\x00\x00\x00\x01\x02\x03\x04"))
	f.Add([]byte("\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dl, err := ParseDebugLink(b, binary.LittleEndian)
		if err == nil && (dl.Name == "" || bytes.ContainsAny([]byte(dl.Name), "/\x00\n")) {
			t.Fatalf("accepted bad name %q", dl.Name)
		}
		ParseAltLink(b)
	})
}

func FuzzParseProducer(f *testing.F) {
	f.Add("GNU C11 12.2.0 -mtune=generic -march=x86-64 -g -O3")
	f.Add("clang version 14.0.6 -g1 -O")
	f.Fuzz(func(t *testing.T, s string) {
		p := ParseProducer(s)
		if p.Raw != s {
			t.Fatal("raw not kept")
		}
	})
}

// FuzzRead feeds whole files to Read. The seed corpus in
// testdata/fuzz/FuzzRead holds small ELF files; the fuzzer mutates them.
func FuzzRead(f *testing.F) {
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		Read(bytes.NewReader(b), Options{Producer: true, Dynamic: true})
		ReadBuildID(bytes.NewReader(b))
	})
}

// FuzzFirstDIEProducer feeds arbitrary unit and abbreviation bytes to the
// first-DIE decoder.
func FuzzFirstDIEProducer(f *testing.F) {
	// A DWARF 5 compile unit whose DIE has DW_AT_producer as DW_FORM_string.
	unit := []byte{0, 0, 0, 0, 5, 0, 1, 8, 0, 0, 0, 0, 1, 'G', 'N', 'U', 0}
	unit[0] = byte(len(unit) - 4)
	abbrev := []byte{1, 0x11, 1, 0x25, 0x08, 0, 0, 0}
	f.Add(unit, abbrev)
	f.Fuzz(func(t *testing.T, head, ab []byte) {
		FirstDIEProducer(head, binary.LittleEndian,
			func(uint64) ([]byte, error) { return ab, nil },
			func(string, uint64) (string, error) { return "s", nil })
	})
}
