package pyinfo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

func readFile(t *testing.T, p string, names ...string) *Facts {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	facts, err := ReadNamed(f, names...)
	if err != nil {
		t.Fatalf("ReadNamed(%s): %v", p, err)
	}
	return facts
}

// runPath returns the DT_RUNPATH of the ELF file at p.
func runPath(t *testing.T, p string) []string {
	t.Helper()
	info, err := elfinfo.Open(p, elfinfo.Options{Dynamic: true})
	if err != nil {
		t.Fatal(err)
	}
	return info.RunPath
}

func checkFacts(t *testing.T, what string, got *Facts, want Facts) {
	t.Helper()
	if *got != want {
		t.Errorf("%s:\n got  %+v\n want %+v", what, *got, want)
	}
}

const (
	srcPyVersion = `
const unsigned long Py_Version = 0x030c01f0;
void Py_Initialize(void) {}
int main(void) { return 0; }
`
	srcDebugOffsets = `
struct debug_offsets { char cookie[8]; unsigned long long version; unsigned long long free_threaded; char rest[64]; };
__attribute__((section(".PyRuntime"))) struct debug_offsets _PyRuntime = {"xdebugpy", VERSION, FREE};
const unsigned long Py_Version = 0x030c01f0; /* must lose against _PyRuntime */
void Py_Initialize(void) {}
DEBUG
int main(void) { return 0; }
`
	srcString = `
const char pyver[] = "3.9.18";
RUNTIME
int main(void) { return pyver[0]; }
`
	srcPlain = `
#include <stdio.h>
int main(void) { puts("hello 3.9.18"); return 0; }
`
)

func TestFixtures(t *testing.T) {
	dir := t.TempDir()
	debugOffsets := func(version, free, debug string) string {
		r := strings.NewReplacer("VERSION", version, "FREE", free, "DEBUG", debug)
		return r.Replace(srcDebugOffsets)
	}
	tests := []struct {
		name  string
		src   string
		args  []string
		names []string
		want  Facts
	}{{
		name: "py-version",
		src:  srcPyVersion,
		want: Facts{Version: "3.12.1", VersionSource: SourcePyVersion, HasRuntime: true},
	}, {
		name: "py-version-stripped-dynsym",
		src:  srcPyVersion,
		args: []string{"-s", "-rdynamic"},
		want: Facts{Version: "3.12.1", VersionSource: SourcePyVersion, HasRuntime: true},
	}, {
		name: "py-version-name-disagrees",
		src:  srcPyVersion,
		// The symbol wins over a name that disagrees.
		names: []string{"/proc/1/exe", "python3.6m"},
		want:  Facts{Version: "3.12.1", VersionSource: SourcePyVersion, HasRuntime: true, ABIFlags: "m"},
	}, {
		name: "py-version-debug",
		src:  srcPyVersion + "void _Py_NegativeRefcount(void) {}\n",
		want: Facts{Version: "3.12.1", VersionSource: SourcePyVersion, HasRuntime: true, DebugBuild: true, ABIFlags: "d"},
	}, {
		name: "py-version-name-says-debug",
		src:  srcPyVersion,
		// The file has the runtime and no debug symbols: the symbols
		// decide, not the name.
		names: []string{"python3.12d"},
		want:  Facts{Version: "3.12.1", VersionSource: SourcePyVersion, HasRuntime: true},
	}, {
		name: "debug-offsets",
		src:  debugOffsets("0x030d00f0", "0", ""),
		want: Facts{Version: "3.13.0", VersionSource: SourceDebugOffsets, HasRuntime: true},
	}, {
		name: "debug-offsets-stripped",
		src:  debugOffsets("0x030d00f0", "0", ""),
		args: []string{"-s", "-rdynamic"},
		want: Facts{Version: "3.13.0", VersionSource: SourceDebugOffsets, HasRuntime: true},
	}, {
		name: "debug-offsets-free-threaded-debug",
		src:  debugOffsets("0x030d00f0", "1", "void _Py_GetGlobalRefTotal(void) {}"),
		want: Facts{Version: "3.13.0", VersionSource: SourceDebugOffsets, HasRuntime: true, FreeThreaded: true, DebugBuild: true, ABIFlags: "td"},
	}, {
		name:  "debug-offsets-3.13-field-beats-name",
		src:   debugOffsets("0x030d00f0", "0", ""),
		names: []string{"python3.13t"},
		want:  Facts{Version: "3.13.0", VersionSource: SourceDebugOffsets, HasRuntime: true},
	}, {
		// The free_threaded field is only trusted where its layout
		// was checked (3.13); later versions rely on the name.
		name: "debug-offsets-3.14-field-ignored",
		src:  debugOffsets("0x030e00a1", "1", ""),
		want: Facts{Version: "3.14.0a1", VersionSource: SourceDebugOffsets, HasRuntime: true},
	}, {
		name:  "debug-offsets-3.14-name",
		src:   debugOffsets("0x030e00a1", "0", ""),
		names: []string{"libpython3.14t.so.1.0"},
		want:  Facts{Version: "3.14.0a1", VersionSource: SourceDebugOffsets, HasRuntime: true, FreeThreaded: true, ABIFlags: "t"},
	}, {
		name: "debug-offsets-bad-cookie",
		src:  strings.Replace(debugOffsets("0x030d00f0", "0", ""), "xdebugpy", "xdebugpz", 1),
		want: Facts{Version: "3.12.1", VersionSource: SourcePyVersion, HasRuntime: true},
	}, {
		name: "pyruntime-in-bss",
		src: `struct rt { char cookie[8]; unsigned long long version; } _PyRuntime;
const unsigned long Py_Version = 0x030b07f0;
void Py_Initialize(void) {}
int main(void) { return 0; }`,
		want: Facts{Version: "3.11.7", VersionSource: SourcePyVersion, HasRuntime: true},
	}, {
		name: "version-string",
		src:  strings.Replace(srcString, "RUNTIME", "void Py_Initialize(void) {}", 1),
		want: Facts{Version: "3.9.18", VersionSource: SourceString, HasRuntime: true},
	}, {
		name:  "version-string-no-runtime-named",
		src:   strings.Replace(srcString, "RUNTIME", "", 1),
		names: []string{"python3.9"},
		want:  Facts{Version: "3.9.18", VersionSource: SourceString},
	}, {
		// Without the runtime, a string must agree with the name.
		name:  "version-string-no-runtime-disagrees",
		src:   strings.Replace(srcString, "RUNTIME", "", 1),
		names: []string{"python3.8d"},
		want:  Facts{Version: "3.8", VersionSource: SourceFileName, DebugBuild: true, ABIFlags: "d"},
	}, {
		// Without the runtime or a name, a stray string is no evidence.
		name: "version-string-no-runtime-no-name",
		src:  strings.Replace(srcString, "RUNTIME", "", 1),
		want: Facts{},
	}, {
		name: "not-python",
		src:  srcPlain,
		want: Facts{},
	}, {
		name:  "not-python-named-exe",
		src:   srcPlain,
		names: []string{"/proc/42/exe"},
		want:  Facts{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := testenv.CC(t, dir, tt.name, tt.src, append([]string{"-O0"}, tt.args...)...)
			names := tt.names
			if names == nil {
				names = []string{p}
			}
			checkFacts(t, tt.name, readFile(t, p, names...), tt.want)
		})
	}
}

