package elfinfo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func TestFormatError(t *testing.T) {
	for _, tc := range []struct {
		err  *FormatError
		want string
	}{
		{Corruptf(".gnu_debuglink", 0x2a4, "no file name"), "corrupt or truncated ELF file: .gnu_debuglink at offset 0x2a4: no file name"},
		{Corruptf("symbol table", -1, "%w", io.ErrUnexpectedEOF), "corrupt or truncated ELF file: symbol table: unexpected EOF"},
		{Corruptf("", 16, "bad"), "corrupt or truncated ELF file: at offset 0x10: bad"},
		{Corruptf("", -1, "name %s", "a\nb"), `corrupt or truncated ELF file: name a\nb`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if !errors.Is(tc.err, ErrCorrupt) {
			t.Errorf("%q does not match ErrCorrupt", tc.err)
		}
	}
	if err := Corruptf("x", 0, "reading: %w", io.ErrUnexpectedEOF); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v does not unwrap to its cause", err)
	}
}

// TestParseNotesOffset: the error of a bad note in a segment at file
// offset 0x100 says which segment and where its bad note starts.
func TestParseNotesOffset(t *testing.T) {
	good := []byte("\x04\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00GNU\x00\xaa\xbb\xcc\xdd")
	bad := []byte("\x04\x00\x00\x00\xff\x00\x00\x00\x03\x00\x00\x00GNU\x00")
	b := append(append([]byte(nil), good...), bad...)
	id, err := buildIDIn(bytes.NewReader(b), "PT_NOTE", 0x100, uint64(len(b)), binary.LittleEndian)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Section != "PT_NOTE" || fe.Off != 0x100+int64(len(good)) {
		t.Fatalf("buildIDIn = %q, %v (%+v); want a FormatError in PT_NOTE at %#x", id, err, fe, 0x100+len(good))
	}
}

// TestRecoverCorrupt: a panic in a deferred-guarded function becomes a
// *FormatError naming the section.
func TestRecoverCorrupt(t *testing.T) {
	f := func() (err error) {
		defer RecoverCorrupt(&err, ".dynamic")
		var s []int
		_ = s[3]
		return nil
	}
	err := f()
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Section != ".dynamic" || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v", err)
	}
}

func TestNewFile(t *testing.T) {
	if _, err := NewFile(bytes.NewReader([]byte("#!/bin/sh\n"))); !errors.Is(err, ErrNotELF) {
		t.Errorf("script: %v, want ErrNotELF", err)
	}
	if _, err := NewFile(bytes.NewReader(nil)); !errors.Is(err, ErrNotELF) {
		t.Errorf("empty: %v, want ErrNotELF", err)
	}
	var fe *FormatError
	f, err := NewFile(bytes.NewReader([]byte("\x7fELF\x02\x01\x01")))
	if f != nil || !errors.As(err, &fe) {
		t.Errorf("truncated header: %v, %v; want a *FormatError", f, err)
	}
}
