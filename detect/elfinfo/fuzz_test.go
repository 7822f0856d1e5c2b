package elfinfo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
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
// Beyond not panicking: errors are the package's sentinels, what is read
// is bounded by the input, a second read gives the same, and ReadBuildID
// agrees with Read.
func FuzzRead(f *testing.F) {
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		opts := Options{Producer: true, Dynamic: true}
		info, err := Read(bytes.NewReader(b), opts)
		again, err2 := Read(bytes.NewReader(b), opts)
		if !reflect.DeepEqual(info, again) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("two reads differ: %+v, %v; then %+v, %v", info, err, again, err2)
		}
		id, idErr := ReadBuildID(bytes.NewReader(b))
		if idErr != nil && !errors.Is(idErr, ErrNotELF) && !errors.Is(idErr, ErrCorrupt) && !errors.Is(idErr, ErrNoBuildID) {
			t.Fatalf("ReadBuildID: untyped error %v", idErr)
		}
		if !bytes.HasPrefix(b, []byte("\x7fELF")) {
			if !errors.Is(err, ErrNotELF) || !errors.Is(idErr, ErrNotELF) {
				t.Fatalf("no ELF magic: Read %v, ReadBuildID %v; want ErrNotELF", err, idErr)
			}
			return
		}
		checkFormatError(t, err, -1, ErrNotELF)
		checkFormatError(t, idErr, -1, ErrNotELF, ErrNoBuildID)
		if err != nil {
			return
		}
		if info.Stripped != (!info.DWARF && !info.Symtab) {
			t.Fatalf("Stripped = %v with DWARF %v, Symtab %v", info.Stripped, info.DWARF, info.Symtab)
		}
		if len(info.BuildID)%2 != 0 || len(info.BuildID) > 2*len(b) || strings.Trim(info.BuildID, "0123456789abcdef") != "" {
			t.Fatalf("build-id %q from %d bytes", info.BuildID, len(b))
		}
		if idErr == nil && id != info.BuildID || errors.Is(idErr, ErrNoBuildID) && info.BuildID != "" {
			t.Fatalf("ReadBuildID %q (%v), Read %q", id, idErr, info.BuildID)
		}
		strs := append([]string{info.Interp, info.Soname}, info.Needed...)
		strs = append(strs, info.RunPath...)
		if info.DebugLink != nil {
			strs = append(strs, info.DebugLink.Name)
		}
		if info.DebugAltLink != nil {
			strs = append(strs, info.DebugAltLink.Name)
		}
		if info.Producer != nil {
			strs = append(strs, info.Producer.Raw)
		}
		for _, s := range strs {
			if len(s) > len(b) {
				t.Fatalf("a %d-byte string from %d bytes of input", len(s), len(b))
			}
		}
	})
}

// FuzzFirstDIEProducer feeds arbitrary unit and abbreviation bytes to the
// first-DIE decoder. The producer it returns is empty, the string section's
// answer, or a string inside the unit (DW_FORM_string); every error is
// ErrCorrupt (the callbacks never fail); a second call gives the same.
func FuzzFirstDIEProducer(f *testing.F) {
	// A DWARF 5 compile unit whose DIE has DW_AT_producer as DW_FORM_string.
	unit := []byte{0, 0, 0, 0, 5, 0, 1, 8, 0, 0, 0, 0, 1, 'G', 'N', 'U', 0}
	unit[0] = byte(len(unit) - 4)
	abbrev := []byte{1, 0x11, 1, 0x25, 0x08, 0, 0, 0}
	f.Add(unit, abbrev)
	// The same producer as DW_FORM_strp.
	strp := []byte{0, 0, 0, 0, 5, 0, 1, 8, 0, 0, 0, 0, 1, 0, 0, 0, 0}
	strp[0] = byte(len(strp) - 4)
	f.Add(strp, []byte{1, 0x11, 1, 0x25, 0x0e, 0, 0, 0})
	f.Fuzz(func(t *testing.T, head, ab []byte) {
		const fromStr = "from the string section"
		call := func() (string, error) {
			return FirstDIEProducer(head, binary.LittleEndian,
				func(uint64) ([]byte, error) { return ab, nil },
				func(string, uint64) (string, error) { return fromStr, nil })
		}
		p, err := call()
		p2, err2 := call()
		if p != p2 || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("two calls differ: %q %v, then %q %v", p, err, p2, err2)
		}
		checkFormatError(t, err, -1)
		if err != nil {
			if p != "" {
				t.Fatalf("producer %q with error %v", p, err)
			}
			return
		}
		if p != "" && p != fromStr && !bytes.Contains(head, []byte(p)) {
			t.Fatalf("producer %q is neither in the unit nor from the string section", p)
		}
	})
}
