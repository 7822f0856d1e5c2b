package pyversion

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in                  string
		major, minor, patch int
		hasMinor, hasPatch  bool
		pre, flags          string
		plus                bool
		str, majorMinor     string
	}{
		{in: "3", major: 3, str: "3"},
		{in: "3.11", major: 3, minor: 11, hasMinor: true, str: "3.11", majorMinor: "3.11"},
		{in: "3.11.2", major: 3, minor: 11, patch: 2, hasMinor: true, hasPatch: true, str: "3.11.2", majorMinor: "3.11"},
		{in: "2.7.18", major: 2, minor: 7, patch: 18, hasMinor: true, hasPatch: true, str: "2.7.18", majorMinor: "2.7"},
		{in: "3.13.0rc1", major: 3, minor: 13, hasMinor: true, hasPatch: true, pre: "rc1", str: "3.13.0rc1", majorMinor: "3.13"},
		{in: "3.14.0a1", major: 3, minor: 14, hasMinor: true, hasPatch: true, pre: "a1", str: "3.14.0a1", majorMinor: "3.14"},
		{in: "3.12.0b2", major: 3, minor: 12, hasMinor: true, hasPatch: true, pre: "b2", str: "3.12.0b2", majorMinor: "3.12"},
		{in: "3.11.2+", major: 3, minor: 11, patch: 2, hasMinor: true, hasPatch: true, plus: true, str: "3.11.2+", majorMinor: "3.11"},
		{in: "3.14.0a1+", major: 3, minor: 14, hasMinor: true, hasPatch: true, pre: "a1", plus: true, str: "3.14.0a1+", majorMinor: "3.14"},
		{in: "3.11d", major: 3, minor: 11, hasMinor: true, flags: "d", str: "3.11d", majorMinor: "3.11"},
		{in: "3.13t", major: 3, minor: 13, hasMinor: true, flags: "t", str: "3.13t", majorMinor: "3.13"},
		{in: "3.13td", major: 3, minor: 13, hasMinor: true, flags: "td", str: "3.13td", majorMinor: "3.13"},
		{in: "3.7m", major: 3, minor: 7, hasMinor: true, flags: "m", str: "3.7m", majorMinor: "3.7"},
		{in: "3.7dm", major: 3, minor: 7, hasMinor: true, flags: "dm", str: "3.7dm", majorMinor: "3.7"},
		{in: "3.2dmu", major: 3, minor: 2, hasMinor: true, flags: "dmu", str: "3.2dmu", majorMinor: "3.2"},
		{in: "3.13.0t", major: 3, minor: 13, hasMinor: true, hasPatch: true, flags: "t", str: "3.13.0t", majorMinor: "3.13"},
		{in: "3.12.1.final.0", major: 3, minor: 12, patch: 1, hasMinor: true, hasPatch: true, str: "3.12.1", majorMinor: "3.12"},
		{in: "3.13.0.candidate.1", major: 3, minor: 13, hasMinor: true, hasPatch: true, pre: "rc1", str: "3.13.0rc1", majorMinor: "3.13"},
		{in: "3.14.0.alpha.7", major: 3, minor: 14, hasMinor: true, hasPatch: true, pre: "a7", str: "3.14.0a7", majorMinor: "3.14"},
		{in: "3.10.0.beta.4", major: 3, minor: 10, hasMinor: true, hasPatch: true, pre: "b4", str: "3.10.0b4", majorMinor: "3.10"},
		{in: "3.13dt", major: 3, minor: 13, hasMinor: true, flags: "td", str: "3.13td", majorMinor: "3.13"},
		{in: "3.7md", major: 3, minor: 7, hasMinor: true, flags: "dm", str: "3.7dm", majorMinor: "3.7"},
		{in: "3.10", major: 3, minor: 10, hasMinor: true, str: "3.10", majorMinor: "3.10"},
	} {
		v, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if v.Major() != tc.major || v.Minor() != tc.minor || v.Patch() != tc.patch {
			t.Errorf("Parse(%q) = %d.%d.%d, want %d.%d.%d", tc.in, v.Major(), v.Minor(), v.Patch(), tc.major, tc.minor, tc.patch)
		}
		if v.HasMinor() != tc.hasMinor || v.HasPatch() != tc.hasPatch || v.Exact() != tc.hasPatch {
			t.Errorf("Parse(%q): HasMinor %v HasPatch %v Exact %v, want %v %v", tc.in, v.HasMinor(), v.HasPatch(), v.Exact(), tc.hasMinor, tc.hasPatch)
		}
		if v.Pre() != tc.pre || v.Flags != tc.flags || v.Plus() != tc.plus {
			t.Errorf("Parse(%q): pre %q flags %q plus %v, want %q %q %v", tc.in, v.Pre(), v.Flags, v.Plus(), tc.pre, tc.flags, tc.plus)
		}
		if v.String() != tc.str || v.MajorMinor() != tc.majorMinor {
			t.Errorf("Parse(%q): String %q MajorMinor %q, want %q %q", tc.in, v.String(), v.MajorMinor(), tc.str, tc.majorMinor)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		"", "v3.12.1", " 3.12", "3.12 ", "3.", "3.x", "3.x.1", ".3", "3..1", "3.12.1.2", "3.12.x",
		"3.011", "03.11", "3.1234567890.0", "3.13.0rc", "3.13.0rc01", "3.13.0c1", "3.13.0-rc.1",
		"3.11dd", "3.13tdt", "3.11x", "3.11-dbg", "3d", "3.11+", "3.13rc1", "3.12.1.final.1",
		"3.12.1.final", "3.12.1.gamma.1", "3.12.1/..", "3.12.1\x00", "python3.11", "3.11.2++",
	} {
		v, err := Parse(in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, %v; want a *SyntaxError", in, v, err)
			continue
		}
		if se.Input != in {
			t.Errorf("Parse(%q): error names %q", in, se.Input)
		}
	}
}

