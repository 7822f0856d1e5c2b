package srcscan

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// readelfFiles is the oracle: it runs readelf over path, parses the
// first DIE of every unit and the directory and file tables readelf
// prints, and joins them with the rule Scan documents.
func readelfFiles(t *testing.T, path string) []string {
	t.Helper()
	readelf := testenv.Need(t, "readelf")
	out, err := exec.Command(readelf, "--debug-dump=info", "--debug-dump=line", path).Output()
	if err != nil {
		t.Fatalf("readelf %s: %v", path, err)
	}
	type cu struct {
		compDir, name string
		stmt          uint64
		hasStmt       bool
	}
	type table struct {
		version uint64
		dirs    []string
		files   [][2]string // dir index, name
	}
	var cus []*cu
	tables := map[uint64]*table{}
	var cur *cu
	var tab *table
	mode := ""
	value := func(s string) string {
		// "(indirect line string, offset: 0x4): /tmp/x" or a plain string.
		if strings.HasPrefix(s, "(indirect") {
			if i := strings.Index(s, "): "); i >= 0 {
				return s[i+3:]
			}
		}
		return s
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "Compilation Unit @"):
			cur = nil
		case strings.HasPrefix(trim, "<0><") && strings.Contains(trim, "_unit)"):
			cur = &cu{}
			cus = append(cus, cur)
		case strings.HasPrefix(trim, "<1><"):
			cur = nil
		case cur != nil && strings.Contains(trim, "DW_AT_"):
			k, v, _ := strings.Cut(trim, ": ")
			f := strings.Fields(k)
			if len(f) < 2 {
				continue
			}
			v = value(strings.TrimSpace(v))
			switch f[1] {
			case "DW_AT_name":
				cur.name = v
			case "DW_AT_comp_dir":
				cur.compDir = v
			case "DW_AT_stmt_list":
				n, err := strconv.ParseUint(v, 0, 64)
				if err != nil {
					t.Fatalf("stmt_list %q: %v", v, err)
				}
				cur.stmt, cur.hasStmt = n, true
			}
		case strings.HasPrefix(trim, "Offset:") && strings.HasPrefix(line, "  Offset:"):
			n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(trim, "Offset:")), 0, 64)
			if err != nil {
				t.Fatalf("offset %q: %v", trim, err)
			}
			tab = &table{}
			tables[n] = tab
			mode = ""
		case tab != nil && strings.HasPrefix(trim, "DWARF Version:"):
			tab.version, _ = strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(trim, "DWARF Version:")), 10, 64)
		case strings.HasPrefix(trim, "The Directory Table"):
			mode = "dirs"
		case strings.HasPrefix(trim, "The File Name Table"):
			mode = "files"
		case trim == "" || strings.HasPrefix(trim, "Line Number Statements") || strings.HasPrefix(trim, "No Line Number Statements"):
			mode = ""
		case strings.HasPrefix(trim, "Entry\t"):
		case mode == "dirs" && tab != nil:
			f := strings.SplitN(trim, "\t", 2)
			tab.dirs = append(tab.dirs, value(f[len(f)-1]))
		case mode == "files" && tab != nil:
			f := strings.Split(trim, "\t")
			if len(f) < 3 {
				t.Fatalf("file row %q", line)
			}
			name := strings.Join(f[2:], "\t")
			if tab.version < 5 {
				name = strings.Join(f[4:], "\t")
			}
			tab.files = append(tab.files, [2]string{f[1], value(name)})
		}
	}
	seen := map[string]bool{}
	// A compiler pseudo-file ("<built-in>") names no file.
	pseudo := func(name string) bool { return strings.HasPrefix(name, "<") && strings.HasSuffix(name, ">") }
	for _, c := range cus {
		switch {
		case c.name == "" || pseudo(c.name):
		case strings.HasPrefix(c.name, "/"):
			seen[c.name] = true
		default:
			seen[join(c.compDir, c.name)] = true
		}
		tb := tables[c.stmt]
		if !c.hasStmt || tb == nil {
			continue
		}
		for _, fe := range tb.files {
			if pseudo(fe[1]) {
				continue
			}
			if strings.HasPrefix(fe[1], "/") {
				seen[fe[1]] = true
				continue
			}
			d, _ := strconv.Atoi(fe[0])
			dir := ""
			switch {
			case tb.version >= 5:
				if d < len(tb.dirs) {
					dir = tb.dirs[d]
				}
			case d == 0:
				dir = c.compDir
			case d <= len(tb.dirs):
				dir = tb.dirs[d-1]
			}
			p := join(dir, fe[1])
			if !strings.HasPrefix(p, "/") {
				p = join(c.compDir, p)
			}
			seen[p] = true
		}
	}
	var files []string
	for f := range seen {
		files = append(files, f)
	}
	sort.Strings(files)
	return files
}

