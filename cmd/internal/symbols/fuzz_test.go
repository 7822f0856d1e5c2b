package symbols

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseWheelStem checks that ParseWheelStem never panics, and that
// what it accepts has the documented shape and reassembles to its input.
// Seeds live in testdata/fuzz/FuzzParseWheelStem as well.
func FuzzParseWheelStem(f *testing.F) {
	for _, s := range []string{
		"ddtrace-1.20.0-cp39-cp39-linux_x86_64",
		"dd_trace-2.9.0-1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64",
		"mypkg-1.2.3",
		"a-1-x-cp311-cp311-linux",
		"a--1",
		"",
		"-",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWheelStem(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		if w.String() != s {
			t.Fatalf("String() = %q, want %q", w.String(), s)
		}
		parts := []string{w.Name, w.Version}
		if w.Python != "" || w.ABI != "" || w.Platform != "" {
			parts = append(parts, w.Python, w.ABI, w.Platform)
		}
		if w.Build != "" {
			parts = append(parts, w.Build)
			if w.Build[0] < '0' || w.Build[0] > '9' {
				t.Fatalf("build tag %q does not start with a digit", w.Build)
			}
		}
		for _, p := range parts {
			if p == "" || strings.ContainsAny(p, "-/\\\x00 ") {
				t.Fatalf("bad part %q in %+v", p, w)
			}
		}
		if NormalizeName(w.Name) == "" {
			t.Fatalf("name %q normalises to nothing", w.Name)
		}
		zw, err := ParseDebugZipName("/x/" + s + DebugZipSuffix)
		if err != nil || zw != w {
			t.Fatalf("ParseDebugZipName disagrees: %+v, %v", zw, err)
		}
	})
}

// FuzzParseRecord checks that ParseRecord never panics, that every error
// is a *RecordError naming a line of the input (the reader never fails
// here), and that the
// rows it returns obey the documented shape.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{
		"mypkg/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\nmypkg-1.2.3.dist-info/RECORD,,\n",
		"\"a,b\"\"c.so\",sha256=x,12\r\n",
		"a,b,c,d\n",
		"\"unterminated\n",
		"a\n\nb,,\n",
		"a,sha256=x,-1\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseRecord(bytes.NewReader(b))
		if err != nil {
			var re *RecordError
			if !errors.As(err, &re) || !errors.Is(err, ErrMalformedRecord) || re.Line < 0 || re.Line > 1+bytes.Count(b, []byte("\n")) {
				t.Fatalf("error %v (%T) is not a *RecordError with a line of the input", err, err)
			}
			return
		}
		if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			t.Fatal("accepted invalid UTF-8 or a NUL byte")
		}
		for _, r := range rows {
			if r.Path == "" || r.Size < -1 {
				t.Fatalf("bad row %+v", r)
			}
		}
		again, err := ParseRecord(bytes.NewReader(b))
		if err != nil || len(again) != len(rows) {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}
