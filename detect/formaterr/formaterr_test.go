package formaterr

import (
	"errors"
	"io"
	"testing"
)

func TestError(t *testing.T) {
	elfKind := errors.New("corrupt ELF")
	machoKind := errors.New("corrupt Mach-O")
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{Newf(elfKind, "", "PT_NOTE", 0x40, "note of %d bytes", 3), "corrupt ELF: PT_NOTE at offset 0x40: note of 3 bytes"},
		{Newf(elfKind, "", "", 0x40, "bad"), "corrupt ELF: at offset 0x40: bad"},
		{Newf(elfKind, "", "symbol table", -1, "bad\nname"), `corrupt ELF: symbol table: bad\nname`},
		{Newf(machoKind, "arm64", "LC_UUID", 0x1000, "two"), "corrupt Mach-O: arm64 slice: LC_UUID at offset 0x1000: two"},
		{Newf(machoKind, "", "fat header", 4, "none"), "corrupt Mach-O: fat header at offset 0x4: none"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	e := Newf(elfKind, "", ".debug_info", 8, "reading: %w", io.ErrUnexpectedEOF)
	if !errors.Is(e, elfKind) || errors.Is(e, machoKind) || !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Errorf("%v: want it to match its own kind and its Err only", e)
	}
}
