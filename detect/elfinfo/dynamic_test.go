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
	"github.com/pyattach/pyattach/detect/testenv"
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
			if err != nil || !d.Type().IsRegular() || checked >= 800 {
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

// TestFindSymbolsAgrees: FindSymbols finds what a search of debug/elf's
// full tables finds, on this machine's programs and libraries (and
// pyenv's libpythons, whose .symtab is large), for a sample of names of
// each table and a few that are nowhere.
func TestFindSymbolsAgrees(t *testing.T) {
	files := 0
	check := func(p string) {
		fh, err := saferead.Open(p)
		if err != nil {
			return
		}
		defer fh.Close()
		f, err := NewFile(fh)
		if err != nil {
			return
		}
		files++
		for typ, table := range map[elf.SectionType]func() ([]elf.Symbol, error){elf.SHT_SYMTAB: f.Symbols, elf.SHT_DYNSYM: f.DynamicSymbols} {
			all, err := table()
			got, gerr := FindSymbols(f, typ, map[string]bool{"Py_Version": true})
			if (err != nil) != (gerr != nil) {
				t.Errorf("%s %v: debug/elf %v, FindSymbols %v", p, typ, err, gerr)
				continue
			}
			if err != nil {
				continue
			}
			want := map[string]bool{"Py_Version": true, "_PyRuntime": true, "no such symbol": true}
			for i, s := range all {
				if i%7 == 0 {
					want[s.Name] = true
				}
			}
			ref := map[string]elf.Symbol{}
			for _, s := range all {
				if _, dup := ref[s.Name]; want[s.Name] && !dup && s.Section != elf.SHN_UNDEF {
					ref[s.Name] = elf.Symbol{Name: s.Name, Info: s.Info, Other: s.Other, Section: s.Section, Value: s.Value, Size: s.Size}
				}
			}
			if got, _ = FindSymbols(f, typ, want); !reflect.DeepEqual(got, ref) {
				t.Errorf("%s %v: FindSymbols found %d symbols, debug/elf %d", p, typ, len(got), len(ref))
			}
		}
	}
	for _, root := range []string{"/usr/bin", "/usr/lib/x86_64-linux-gnu"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && files < 400 {
				check(p)
			}
			return nil
		})
	}
	libs, _ := filepath.Glob(filepath.Join(testenv.PyenvRoot(), "versions", "*", "lib", "libpython3.*.so.1.0"))
	for _, l := range libs {
		check(l)
	}
	if files < 50 {
		t.Fatalf("only %d ELF files read", files)
	}
	t.Logf("%d ELF files agree, %d of them pyenv libpythons", files, len(libs))
}
