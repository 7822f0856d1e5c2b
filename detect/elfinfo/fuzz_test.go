package elfinfo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// checkFormatError fails unless err is nil, one of the allowed
// sentinels, or a one-line *FormatError that matches ErrCorrupt and
// whose offset lies within limit bytes (limit < 0: not checked).
func checkFormatError(t *testing.T, err error, limit int64, allowed ...error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, a := range allowed {
		if errors.Is(err, a) {
			return
		}
	}
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %q (%T) is not a *FormatError", err, err)
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, ErrCorrupt.Error()) {
		t.Fatalf("error %q: want one line starting %q", msg, ErrCorrupt)
	}
	if limit >= 0 && fe.Off > limit {
		t.Fatalf("error %q: offset %d past the %d bytes parsed", err, fe.Off, limit)
	}
}

func FuzzParseNotes(f *testing.F) {
	f.Add([]byte("\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00\xc5\x61\xf3\xaa\x72\x32\xf2\xbd\x6a\xc6\xd5\x6b\xd4\x75\xf1\xc1\x54\xa0\x04\x86"))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\xff\xff\xff\xff\x00\x00\x00\x00\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		notes, err := ParseNotes(b, binary.LittleEndian)
		checkFormatError(t, err, int64(len(b)))
		for _, n := range notes {
			if len(n.Desc) > len(b) {
				t.Fatalf("desc longer than input")
			}
		}
		_, err = ParseNotes(b, binary.BigEndian)
		checkFormatError(t, err, int64(len(b)))
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
		checkFormatError(t, err, int64(len(b)))
		al, err := ParseAltLink(b)
		checkFormatError(t, err, int64(len(b)))
		if err == nil && (al.Name == "" || al.BuildID == "" || strings.ContainsAny(al.Name, "\x00\n")) {
			t.Fatalf("accepted bad altlink %+v", al)
		}
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
		info, err := Read(bytes.NewReader(b), Options{Producer: true, Dynamic: true})
		checkFormatError(t, err, -1, ErrNotELF)
		if err == nil && info.Stripped != (!info.DWARF && !info.Symtab) {
			t.Fatalf("Stripped = %v with DWARF %v, Symtab %v", info.Stripped, info.DWARF, info.Symtab)
		}
		id, err := ReadBuildID(bytes.NewReader(b))
		checkFormatError(t, err, -1, ErrNotELF, ErrNoBuildID)
		if err == nil && (id == "" || len(id)%2 != 0 || strings.ToLower(id) != id) {
			t.Fatalf("build-id %q is not lowercase hex", id)
		}
		if info != nil && err == nil && info.BuildID != id {
			t.Fatalf("Read's build-id %q, ReadBuildID's %q", info.BuildID, id)
		}
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
		p, err := FirstDIEProducer(head, binary.LittleEndian,
			func(uint64) ([]byte, error) { return ab, nil },
			func(string, uint64) (string, error) { return "s", nil })
		checkFormatError(t, err, -1)
		if err == nil && p != "" && p != "s" && !bytes.Contains(head, []byte(p)) {
			t.Fatalf("producer %q is in neither the unit nor the string section", p)
		}
	})
}