func diffFiles(t *testing.T, got, want []string) {
	t.Helper()
	g := strings.Join(got, "\n")
	w := strings.Join(want, "\n")
	if g != w {
		t.Errorf("files differ from readelf's tables\n got:\n%s\nwant:\n%s", g, w)
	}
}

const mainC = `#include <stdio.h>
#include "util.h"
int main(void) { printf("%d\n", twice(21)); return 0; }
`

const utilH = `static inline int twice(int x) { return x * 2; }
`

const mainCC = `#include <vector>
#include "util.hpp"
int main() { std::vector<int> v{1, 2}; return twice(v[1]) - 4; }
`

const utilHPP = `template <typename T> T twice(T x) { return x * 2; }
`

// compile runs the compiler in dir with args.
func compile(t *testing.T, dir, cc string, args ...string) {
	t.Helper()
	cmd := exec.Command(testenv.Need(t, cc), args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", cc, args, err, b)
	}
}

func TestGccFixturesAgreeWithReadelf(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{
		"src/main.c":       mainC,
		"inc/util.h":       utilH,
		"src/main.cc":      mainCC,
		"inc/util.hpp":     utilHPP,
		"build/.keep":      "",
		"src/sub/other.c":  "#include \"../../inc/util.h\"\nint other(void) { return twice(2); }\n",
		"src/sub/.keep":    "",
		"inc/abs/.keep":    "",
		"inc/abs/absinc.h": "#define ABS 1\n",
	})
	inc := filepath.Join(dir, "inc")
	cases := []struct {
		name string
		cc   string
		args []string
		// want holds paths Files must contain.
		want []string
	}{
		{"dwarf4", "gcc", []string{"-gdwarf-4", "-O0", "-Iinc", "-o", "build/dwarf4", "src/main.c"},
			[]string{dir + "/src/main.c", dir + "/inc/util.h", "/usr/include/stdio.h"}},
		{"dwarf5", "gcc", []string{"-g", "-O2", "-Iinc", "-o", "build/dwarf5", "src/main.c"},
			[]string{dir + "/src/main.c", dir + "/inc/util.h"}},
		{"compressed", "gcc", []string{"-g", "-gz", "-O2", "-Iinc", "-o", "build/gz", "src/main.c"},
			[]string{dir + "/src/main.c", dir + "/inc/util.h"}},
		{"compressed-dwarf4", "gcc", []string{"-gdwarf-4", "-gz=zlib", "-Iinc", "-o", "build/gz4", "src/main.c"},
			[]string{dir + "/src/main.c", dir + "/inc/util.h"}},
		{"prefix-map", "gcc", []string{"-g", "-fdebug-prefix-map=" + dir + "=/nonexistent/proj", "-Iinc", "-o", "build/mapped", "src/main.c"},
			[]string{"/nonexistent/proj/src/main.c", "/nonexistent/proj/inc/util.h"}},
		{"cxx", "g++", []string{"-g", "-I" + inc, "-o", "build/cxx", "src/main.cc"},
			[]string{dir + "/src/main.cc", inc + "/util.hpp"}},
		{"relative-include", "gcc", []string{"-g", "-I", "../../inc", "-c", "-o", "../../build/other.o", "other.c"}, nil},
		{"dotdot", "gcc", []string{"-g", "-I../inc", "-o", "../build/dotdot", "../src/main.c"},
			[]string{dir + "/build/../src/main.c", dir + "/build/../inc/util.h"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wd := dir
			out := ""
			for i, a := range c.args {
				if a == "-o" {
					out = c.args[i+1]
				}
			}
			switch c.name {
			case "relative-include":
				wd = filepath.Join(dir, "src/sub")
			case "dotdot":
				wd = filepath.Join(dir, "build")
			}
			compile(t, wd, c.cc, c.args...)
			bin := filepath.Join(wd, out)
			if c.name == "relative-include" {
				// A relocatable object holds unrelocated string offsets:
				// link it so that the oracle and Scan read the same values.
				compile(t, dir, "gcc", "-shared", "-nostdlib", "-o", "build/other.so", "build/other.o")
				bin = filepath.Join(dir, "build/other.so")
				c.want = []string{dir + "/src/sub/other.c", dir + "/src/sub/../../inc/util.h"}
			}
			res, err := ScanFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			diffFiles(t, res.Files, readelfFiles(t, bin))
			for _, w := range c.want {
				if !contains(res.Files, w) {
					t.Errorf("Files lack %s:\n%s", w, strings.Join(res.Files, "\n"))
				}
			}
			if len(res.Units) == 0 || res.Units[0].Producer == "" || res.Units[0].CompDir == "" {
				t.Errorf("units = %+v", res.Units)
			}
		})
	}
}

