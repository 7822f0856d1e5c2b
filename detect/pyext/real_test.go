package pyext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

func TestDebianAutoLoad(t *testing.T) {
	const ext = "/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py"
	for _, tc := range []struct {
		interp, flags, want string
	}{
		{"/usr/bin/python3.11", "", ext},
		{"/usr/bin/python3.11d", "d", "/usr/share/gdb/auto-load/usr/bin/python3.11d-gdb.py"},
	} {
		t.Run(filepath.Base(tc.interp), func(t *testing.T) {
			if _, err := os.Stat(tc.interp); err != nil {
				testenv.Missing(t, "%s: %v (install python3.11-dbg)", tc.interp, err)
			}
			if _, err := os.Stat(tc.want); err != nil {
				testenv.Missing(t, "%s: %v (install python3.11-dbg)", tc.want, err)
			}
			got, tried, err := FindGDB(Input{Interpreter: tc.interp, Version: "3.11", ABIFlags: tc.flags, UID: os.Getuid()})
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatalf("nothing found; tried %q", tried)
			}
			if got.Path != tc.want || got.Source != SourceDebian || !got.VersionMatch {
				t.Errorf("got %+v, want %s from %s, matching", got, tc.want, SourceDebian)
			}
			if !strings.HasPrefix(got.Version, "3.11") {
				t.Errorf("version %q, want 3.11[.Z]", got.Version)
			}
			if len(got.Warnings) != 0 {
				t.Errorf("warnings %q", got.Warnings)
			}
			t.Logf("found %+v; tried %q", got, tried)
		})
	}
}

// TestDebianMicroFromDpkg checks that dpkg's database gives the micro
// version of Debian's auto-load file, so that the interpreter's own
// version (3.11.Z) is an exact match.
func TestDebianMicroFromDpkg(t *testing.T) {
	const ext = "/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py"
	if _, err := os.Stat(ext); err != nil {
		testenv.Missing(t, "%s: %v (install python3.11-dbg)", ext, err)
	}
	want := upstreamVersion(dpkgStatusVersion(place{}, "python3.11-dbg"))
	if want == "" {
		testenv.Missing(t, "python3.11-dbg is not in dpkg's status file")
	}
	got, tried, err := FindGDB(Input{Interpreter: "/usr/bin/python3.11", Version: want, UID: os.Getuid()})
	if err != nil || got == nil {
		t.Fatalf("FindGDB: %v, %v; tried %q", got, err, tried)
	}
	if got.Version != want || got.Path != ext {
		t.Errorf("got %s version %s, want %s version %s", got.Path, got.Version, ext, want)
	}
	// An exact match ends the search: nothing after it was looked at.
	for _, tr := range tried {
		if strings.Contains(tr, "/usr/lib/debug") {
			t.Errorf("search went on after an exact match: tried %q", tr)
		}
	}
}

func TestPyenvVersions(t *testing.T) {
	for _, py := range testenv.PyenvAll(t) {
		if strings.ContainsAny(py.ABIFlags, "dt") {
			continue
		}
		d, full, xy := py.Prefix, py.Version, py.Minor()
		t.Run(full, func(t *testing.T) {
			interp := filepath.Join(d, "bin", "python"+xy)
			want := filepath.Join(d, "bin", "python"+xy+"-gdb.py")
			if _, err := os.Stat(want); err != nil {
				testenv.Missing(t, "%v", err)
			}
			var lib string
			for _, name := range []string{"libpython" + xy + ".so.1.0", "libpython" + xy + "m.so.1.0"} {
				if _, err := os.Stat(filepath.Join(d, "lib", name)); err == nil {
					lib = filepath.Join(d, "lib", name)
				}
			}
			for _, version := range []string{full, ""} {
				got, tried, err := FindGDB(Input{Interpreter: interp, Libpython: lib, Version: version, UID: os.Getuid()})
				if err != nil || got == nil {
					t.Fatalf("version %q: FindGDB: %+v, %v; tried %q", version, got, err, tried)
				}
				if got.Path != want || got.Version != full || got.Source != SourceBeside || !got.VersionMatch || len(got.Warnings) != 0 {
					t.Errorf("version %q: got %+v, want %s version %s from %s", version, got, want, full, SourceBeside)
				}
			}
		})
	}
}
