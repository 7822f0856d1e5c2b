package pyinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// The interpreters installed on this project's machines (see DESIGN.md).
var pyenvVersions = []string{"2.7.18", "3.6.15", "3.7.16", "3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"}

func TestDebianPython(t *testing.T) {
	tests := []struct {
		path string
		want Facts
	}{
		{"/usr/bin/python3.11", Facts{Version: "3.11.2", VersionSource: SourcePyVersion, HasRuntime: true}},
		{"/usr/bin/python3.11d", Facts{Version: "3.11.2", VersionSource: SourcePyVersion, HasRuntime: true, DebugBuild: true, ABIFlags: "d"}},
	}
	for _, tt := range tests {
		if _, err := os.Stat(tt.path); err != nil {
			missing(t, "Debian interpreter: %v", err)
		}
		checkFacts(t, tt.path, readFile(t, tt.path, tt.path), tt.want)
		// Seen through /proc/PID/exe or a venv copy named python3,
		// the file still tells everything.
		checkFacts(t, tt.path+" as exe", readFile(t, tt.path, "/proc/1/exe", "/venv/bin/python3"), tt.want)
	}
}

func pyenvRoot(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		missing(t, "no home directory: %v", err)
	}
	return filepath.Join(home, ".pyenv", "versions")
}

func TestPyenv(t *testing.T) {
	root := pyenvRoot(t)
	for _, full := range pyenvVersions {
		t.Run(full, func(t *testing.T) {
			dir := filepath.Join(root, full)
			if _, err := os.Stat(dir); err != nil {
				missing(t, "pyenv %s: %v", full, err)
			}
			parts := strings.Split(full, ".")
			mm := parts[0] + "." + parts[1]
			flags := ""
			if mm == "3.6" || mm == "3.7" {
				flags = "m"
			}
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

			f, err := os.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			info, err := elfinfo.Read(f, elfinfo.Options{Dynamic: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := FindLibrary(libName, info.RunPath, filepath.Dir(exe), "/", nil)
			if err != nil || got != lib {
				t.Errorf("FindLibrary(%s, %q) = %q, %v; want %q", libName, info.RunPath, got, err, lib)
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
	home, _ := os.UserHomeDir()
	for _, p := range []string{"3.12.1/lib/libpython3.12.so.1.0", "3.10.13/lib/libpython3.10.so.1.0"} {
		p = filepath.Join(home, ".pyenv", "versions", p)
		f, err := os.Open(p)
		if err != nil {
			b.Skip(err)
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
