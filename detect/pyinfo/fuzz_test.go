package pyinfo

import (
	"bytes"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/pyversion"
)

// FuzzRead feeds arbitrary bytes to Read and ReadSection. The seed corpus in
// testdata/fuzz/FuzzRead holds small ELF files built with
//
//	gcc -Os -s -shared -nostdlib -Wl,--build-id=none -Wl,-z,noseparate-code
//
// from C files defining Py_Version and Py_Initialize (elf-py-version), a
// .PyRuntime _PyRuntime with the "xdebugpy" cookie and a "3.9.18" string
// (elf-debug-offsets), and "gcc -Os -s" of an empty main
// (elf-trivial-exe).
func FuzzRead(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The .AsyncioDebug section of the same bytes: found, or a
		// typed error.
		if rt, err := ReadSection(bytes.NewReader(b), AsyncioDebugSection); err != nil {
			var fe *elfinfo.FormatError
			if rt != nil || !errors.As(err, &fe) && !errors.Is(err, elfinfo.ErrNotELF) && !errors.Is(err, ErrNoSection) {
				t.Fatalf("ReadSection: %v (%v)", err, rt)
			}
		} else if len(rt.Loads) == 0 {
			t.Fatalf("ReadSection: no PT_LOAD in %+v", rt)
		}
		for _, name := range []string{"python3.11d", "libpython3.6m.so.1.0", "/proc/1/exe"} {
			facts, err := Read(bytes.NewReader(b), name)
			if err != nil {
				if facts != nil {
					t.Fatalf("Read returned facts and error %v", err)
				}
				var fe *elfinfo.FormatError
				if !errors.As(err, &fe) && !errors.Is(err, elfinfo.ErrNotELF) {
					t.Fatalf("error is neither a *elfinfo.FormatError nor ErrNotELF: %v", err)
				}
				continue
			}
			if facts.Version == "" && facts.VersionSource != "" || facts.Version != "" && facts.VersionSource == "" {
				t.Fatalf("version %q from %q", facts.Version, facts.VersionSource)
			}
			if facts.DebugBuild != strings.Contains(facts.ABIFlags, "d") || facts.FreeThreaded != strings.Contains(facts.ABIFlags, "t") {
				t.Fatalf("flags %q disagree with %+v", facts.ABIFlags, facts)
			}
			if facts.LibpythonNeeded != "" && !IsLibpython(facts.LibpythonNeeded) {
				t.Fatalf("LibpythonNeeded %q is not a libpython", facts.LibpythonNeeded)
			}
		}
	})
}

func FuzzParseName(f *testing.F) {
	for _, s := range []string{"python3.11", "python3.11d", "python3.6m", "python3.13td", "python3.11-dbg",
		"libpython3.12.so.1.0", "libpython3.13t.so.1.0", "libpython2.7.so", "libpython3.so", "python3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, flags, ok := ParseName(s)
		if !ok {
			if v != "" || flags != "" {
				t.Fatalf("ParseName(%q) = %q, %q, false", s, v, flags)
			}
			return
		}
		if pv, err := pyversion.Parse(v); err != nil || pv.MajorMinor() != v || !strings.HasPrefix(v, "2.") && !strings.HasPrefix(v, "3.") {
			t.Fatalf("ParseName(%q) version %q", s, v)
		}
		if n, ok := pyversion.SortFlags(flags); !ok || n != flags {
			t.Fatalf("ParseName(%q) flags %q not normalized", s, flags)
		}
		// A name built from the result parses back to the same values.
		for _, name := range []string{"python" + v + flags, "libpython" + v + flags + ".so.1.0"} {
			v2, f2, ok2 := ParseName(name)
			if !ok2 || v2 != v || f2 != flags {
				t.Fatalf("ParseName(%q) = %q, %q, %v; from %q", name, v2, f2, ok2, s)
			}
		}
		if IsLibpython(s) != strings.HasPrefix(path.Base(s), "libpython") {
			t.Fatalf("IsLibpython(%q) disagrees with ParseName", s)
		}
	})
}