func TestCompare(t *testing.T) {
	// Each version sorts before every later one.
	order := []string{
		"2.7", "2.7.18", "3", "3.6", "3.7", "3.7.17", "3.9", "3.9.0", "3.9.1", "3.9.18", "3.10", "3.10.0",
		"3.11", "3.11d", "3.11.0", "3.11.2", "3.11.2d", "3.11.2+", "3.11.10",
		"3.13.0a1", "3.13.0a10", "3.13.0b2", "3.13.0rc1", "3.13.0rc2", "3.13.0rc2+", "3.13", "3.13t", "3.13td", "3.13.0", "3.13.1",
	}
	for i, a := range order {
		va := MustParse(a)
		if c := va.Compare(va); c != 0 {
			t.Errorf("Compare(%s, %s) = %d", a, a, c)
		}
		for _, b := range order[i+1:] {
			vb := MustParse(b)
			if c := va.Compare(vb); c != -1 {
				t.Errorf("Compare(%s, %s) = %d, want -1", a, b, c)
			}
			if c := vb.Compare(va); c != 1 {
				t.Errorf("Compare(%s, %s) = %d, want 1", b, a, c)
			}
		}
	}
	if c := MustParse("3.12.1.final.0").Compare(MustParse("3.12.1")); c != 0 {
		t.Errorf("3.12.1.final.0 vs 3.12.1: %d", c)
	}
}

func TestAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v            string
		major, minor int
		want         bool
	}{
		{"3.13", 3, 13, true}, {"3.13.0rc1", 3, 13, true}, {"3.13td", 3, 13, true}, {"3.12.9", 3, 13, false},
		{"3.11d", 3, 11, true}, {"3.11d", 3, 12, false}, {"4.0", 3, 13, true}, {"2.7.18", 3, 0, false}, {"3", 3, 0, true},
	} {
		if got := MustParse(tc.v).AtLeast(tc.major, tc.minor); got != tc.want {
			t.Errorf("%s.AtLeast(%d, %d) = %v", tc.v, tc.major, tc.minor, got)
		}
	}
}

// TestDisagreements pins the inputs on which the hand-written parsers
// this package replaced gave different answers.
func TestDisagreements(t *testing.T) {
	// majorMinor: "3.11d" was "3.11d" in cmd/pyattach and detect/pyinfo,
	// "3.11" in venv; it is 3.11 with flag d.
	v := MustParse("3.11d")
	if v.MajorMinor() != "3.11" || v.Flags != "d" || !v.AtLeast(3, 11) {
		t.Errorf("3.11d: MajorMinor %q Flags %q", v.MajorMinor(), v.Flags)
	}
	// "3.13.0rc1" was 3.13.0 to venv's normalizeVersion and compareVersions
	// (they dropped the tag) and exact to pyext; it is a pre-release of
	// 3.13.0, sorting before it, and exact.
	rc := MustParse("3.13.0rc1")
	if !rc.Exact() || rc.Compare(MustParse("3.13.0")) != -1 || rc.Release() != "3.13.0" {
		t.Errorf("3.13.0rc1: Exact %v Release %q", rc.Exact(), rc.Release())
	}
	// "3.9" against "3.9.0": venv said older (a missing part was -1);
	// the numbers are equal; the written precision breaks the tie the same
	// way as before.
	if MustParse("3.9").Compare(MustParse("3.9.0")) != -1 {
		t.Error("3.9 does not sort before 3.9.0")
	}
}

func TestZeroVersion(t *testing.T) {
	var v Version
	if v.String() != "" || v.MajorMinor() != "" || v.HasMinor() || v.Exact() || v.Compare(MustParse("0")) != -1 {
		t.Errorf("zero Version: %q %q", v.String(), v.MajorMinor())
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"3", "3.11", "3.11.2", "3.13.0rc1", "3.14.0a1", "3.12.0b2", "3.11.2+", "3.11d", "3.13t",
		"3.13td", "3.7m", "3.7dm", "2.7.18", "3.12.1.final.0", "3.13.0.candidate.1", "3.11dt", "v3", "3.011"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): untyped error %v", s, err)
			}
			return
		}
		w, err := Parse(v.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, v, err)
		}
		if w.String() != v.String() || w.Compare(v) != 0 || w.Flags != v.Flags || w.MajorMinor() != v.MajorMinor() {
			t.Fatalf("Parse(%q) = %q, reparsed as %q", s, v, w)
		}
		if v.HasMinor() && !v.AtLeast(v.Major(), v.Minor()) {
			t.Fatalf("%q is not at least its own major.minor", s)
		}
	})
}

func TestTagged(t *testing.T) {
	for in, want := range map[string]bool{
		"3.12.1": true, "2.7.18": true, "3.13.0rc1": true, "3.14.0a7": true, "3.12.0b4": true,
		"3.12": false, "3.13.0+": false, "3.13.0t": false, "3": false, "3.11d": false,
	} {
		if got := MustParse(in).Tagged(); got != want {
			t.Errorf("%s.Tagged() = %v", in, got)
		}
	}
}

func TestMajorMinorOf(t *testing.T) {
	for in, want := range map[string]string{
		"3.11.2": "3.11", "3.11d": "3.11", "3.13.0rc1": "3.13", "3.12.1.final.0": "3.12", "3": "", "3.x": "", "": "", "3.11-dbg": "",
	} {
		if got := MajorMinorOf(in); got != want {
			t.Errorf("MajorMinorOf(%q) = %q, want %q", in, got, want)
		}
	}
}
