//go:build linux

package elfinfo

import (
	"debug/elf"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/saferead"
)

// dynamicByDynString is readDynamic as debug/elf's DynString gives it,
// one tag at a time: the reference readDynamic's single pass must agree
// with.
func dynamicByDynString(f *elf.File) (needed []string, soname string, runpath []string, rpath bool) {
	needed, _ = f.DynString(elf.DT_NEEDED)
	if v, _ := f.DynString(elf.DT_SONAME); len(v) > 0 {
		soname = v[0]
	}
	rp, _ := f.DynString(elf.DT_RUNPATH)
	if len(rp) == 0 {
		rp, _ = f.DynString(elf.DT_RPATH)
		rpath = len(rp) > 0
	}
	for _, s := range rp {
		for _, d := range strings.Split(s, ":") {
			if d != "" {
				runpath = append(runpath, d)
			}
		}
	}
	return needed, soname, runpath, rpath
}

// TestDynamicAgrees: DT_NEEDED, DT_SONAME and the run path read in one
// pass are what DynString reads, on this machine's programs and
// libraries.
func TestDynamicAgrees(t *testing.T) {
	checked, withRunpath := 0, 0
	for _, root := range []string{"/usr/bin", "/usr/lib"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || checked >= 2000 {
				return nil
			}
			fh, err := saferead.Open(p)
			if err != nil {
				return nil
			}
			defer fh.Close()
			f, err := NewFile(fh)
			if err != nil {
				return nil
			}
			var info Info
			if err := readDynamic(f, &info); err != nil {
				t.Errorf("%s: %v", p, err)
				return nil
			}
			needed, soname, runpath, rpath := dynamicByDynString(f)
			if !reflect.DeepEqual(info.Needed, needed) || info.Soname != soname || !reflect.DeepEqual(info.RunPath, runpath) || info.RPath != rpath {
				t.Errorf("%s: needed %q soname %q runpath %q rpath %v; DynString: %q %q %q %v", p, info.Needed, info.Soname, info.RunPath, info.RPath, needed, soname, runpath, rpath)
			}
			checked++
			if len(runpath) > 0 {
				withRunpath++
			}
			return nil
		})
	}
	if checked < 50 {
		t.Fatalf("only %d ELF files under /usr/bin and /usr/lib", checked)
	}
	t.Logf("%d ELF files agree, %d with a run path", checked, withRunpath)
}