func contains(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}

func TestJoin(t *testing.T) {
	for _, c := range [][3]string{
		{"/build/x/build-static", "../Modules/timemodule.c", "/build/x/build-static/../Modules/timemodule.c"},
		{"/a/", "b.c", "/a/b.c"},
		{"", "b.c", "b.c"},
		{"/a", "", "/a"},
		{"./build-static", "../x.c", "./build-static/../x.c"},
	} {
		if got := join(c[0], c[1]); got != c[2] {
			t.Errorf("join(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestNotELF(t *testing.T) {
	if _, err := Scan(bytes.NewReader([]byte("#!/bin/sh\n"))); !errors.Is(err, elfinfo.ErrNotELF) {
		t.Errorf("err = %v, want ErrNotELF", err)
	}
	if _, err := Scan(bytes.NewReader([]byte("\x7fELF\x02\x01\x01"))); !errors.Is(err, elfinfo.ErrCorrupt) {
		t.Errorf("err = %v, want ErrCorrupt", err)
	}
}

func TestNoDWARF(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"m.c": "int main(void) { return 0; }\n"})
	compile(t, dir, "gcc", "-g0", "-o", "m", "m.c")
	res, err := ScanFile(filepath.Join(dir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Units) != 0 || len(res.Files) != 0 {
		t.Errorf("res = %+v", res)
	}
}

// TestTruncatedSections cuts a fixture's DWARF at every few bytes: Scan
// must return an error wrapping ErrCorrupt or a result, never panic.
func TestTruncatedSections(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"src/main.c": mainC, "inc/util.h": utilH})
	compile(t, dir, "gcc", "-g", "-Iinc", "-o", "m", "src/main.c")
	b, err := os.ReadFile(filepath.Join(dir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n += 97 {
		_, err := Scan(bytes.NewReader(b[:n]))
		if err != nil && !errors.Is(err, elfinfo.ErrCorrupt) && !errors.Is(err, elfinfo.ErrNotELF) {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
}

// debianPython returns Debian's python3.11 and its build-id debug file.
func debianPython(t testing.TB) (testenv.Python, string) {
	t.Helper()
	py := testenv.Debian(t)
	id, err := elfinfo.ReadBuildIDFile(py.Exe)
	if err != nil {
		t.Fatal(err)
	}
	return py, testenv.DebianDebugFile(t, id)
}

func TestDebianPython(t *testing.T) {
	py, p := debianPython(t)
	res, err := ScanFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Debian builds in /build/reproducible-path/python3.11-<version>.
	compDir := "/build/reproducible-path/python" + py.Minor() + "-" + py.Version + "/build-static"
	for _, w := range []string{compDir + "/../Modules/timemodule.c", compDir + "/../Python/ceval.c", "/usr/include/stdio.h"} {
		if !contains(res.Files, w) {
			t.Errorf("Files lack %s", w)
		}
	}
	sawCompDir := false
	for _, u := range res.Units {
		if u.CompDir == compDir {
			sawCompDir = true
			break
		}
	}
	if !sawCompDir || len(res.Units) < 100 {
		t.Errorf("%d units, none with comp_dir %s", len(res.Units), compDir)
	}
	if testing.Short() {
		return
	}
	diffFiles(t, res.Files, readelfFiles(t, p))
}

func TestPyenvLibpython(t *testing.T) {
	py := testenv.Pyenv(t, "3.12")
	p := testenv.NeedFile(t, py.Libpython(), "a pyenv build with --enable-shared")
	res, err := ScanFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var compDir string
	for _, u := range res.Units {
		if strings.HasPrefix(u.CompDir, "/tmp/python-build.") && strings.HasSuffix(u.CompDir, "/Python-"+py.Version) {
			compDir = u.CompDir
			break
		}
	}
	if compDir == "" {
		t.Fatalf("no unit with comp_dir /tmp/python-build.*/Python-%s: %+v", py.Version, res.Units[:min(3, len(res.Units))])
	}
	if w := compDir + "/Python/ceval.c"; !contains(res.Files, w) {
		t.Errorf("Files lack %s", w)
	}
	if !testing.Short() {
		diffFiles(t, res.Files, readelfFiles(t, p))
	}
}

// peakHeap runs fn with a low GC target and returns the largest live
// heap seen while it ran, sampled every 100µs, above the heap before.
func peakHeap(fn func()) uint64 {
	old := debug.SetGCPercent(5)
	defer debug.SetGCPercent(old)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	return peak.Load()
}

// TestMemoryBounded checks that scanning the Debian debug file, whose
// DWARF sections inflate to more than 7 MB (.debug_info alone 5.4 MB),
// keeps a small live heap, and compares it with debug/dwarf, which holds
// every section in memory.
func TestMemoryBounded(t *testing.T) {
	_, p := debianPython(t)
	var err error
	scan := peakHeap(func() { _, err = ScanFile(p) })
	if err != nil {
		t.Fatal(err)
	}
	std := peakHeap(func() {
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.DWARF(); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("peak live heap: srcscan.ScanFile %d KB, elf.File.DWARF alone %d KB", scan>>10, std>>10)
	if scan > 4<<20 {
		t.Errorf("peak heap %d bytes; streaming should need far less than the 5.4 MB .debug_info", scan)
	}
}

func BenchmarkScanDebianPython(b *testing.B) {
	_, p := debianPython(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ScanFile(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSourcePath checks the join on literal DWARF strings: what a unit's
// DW_AT_name or a line table entry records, and the path gdb opens.
func TestSourcePath(t *testing.T) {
	const stackV2 = "/project/build/cmake.linux-x86_64-cpython-313/ddtrace.internal.datadog.profiling.stack_v2._stack_v2"
	for _, c := range []struct{ compDir, dir, name, want string }{
		// CMake: DW_AT_name is absolute, DW_AT_comp_dir is the build dir.
		{stackV2, "", stackV2 + "/_deps/echion-src/echion/frame.cc", stackV2 + "/_deps/echion-src/echion/frame.cc"},
		{stackV2, "", "/project/src/stack_v2.cpp", "/project/src/stack_v2.cpp"},
		// An absolute name in a line table whatever its directory says.
		{"/b", "/usr/include", "/abs/x.h", "/abs/x.h"},
		// A relative unit name under comp_dir, ".." kept.
		{"/build/p-1/build-static", "", "../Modules/timemodule.c", "/build/p-1/build-static/../Modules/timemodule.c"},
		// An absolute directory entry; a relative one under comp_dir.
		{"/b", "/usr/include", "stdio.h", "/usr/include/stdio.h"},
		{"/b", "../inc", "u.h", "/b/../inc/u.h"},
		// DWARF 5 directory 0 is the compilation directory itself.
		{"/b", "/b", "s.c", "/b/s.c"},
		{"/b/", "", "s.c", "/b/s.c"},
		// No comp_dir: stays relative (srcmap leaves it out).
		{"", "", "s.c", "s.c"},
		// Compiler pseudo-files are no files, wherever they are recorded.
		{"/b", "", "<built-in>", ""},
		{"/b", "/b", "<command-line>", ""},
		{"/b", "", "<artificial>", ""},
		{"/b", "", "<stdin>", ""},
		{"/b", "", "", ""},
		// A real file whose name merely has angle brackets in it.
		{"/b", "", "<gen>/x.c", "/b/<gen>/x.c"},
	} {
		if got := sourcePath(c.compDir, c.dir, c.name); got != c.want {
			t.Errorf("sourcePath(%q, %q, %q) = %q, want %q", c.compDir, c.dir, c.name, got, c.want)
		}
	}
}

// TestAbsoluteUnitName builds the way CMake does, an absolute source path
// compiled in a separate build directory, plain and with the build and
// source directories remapped as a manylinux build records them: no path
// may have the build directory glued in front of the absolute name.
func TestAbsoluteUnitName(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{
		"src/echion/frame.c": "#include \"frame.h\"\nint frame(void) { return twice(3); }\n",
		"src/echion/frame.h": utilH,
		"build/.keep":        "",
	})
	build := filepath.Join(dir, "build")
	const mapped = "/project/build/cmake.linux-x86_64-cpython-313/x._stack_v2"
	for _, c := range []struct {
		name   string
		args   []string
		source string // where frame.c must be in Files
	}{
		{"plain", nil, dir + "/src/echion/frame.c"},
		{"prefix-map", []string{
			"-fdebug-prefix-map=" + filepath.Join(dir, "src") + "=" + mapped + "/_deps/echion-src",
			"-fdebug-prefix-map=" + build + "=" + mapped,
		}, mapped + "/_deps/echion-src/echion/frame.c"},
	} {
		for _, dwarf := range []string{"-gdwarf-4", "-gdwarf-5"} {
			t.Run(c.name+dwarf, func(t *testing.T) {
				out := c.name + dwarf + ".so"
				args := append([]string{dwarf, "-shared", "-nostdlib", "-fPIC"}, c.args...)
				compile(t, build, "gcc", append(args, "-o", out, filepath.Join(dir, "src/echion/frame.c"))...)
				bin := filepath.Join(build, out)
				res, err := ScanFile(bin)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Units) == 0 || !strings.HasPrefix(res.Units[0].Name, "/") {
					t.Fatalf("fixture's unit name is not absolute: %+v", res.Units)
				}
				for _, f := range res.Files {
					if strings.Contains(f, "//") {
						t.Errorf("joined path %s", f)
					}
				}
				for _, w := range []string{c.source, strings.TrimSuffix(c.source, ".c") + ".h"} {
					if !contains(res.Files, w) {
						t.Errorf("Files lack %s:\n%s", w, strings.Join(res.Files, "\n"))
					}
				}
				diffFiles(t, res.Files, readelfFiles(t, bin))
			})
		}
	}
}

// TestBuiltinNotAFile: gcc names "<built-in>" in the line table of a unit
// using va_list; it is no source file.
func TestBuiltinNotAFile(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"v.c": "#include <stdarg.h>\n" +
		"int f(int n, ...) { va_list a; va_start(a, n); int x = va_arg(a, int); va_end(a); return x; }\n"})
	for _, dwarf := range []string{"-gdwarf-4", "-gdwarf-5"} {
		t.Run(dwarf, func(t *testing.T) {
			compile(t, dir, "gcc", dwarf, "-DX=1", "-g3", "-shared", "-nostdlib", "-fPIC", "-o", "v"+dwarf+".so", "v.c")
			bin := filepath.Join(dir, "v"+dwarf+".so")
			out, err := exec.Command(testenv.Need(t, "readelf"), "--debug-dump=line", bin).Output()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(out, []byte("<built-in>")) {
				t.Fatal("fixture: gcc recorded no <built-in> file")
			}
			res, err := ScanFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if !contains(res.Files, dir+"/v.c") {
				t.Errorf("Files lack %s/v.c", dir)
			}
			for _, f := range res.Files {
				if strings.Contains(f, "<") {
					t.Errorf("pseudo-file in Files: %s", f)
				}
			}
			diffFiles(t, res.Files, readelfFiles(t, bin))
		})
	}
}

// TestLTOArtificialUnit: an LTO link makes units named "<artificial>".
func TestLTOArtificialUnit(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"m.c": "int g(int);\nint main(void) { return g(0); }\n", "g.c": "int g(int x) { return x; }\n"})
	compile(t, dir, "gcc", "-g", "-O2", "-flto", "-o", "m", "m.c", "g.c")
	res, err := ScanFile(filepath.Join(dir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	sawArtificial := false
	for _, u := range res.Units {
		sawArtificial = sawArtificial || u.Name == "<artificial>"
	}
	if !sawArtificial {
		t.Fatal("fixture: gcc made no <artificial> unit")
	}
	for _, f := range res.Files {
		if strings.Contains(f, "<") {
			t.Errorf("pseudo-file in Files: %s", f)
		}
	}
	if !contains(res.Files, dir+"/m.c") {
		t.Errorf("Files lack %s/m.c:\n%s", dir, strings.Join(res.Files, "\n"))
	}
}
