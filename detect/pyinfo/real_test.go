package pyinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

func TestDebianPython(t *testing.T) {
	py, dbg := testenv.Debian(t), testenv.DebianDebug(t)
	tests := []struct {
		path string
		want Facts
	}{
		{py.Exe, Facts{Version: py.Version, VersionSource: SourcePyVersion, HasRuntime: true}},
		{dbg.Exe, Facts{Version: dbg.Version, VersionSource: SourcePyVersion, HasRuntime: true, DebugBuild: true, ABIFlags: "d"}},
	}
	for _, tt := range tests {
		checkFacts(t, tt.path, readFile(t, tt.path, tt.path), tt.want)
		// Seen through /proc/PID/exe or a venv copy named python3,
		// the file still tells everything.
		checkFacts(t, tt.path+" as exe", readFile(t, tt.path, "/proc/1/exe", "/venv/bin/python3"), tt.want)
	}
}

// TestPyenv reads every pyenv build here (the project's machines have
// 2.7 and 3.6 to 3.13), its version and flags learnt by running it.
func TestPyenv(t *testing.T) {
	for _, py := range testenv.PyenvAll(t) {
		if strings.ContainsAny(py.ABIFlags, "dt") {
			continue
		}
		full, mm, flags, dir := py.Version, py.Minor(), py.ABIFlags, py.Prefix
		t.Run(full, func(t *testing.T) {
			libName := fmt.Sprintf("libpython%s%s.so.1.0", mm, flags)
			lib := filepath.Join(dir, "lib", libName)
			exe := filepath.Join(dir, "bin", "python"+mm)

			source := SourceString
			switch mm {
			case "3.13":
				source = SourceDebugOffsets
			case "3.11", "3.12":
				source = SourcePyVersion
			}
			wantLib := Facts{Version: full, VersionSource: source, ABIFlags: flags, HasRuntime: true}
			checkFacts(t, lib, readFile(t, lib, lib), wantLib)
			// Opened through /proc/PID/map_files, DT_SONAME gives the flags.
			checkFacts(t, lib+" as map_files", readFile(t, lib, "/proc/1/map_files/7f00-7f80"), wantLib)

			// The executable is a small launcher with no version in
			// it; the name gives major.minor and DT_NEEDED the flags.
			wantExe := Facts{Version: mm, VersionSource: SourceFileName, ABIFlags: flags, LibpythonNeeded: libName}
			checkFacts(t, exe, readFile(t, exe, exe), wantExe)
			checkFacts(t, exe+" as python3", readFile(t, exe, "/proc/1/exe", filepath.Join(dir, "bin", "python3")), wantExe)
			if flags != "" {
				checkFacts(t, exe+"m", readFile(t, exe+flags, exe+flags), wantExe)
			}

			rp := runPath(t, exe)
			got, err := FindLibrary(libName, rp, filepath.Dir(exe), "/", nil)
			if err != nil || got != lib {
				t.Errorf("FindLibrary(%s, %q) = %q, %v; want %q", libName, rp, got, err, lib)
			}
			// The stable-ABI stub is not the runtime.
			if stub := filepath.Join(dir, "lib", "libpython3.so"); mm != "2.7" {
				if _, err := os.Stat(stub); err == nil && IsLibpython(filepath.Base(stub)) {
					t.Errorf("IsLibpython(%s) = true", stub)
				}
			}
		})
	}
}

// BenchmarkReadLibpython measures Read on the largest real libpython
// (3.12: 13k .symtab entries, a 1 MB .rodata that is not scanned because
// Py_Version answers) and on 3.10 (which needs the .rodata scan).
func BenchmarkReadLibpython(b *testing.B) {
	for _, minor := range []string{"3.12", "3.10"} {
		p := testenv.Pyenv(b, minor).Libpython()
		f, err := os.Open(testenv.NeedFile(b, p, ""))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(p), func(b *testing.B) {
			for b.Loop() {
				if _, err := Read(f, p); err != nil {
					b.Fatal(err)
				}
			}
		})
		f.Close()
	}
}
