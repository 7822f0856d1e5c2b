package symbols

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/pyattach/pyattach/detect/testenv"
)

func TestParseWheelStem(t *testing.T) {
	tests := []struct {
		in   string
		want WheelStem
	}{
		{"ddtrace-1.20.0-cp39-cp39-linux_x86_64", WheelStem{Name: "ddtrace", Version: "1.20.0", Python: "cp39", ABI: "cp39", Platform: "linux_x86_64"}},
		{"ddtrace-1.20.0-cp39-cp39-macosx_10_9_x86_64", WheelStem{Name: "ddtrace", Version: "1.20.0", Python: "cp39", ABI: "cp39", Platform: "macosx_10_9_x86_64"}},
		{"dd_trace-2.9.0-1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64",
			WheelStem{Name: "dd_trace", Version: "2.9.0", Build: "1", Python: "cp311", ABI: "cp311", Platform: "manylinux_2_17_x86_64.manylinux2014_x86_64"}},
		{"pkg-1.0+local.7-py2.py3-none-any", WheelStem{Name: "pkg", Version: "1.0+local.7", Python: "py2.py3", ABI: "none", Platform: "any"}},
		{"mypkg-1.2.3", WheelStem{Name: "mypkg", Version: "1.2.3"}},
		{"x-1!2.0rc1-cp313-cp313t-linux_aarch64", WheelStem{Name: "x", Version: "1!2.0rc1", Python: "cp313", ABI: "cp313t", Platform: "linux_aarch64"}},
	}
	for _, tt := range tests {
		got, err := ParseWheelStem(tt.in)
		if err != nil {
			t.Errorf("ParseWheelStem(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseWheelStem(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if got.String() != tt.in {
			t.Errorf("String() = %q, want %q", got.String(), tt.in)
		}
	}
}

func TestParseWheelStemErrors(t *testing.T) {
	for _, in := range []string{
		"", "mypkg", "a-b-c", "a-b-c-d", "a-1-x-cp311-cp311-linux", // build tag without a digit
		"a-1-2-3-4-5-6", "a--1-cp3-none-any", "../x-1", "a b-1", "a-1/2", "_a-1", "a-.1",
		"a-1-cp311-cp311-linux_x86_64\x00",
	} {
		if w, err := ParseWheelStem(in); err == nil {
			t.Errorf("ParseWheelStem(%q) = %+v, want an error", in, w)
		}
	}
}

func TestParseDebugZipName(t *testing.T) {
	w, err := ParseDebugZipName("/dl/ddtrace-1.20.0-cp39-cp39-linux_x86_64-debug-symbols.zip")
	if err != nil || w.Name != "ddtrace" || w.Version != "1.20.0" || w.Platform != "linux_x86_64" {
		t.Fatalf("got %+v, %v", w, err)
	}
	for _, in := range []string{
		"ddtrace-1.20.0-cp39-cp39-linux_x86_64.whl",
		"ddtrace-1.20.0-cp39-cp39-linux_x86_64-debug-symbols.tar.gz",
		"-debug-symbols.zip",
		"ddtrace-debug-symbols.zip",
	} {
		_, err := ParseDebugZipName(in)
		if !errors.Is(err, ErrNotDebugZip) {
			t.Errorf("ParseDebugZipName(%q) = %v, want ErrNotDebugZip", in, err)
		}
	}
}

func TestNormalizeName(t *testing.T) {
	testenv.Cases(t, "NormalizeName", NormalizeName, map[string]string{
		"ddtrace": "ddtrace", "dd_trace": "dd-trace", "DD.Trace": "dd-trace", "dd--__..trace": "dd-trace",
		"Foo_Bar-Baz": "foo-bar-baz", "_x_": "x", "": "",
	})
}

func TestParseRecord(t *testing.T) {
	in := "mypkg/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\r\n" +
		"\"mypkg/with,comma \"\"q\"\".so\",sha256=abc,12\n" +
		"mypkg-1.2.3.dist-info/RECORD,,\n" +
		"\n" +
		"mypkg/__pycache__/__init__.cpython-311.pyc\n" +
		"../../../bin/tool,sha256=x,7\n"
	got, err := ParseRecord(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []RecordEntry{
		{Path: "mypkg/__init__.py", Hash: "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU", Size: 0},
		{Path: `mypkg/with,comma "q".so`, Hash: "sha256=abc", Size: 12},
		{Path: "mypkg-1.2.3.dist-info/RECORD", Size: -1},
		{Path: "mypkg/__pycache__/__init__.cpython-311.pyc", Size: -1},
		{Path: "../../../bin/tool", Hash: "sha256=x", Size: 7},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	d := &Dist{Files: got}
	if _, ok := d.Lookup("./mypkg//__init__.py"); !ok {
		t.Error("Lookup does not clean paths")
	}
	if _, ok := d.Lookup("mypkg/missing.so"); ok {
		t.Error("Lookup found a missing path")
	}
}

func TestParseRecordErrors(t *testing.T) {
	for _, in := range []string{
		"a,b,c,d\n",           // too many fields
		",sha256=x,1\n",       // empty path
		"a,sha256=x,-1\n",     // negative size
		"a,sha256=x,ten\n",    // not a number
		"\"a,sha256=x,1\n",    // unterminated quote
		"a\x00b,sha256=x,1\n", // NUL
		"a\xff,sha256=x,1\n",  // not UTF-8
	} {
		_, err := ParseRecord(strings.NewReader(in))
		if !errors.Is(err, ErrMalformedRecord) {
			t.Errorf("ParseRecord(%q) = %v, want ErrMalformedRecord", in, err)
		}
	}
	big := strings.Repeat("a,,\n", MaxRecordSize/4+1)
	if _, err := ParseRecord(strings.NewReader(big)); !errors.Is(err, ErrMalformedRecord) {
		t.Errorf("oversized RECORD: %v", err)
	}
	if _, err := ParseRecord(iotest.ErrReader(errors.New("boom"))); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("read error: %v", err)
	}
}
