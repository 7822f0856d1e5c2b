package proc

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// testdata/python3.11.maps is /proc/self/maps of Debian 12's
// /usr/bin/python3.11 (static interpreter), written by
//
//	python3.11 -c 'import sys; sys.stdout.write(open("/proc/self/maps").read())'
//
// testdata/python3.11-deleted.maps is the same after the process loaded
// "lib with space.so" with ctypes, mapped data.bin, deleted both, and
// mapped a memfd named "jit code".

func readMapsFile(t *testing.T, name string) []Mapping {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	maps, err := ParseMaps(f)
	if err != nil {
		t.Fatalf("ParseMaps(%s): %v", name, err)
	}
	return maps
}

func TestParseMapsPython(t *testing.T) {
	maps := readMapsFile(t, "testdata/python3.11.maps")
	if len(maps) != 43 {
		t.Fatalf("got %d mappings, want 43", len(maps))
	}
	want := []struct {
		i int
		m Mapping
	}{
		{0, Mapping{Start: 0x400000, End: 0x41f000, Perms: "r--p", Dev: "fe:00", Inode: 10166280, Path: "/usr/bin/python3.11"}},
		{1, Mapping{Start: 0x41f000, End: 0x6cf000, Offset: 0x1f000, Perms: "r-xp", Dev: "fe:00", Inode: 10166280, Path: "/usr/bin/python3.11"}},
		// Anonymous: the kernel writes "00:00 0 " with a trailing space.
		{5, Mapping{Start: 0xa7f000, End: 0xac4000, Perms: "rw-p", Dev: "00:00"}},
		{6, Mapping{Start: 0xbabe000, End: 0xbb58000, Perms: "rw-p", Dev: "00:00", Path: "[heap]"}},
		{11, Mapping{Start: 0x7fe1f4752000, End: 0x7fe1f48a8000, Offset: 0x26000, Perms: "r-xp", Dev: "fe:00", Inode: 326269, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"}},
		{31, Mapping{Start: 0x7fe1f4a3a000, End: 0x7fe1f4a41000, Perms: "r--s", Dev: "fe:00", Inode: 325737, Path: "/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache"}},
		{35, Mapping{Start: 0x7fe1f4a49000, End: 0x7fe1f4a4b000, Perms: "r-xp", Dev: "00:00", Path: "[vdso]"}},
		{42, Mapping{Start: 0xffffffffff600000, End: 0xffffffffff601000, Perms: "--xp", Dev: "00:00", Path: "[vsyscall]"}},
	}
	for _, w := range want {
		if maps[w.i] != w.m {
			t.Errorf("mapping %d:\n got %+v\nwant %+v", w.i, maps[w.i], w.m)
		}
	}

	var paths []string
	for _, m := range Modules(maps) {
		paths = append(paths, m.Path)
	}
	wantPaths := []string{
		"/usr/bin/python3.11",
		"/usr/lib/locale/C.utf8/LC_CTYPE",
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libexpat.so.1.8.10",
		"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13",
		"/usr/lib/x86_64-linux-gnu/libm.so.6",
		"/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache",
		"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Errorf("Modules paths:\n got %q\nwant %q", paths, wantPaths)
	}
	mods := Modules(maps)
	if got := mods[0]; got != (Module{Path: "/usr/bin/python3.11", Start: 0x400000, Inode: 10166280, Dev: "fe:00"}) {
		t.Errorf("Modules[0] = %+v", got)
	}
	if got := mods[2].Start; got != 0x7fe1f472c000 {
		t.Errorf("libc Start = %#x, want lowest mapping 0x7fe1f472c000", got)
	}
}

func TestParseMapsDeleted(t *testing.T) {
	maps := readMapsFile(t, "testdata/python3.11-deleted.maps")
	var lib, data, memfd *Mapping
	for i, m := range maps {
		switch {
		case strings.HasSuffix(m.Path, "/lib with space.so") && lib == nil:
			lib = &maps[i]
		case strings.HasSuffix(m.Path, "/data.bin"):
			data = &maps[i]
		case strings.HasPrefix(m.Path, "/memfd:"):
			memfd = &maps[i]
		}
	}
	if lib == nil || data == nil || memfd == nil {
		t.Fatalf("missing mappings: lib %v data %v memfd %v", lib, data, memfd)
	}
	if !lib.Deleted || lib.Path != "/tmp/tmp.j0OPebNn63/lib with space.so" {
		t.Errorf("lib = %+v", *lib)
	}
	if !data.Deleted || data.Perms != "r--s" {
		t.Errorf("data = %+v", *data)
	}
	if !memfd.Deleted || memfd.Path != "/memfd:jit code" {
		t.Errorf("memfd = %+v", *memfd)
	}

	var got []Module
	for _, m := range Modules(maps) {
		if m.Deleted {
			got = append(got, m)
		}
		if strings.HasPrefix(m.Path, "/memfd:") || strings.HasPrefix(m.Path, "[") {
			t.Errorf("Modules kept %q", m.Path)
		}
	}
	want := []Module{
		{Path: "/tmp/tmp.j0OPebNn63/lib with space.so", Start: 0x7fadbe85e000, Deleted: true, Inode: 9978162, Dev: "fe:00"},
		{Path: "/tmp/tmp.j0OPebNn63/data.bin", Start: 0x7fadbee88000, Deleted: true, Inode: 9978178, Dev: "fe:00"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deleted modules:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseMapsLines(t *testing.T) {
	tests := []struct {
		line string
		want Mapping
	}{
		{
			"7f0000001000-7f0000002000 rw-p 00000000 00:00 0                          [anon:python arena]",
			Mapping{Start: 0x7f0000001000, End: 0x7f0000002000, Perms: "rw-p", Dev: "00:00", Path: "[anon:python arena]"},
		},
		{
			"7f0000001000-7f0000002000 r-xp 00001000 08:01 42   /opt/my app/lib (deleted)/x.so (deleted)",
			Mapping{Start: 0x7f0000001000, End: 0x7f0000002000, Offset: 0x1000, Perms: "r-xp", Dev: "08:01", Inode: 42, Path: "/opt/my app/lib (deleted)/x.so", Deleted: true},
		},
		{
			// Trailing spaces belong to the name.
			"1000-2000 r--p 00000000 08:01 42 /tmp/trailing  ",
			Mapping{Start: 0x1000, End: 0x2000, Perms: "r--p", Dev: "08:01", Inode: 42, Path: "/tmp/trailing  "},
		},
		{
			// A newline in a name is escaped by the kernel as \012 (and
			// nothing else is: the other escapes stay as they are).
			`1000-2000 r--p 00000000 08:01 42 /tmp/a\012b\012\012c\011\\012 (deleted)`,
			Mapping{Start: 0x1000, End: 0x2000, Perms: "r--p", Dev: "08:01", Inode: 42, Path: "/tmp/a\nb\n\nc\\011\\\n", Deleted: true},
		},
		{
			// No trailing space after the inode (hand-written input).
			"08048000-08049000 r-xs 00000000 103:0a 7",
			Mapping{Start: 0x8048000, End: 0x8049000, Perms: "r-xs", Dev: "103:0a", Inode: 7},
		},
		{
			"7fff00000000-7fff00001000 rw-s 00000000 00:0f 1234 anon_inode:[perf_event]",
			Mapping{Start: 0x7fff00000000, End: 0x7fff00001000, Perms: "rw-s", Dev: "00:0f", Inode: 1234, Path: "anon_inode:[perf_event]"},
		},
		{
			"1000-2000 r--p 00000000 08:01 42 /tmp/x\r",
			Mapping{Start: 0x1000, End: 0x2000, Perms: "r--p", Dev: "08:01", Inode: 42, Path: "/tmp/x\r"},
		},
	}
	for _, tt := range tests {
		maps, err := ParseMaps(strings.NewReader(tt.line + "\n"))
		if err != nil {
			t.Errorf("ParseMaps(%q): %v", tt.line, err)
			continue
		}
		if len(maps) != 1 || maps[0] != tt.want {
			t.Errorf("ParseMaps(%q):\n got %+v\nwant %+v", tt.line, maps, tt.want)
		}
	}
}

func TestParseMapsEmpty(t *testing.T) {
	maps, err := ParseMaps(strings.NewReader(""))
	if err != nil || len(maps) != 0 {
		t.Errorf("ParseMaps(\"\") = %v, %v", maps, err)
	}
	// No final newline.
	maps, err = ParseMaps(strings.NewReader("1000-2000 r--p 00000000 08:01 42 /x"))
	if err != nil || len(maps) != 1 || maps[0].Path != "/x" {
		t.Errorf("without final newline: %v, %v", maps, err)
	}
}

func TestParseMapsErrors(t *testing.T) {
	const good = "1000-2000 r--p 00000000 08:01 42 /x\n"
	tests := []struct {
		text string
		line int
		msg  string
	}{
		{"zzz", 1, `malformed maps line 1: bad address range "zzz"`},
		{good + "1000 r--p 00000000 08:01 42", 2, `bad address range "1000"`},
		{good + good + "g000-2000 r--p 00000000 08:01 42", 3, `bad start address "g000"`},
		{good + "1000-x r--p 00000000 08:01 42", 2, `bad end address "x"`},
		{good + "2000-1000 r--p 00000000 08:01 42", 2, `end address before start`},
		{"10000000000000000-10000000000000001 r--p 0 08:01 42", 1, `bad start address`},
		{"+1000-2000 r--p 00000000 08:01 42", 1, `bad start address "+1000"`},
		{"0x1000-2000 r--p 00000000 08:01 42", 1, `bad start address "0x1000"`},
		{"1000-2000 rwz 00000000 08:01 42", 1, `bad permissions "rwz"`},
		{"1000-2000 r--q 00000000 08:01 42", 1, `bad permissions "r--q"`},
		{"1000-2000 r--p", 1, `missing offset`},
		{"1000-2000 r--p 0000_000 08:01 42", 1, `bad offset "0000_000"`},
		{"1000-2000 r--p 00000000 0801 42", 1, `bad device "0801"`},
		{"1000-2000 r--p 00000000 08: 42", 1, `bad device "08:"`},
		{"1000-2000 r--p 00000000 08:01", 1, `missing inode`},
		{"1000-2000 r--p 00000000 08:01 -1 /x", 1, `bad inode "-1"`},
		{"1000-2000 r--p 00000000 08:01 99999999999999999999 /x", 1, `bad inode`},
		{good + "\n" + good, 2, `missing address range`},
		{good + strings.Repeat("a", MaxMapsLine+1) + "\n", 2, `line longer than`},
	}
	for _, tt := range tests {
		_, err := ParseMaps(strings.NewReader(tt.text))
		var me *MapsError
		if !errors.As(err, &me) || !errors.Is(err, ErrMalformedMaps) {
			t.Errorf("ParseMaps(%.40q) error = %v, want a *MapsError", tt.text, err)
			continue
		}
		if me.Line != tt.line {
			t.Errorf("ParseMaps(%.40q): line %d, want %d (%v)", tt.text, me.Line, tt.line, err)
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseMaps(%.40q) = %q, want it to contain %q", tt.text, err, tt.msg)
		}
	}
}

func TestParseMapsLongPath(t *testing.T) {
	// A path of PATH_MAX bytes, escaped newlines included, is fine.
	p := "/" + strings.Repeat(`\012`, pathMax/4)
	line := "1000-2000 r--p 00000000 08:01 42" + strings.Repeat(" ", 40) + p + " (deleted)\n"
	maps, err := ParseMaps(strings.NewReader(line))
	if err != nil || len(maps) != 1 || maps[0].Path != strings.ReplaceAll(p, `\012`, "\n") || !maps[0].Deleted {
		t.Fatalf("long path: %v", err)
	}
}

func TestParseMapsReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ParseMaps(iotest.ErrReader(boom))
	if !errors.Is(err, boom) || errors.Is(err, ErrMalformedMaps) {
		t.Errorf("error = %v, want it to wrap boom only", err)
	}
}

func TestModulesFilter(t *testing.T) {
	maps := []Mapping{
		{Start: 0x5000, Path: "/usr/bin/python3"},
		{Start: 0x1000, Path: "/usr/bin/python3"}, // lower start later on
		{Start: 0x6000, Path: "/dev/zero"},
		{Start: 0x7000, Path: "/memfd:x", Deleted: true},
		{Start: 0x8000, Path: "/SYSV0000abcd", Deleted: true},
		{Start: 0x8800, Path: "/SYSV0000abcd"}, // a real file of that name
		{Start: 0x9000, Path: "anon_inode:[io_uring]"},
		{Start: 0xa000, Path: "[heap]"},
		{Start: 0xb000, Path: ""},
		{Start: 0xc000, Path: "/usr/lib/libc.so.6", Inode: 1, Dev: "fe:00"},
		{Start: 0xd000, Path: "/usr/lib/libc.so.6", Inode: 2, Dev: "fe:00", Deleted: true},
		{Start: 0xe000, Path: "/usr/lib/libc.so.6", Inode: 1, Dev: "fe:00"},
	}
	want := []Module{
		{Path: "/usr/bin/python3", Start: 0x1000},
		{Path: "/SYSV0000abcd", Start: 0x8800},
		{Path: "/usr/lib/libc.so.6", Start: 0xc000, Inode: 1, Dev: "fe:00"},
		{Path: "/usr/lib/libc.so.6", Start: 0xd000, Inode: 2, Dev: "fe:00", Deleted: true},
	}
	if got := Modules(maps); !reflect.DeepEqual(got, want) {
		t.Errorf("Modules:\n got %+v\nwant %+v", got, want)
	}
	if got := Modules(nil); len(got) != 0 {
		t.Errorf("Modules(nil) = %v", got)
	}
}

func TestMappingFile(t *testing.T) {
	for _, c := range []struct {
		m    Mapping
		want bool
	}{
		{Mapping{Path: "/usr/lib/libc.so.6", Inode: 42}, true},
		{Mapping{Path: "/memfd:jit (deleted)", Inode: 7, Deleted: true}, true},
		{Mapping{Path: "[vdso]"}, false},
		{Mapping{Path: "[heap]"}, false},
		{Mapping{Path: ""}, false},
		{Mapping{Path: "/dev/zero", Inode: 0}, false},
	} {
		if got := c.m.File(); got != c.want {
			t.Errorf("%+v.File() = %v, want %v", c.m, got, c.want)
		}
	}
}