// TestFixtureSharedLibpython builds a fake libpython and an executable
// that needs it through RUNPATH $ORIGIN/../lib, as pyenv's layout does.
func TestFixtureSharedLibpython(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{lib, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	so := testenv.CC(t, lib, "libpython3.12d.so.1.0",
		"const unsigned long Py_Version = 0x030c01f0;\nint Py_BytesMain(int c, char **v) { return 0; }\nvoid _Py_NegativeRefcount(void) {}\n",
		"-shared", "-fPIC", "-Wl,-soname,libpython3.12d.so.1.0")
	exe := testenv.CC(t, bin, "python3.12d",
		"int Py_BytesMain(int, char **);\nint main(int c, char **v) { return Py_BytesMain(c, v); }\n",
		so, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib")

	checkFacts(t, "libpython", readFile(t, so, so),
		Facts{Version: "3.12.1", VersionSource: SourcePyVersion, HasRuntime: true, DebugBuild: true, ABIFlags: "d"})
	checkFacts(t, "exe", readFile(t, exe, exe),
		Facts{Version: "3.12", VersionSource: SourceFileName, DebugBuild: true, ABIFlags: "d", LibpythonNeeded: "libpython3.12d.so.1.0"})
	// A copy named "python3" still knows its version through DT_NEEDED.
	checkFacts(t, "exe as /proc/PID/exe", readFile(t, exe, "/proc/7/exe", "/venv/bin/python3"),
		Facts{Version: "3.12", VersionSource: SourceFileName, DebugBuild: true, ABIFlags: "d", LibpythonNeeded: "libpython3.12d.so.1.0"})

	rp := runPath(t, exe)
	if len(rp) != 1 || rp[0] != "$ORIGIN/../lib" {
		t.Fatalf("RunPath = %q, want [$ORIGIN/../lib]", rp)
	}
	got, err := FindLibrary("libpython3.12d.so.1.0", rp, bin, "/", nil)
	if err != nil || got != so {
		t.Errorf("FindLibrary = %q, %v; want %q", got, err, so)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(strings.NewReader("#!/bin/sh\necho hi\n"), "python3.11"); !errors.Is(err, elfinfo.ErrNotELF) {
		t.Errorf("shell script: err = %v, want ErrNotELF", err)
	}
	if _, err := Read(strings.NewReader(""), "python3.11"); !errors.Is(err, elfinfo.ErrNotELF) {
		t.Errorf("empty: err = %v, want ErrNotELF", err)
	}
	if _, err := Read(strings.NewReader("\x7fELF\x02\x01\x01"), "python3.11"); !errors.Is(err, elfinfo.ErrCorrupt) {
		t.Errorf("truncated: err = %v, want ErrCorrupt", err)
	}
}
