package machoinfo_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// FuzzRead: any input gives facts, ErrNotMachO or a one-line
// *FormatError, never a panic. The seed corpus is the fixture's files as
// testenv.MachO builds them (linked, stripped, universal, a .dSYM's DWARF
// file; whole and cut), built at test time: no binary is committed.
func FuzzRead(f *testing.F) {
	f.Add([]byte("\xcf\xfa\xed\xfe"))
	f.Add([]byte("\xca\xfe\xba\xbe\x00\x00\x00\x01"))
	fx := testenv.MachO(f)
	for _, p := range []string{fx.Linked, fx.SO, fx.Fat, fx.DSYMDWARF} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/3])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := machoinfo.Read(bytes.NewReader(b))
		if err == nil {
			for _, a := range info.Arches {
				if a.UUID != "" && !machoinfo.ValidUUID(a.UUID) {
					t.Fatalf("UUID %q", a.UUID)
				}
			}
			return
		}
		if errors.Is(err, machoinfo.ErrNotMachO) {
			return
		}
		var fe *machoinfo.FormatError
		if !errors.As(err, &fe) || strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("error %q (%T) is not a one-line *FormatError", err, err)
		}
	})
}
