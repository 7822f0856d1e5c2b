package srcscan

import (
	"bytes"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// FuzzScanMachO feeds Mach-O files to Scan: the seeds are the Mach-O
// fixture's .dSYM DWARF files (thin and universal) and its object file,
// built at test time by testenv.MachO. Bad input is a one-line
// *machoinfo.FormatError (the headers) or *elfinfo.FormatError (the
// DWARF), never a panic.
func FuzzScanMachO(f *testing.F) {
	fx := testenv.MachO(f)
	for _, p := range []string{fx.DSYMDWARF, fx.FatDSYM + "/Contents/Resources/DWARF/" + testenv.MachOName, fx.Object} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Scan(bytes.NewReader(b))
		if err != nil {
			var me *machoinfo.FormatError
			var ee *elfinfo.FormatError
			if !errors.As(err, &me) && !errors.As(err, &ee) && !errors.Is(err, elfinfo.ErrNotELF) {
				t.Fatalf("error is not a FormatError: %v (%T)", err, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		if !sort.StringsAreSorted(res.Files) {
			t.Fatal("Files not sorted")
		}
	})
}
