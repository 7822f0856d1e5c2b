package srcscan_test

import (
	"slices"
	"testing"

	"github.com/pyattach/pyattach/detect/srcscan"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestScanMachO: the DWARF inside a .dSYM (thin and universal) and in the
// debug map's object file names the build directory's frame.cc.
func TestScanMachO(t *testing.T) {
	fx := testenv.MachO(t)
	want := testenv.MachOBuildDir + "/echion/frame.cc"
	for _, p := range []string{fx.DSYMDWARF, fx.FatDSYM + "/Contents/Resources/DWARF/" + testenv.MachOName, fx.Object} {
		r, err := srcscan.ScanFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !slices.Contains(r.Files, want) || len(r.Units) == 0 || r.Units[0].CompDir != testenv.MachOBuildDir {
			t.Errorf("%s: files %q, units %+v; want %s", p, r.Files, r.Units, want)
		}
	}
	r, err := srcscan.ScanFile(fx.SO)
	if err != nil || len(r.Files) != 0 {
		t.Errorf("stripped module: %+v, %v; want no files", r, err)
	}
}
