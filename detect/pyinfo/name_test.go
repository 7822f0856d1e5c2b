package pyinfo

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name, version, flags string
		ok                   bool
	}{
		{"python3.11", "3.11", "", true},
		{"python3.11d", "3.11", "d", true},
		{"python3.11-dbg", "3.11", "d", true},
		{"python3.6m", "3.6", "m", true},
		{"python3.6dm", "3.6", "dm", true},
		{"python3.6md", "3.6", "dm", true},
		{"python3.13t", "3.13", "t", true},
		{"python3.13td", "3.13", "td", true},
		{"python3.13dt", "3.13", "td", true},
		{"python3.2mu", "3.2", "mu", true},
		{"python2.7", "2.7", "", true},
		{"/usr/bin/python3.11", "3.11", "", true},
		{"libpython3.12.so.1.0", "3.12", "", true},
		{"libpython3.12.so", "3.12", "", true},
		{"libpython3.13t.so.1.0", "3.13", "t", true},
		{"libpython3.11d.so.1.0", "3.11", "d", true},
		{"libpython3.6m.so.1.0", "3.6", "m", true},
		{"libpython2.7.so.1.0", "2.7", "", true},
		{"/root/.pyenv/versions/3.9.18/lib/libpython3.9.so.1.0", "3.9", "", true},

		{"python", "", "", false},
		{"python3", "", "", false},
		{"python3.", "", "", false},
		{"python3.x", "", "", false},
		{"python3.11-config", "", "", false},
		{"python3.11-gdb.py", "", "", false},
		{"python3.11dd", "", "", false},
		{"python3.111", "", "", false},
		{"python3.01", "", "", false},
		{"python4.0", "", "", false},
		{"python3.11.exe", "", "", false},
		{"libpython3.so", "", "", false},
		{"libpython3.12", "", "", false},
		{"libpython3.12.so.", "", "", false},
		{"libpython3.12.so.1.x", "", "", false},
		{"libpython3.12.a", "", "", false},
		{"libpython3.12d.sox", "", "", false},
		{"exe", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		v, fl, ok := ParseName(tt.name)
		if v != tt.version || fl != tt.flags || ok != tt.ok {
			t.Errorf("ParseName(%q) = %q, %q, %v; want %q, %q, %v", tt.name, v, fl, ok, tt.version, tt.flags, tt.ok)
		}
	}
}

func TestIsLibpython(t *testing.T) {
	yes := []string{"libpython2.7.so.1.0", "libpython3.12.so", "libpython3.6m.so.1.0", "libpython3.13t.so.1.0", "libpython3.11d.so.1.0", "/usr/lib/libpython3.11.so.1.0"}
	no := []string{"libpython3.so", "python3.12", "libc.so.6", "libpython3.12.a", "libpythonX.so", ""}
	for _, n := range yes {
		if !IsLibpython(n) {
			t.Errorf("IsLibpython(%q) = false", n)
		}
	}
	for _, n := range no {
		if IsLibpython(n) {
			t.Errorf("IsLibpython(%q) = true", n)
		}
	}
}

func TestFormatHexVersion(t *testing.T) {
	tests := []struct {
		hex  uint64
		want string
		ok   bool
	}{
		{0x030d00f0, "3.13.0", true},
		{0x030c01f0, "3.12.1", true},
		{0x030b02f0, "3.11.2", true},
		{0x030e00a1, "3.14.0a1", true},
		{0x030e00b3, "3.14.0b3", true},
		{0x030c00c2, "3.12.0rc2", true},
		{0x020712f0, "2.7.18", true},
		{0x030d00f1, "", false}, // final with a serial
		{0x030d00d0, "", false}, // unknown level
		{0x040000f0, "", false},
		{0x0364_00f0, "", false}, // minor 100
		{0x1_030d00f0, "", false},
		{0, "", false},
	}
	for _, tt := range tests {
		got, ok := FormatHexVersion(tt.hex)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FormatHexVersion(%#x) = %q, %v; want %q, %v", tt.hex, got, ok, tt.want, tt.ok)
		}
	}
}

func TestScanVersionStrings(t *testing.T) {
	long := strings.Repeat("x", 100)
	data := "\x00abc\x00" + "3.11.2\x00" + "/root/.pyenv/versions/3.9.18\x00" +
		long + "3.14.0a1+\x00" + "13.9.18\x00" + "1.3.9.18\x00" + "3.2\x00" +
		"3.12.0rc1\x00" + "4.1.1\x00" + "3.11.2x\x00" + "3.111.2\x00" + "3.8.1" // no NUL: not a string
	want := []versionCandidate{
		{"3.11.2", true},
		{"3.9.18", false},
		{"3.14.0a1", false},
		{"3.12.0rc1", true},
	}
	for _, chunk := range []int{1, 2, 3, 7, 16, 64 << 10} {
		got, err := scanVersionStrings(strings.NewReader(data), 1<<20, chunk)
		if err != nil {
			t.Fatal(err)
		}
		if !equalCands(got, want) {
			t.Errorf("chunk %d: got %v, want %v", chunk, got, want)
		}
		got, err = scanVersionStrings(iotest.OneByteReader(strings.NewReader(data)), 1<<20, chunk)
		if err != nil || !equalCands(got, want) {
			t.Errorf("one-byte reader, chunk %d: got %v, %v, want %v", chunk, got, err, want)
		}
	}
	// The limit stops the scan.
	got, _ := scanVersionStrings(strings.NewReader(data), 11, 0)
	if len(got) != 0 {
		t.Errorf("limit 11: got %v, want none", got)
	}
	// Errors are returned with what was found so far.
	got, err := scanVersionStrings(iotest.TimeoutReader(bytes.NewReader([]byte("3.10.1\x00"))), 100, 3)
	if err == nil || len(got) != 0 {
		t.Errorf("timeout reader: got %v, %v", got, err)
	}
}

func equalCands(a, b []versionCandidate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPickVersion(t *testing.T) {
	cands := []versionCandidate{{"3.2.0", true}, {"3.9.18", false}, {"3.11.2", true}, {"3.11.0", false}}
	tests := []struct {
		hint    string
		require bool
		want    string
		ok      bool
	}{
		{"3.11", false, "3.11.2", true},
		{"3.9", false, "3.9.18", true},
		{"", false, "3.2.0", true},
		{"3.7", false, "3.2.0", true},
		{"3.7", true, "", false},
		{"3.9", true, "3.9.18", true},
		{"", true, "", false},
	}
	for _, tt := range tests {
		got, ok := pickVersion(cands, tt.hint, tt.require)
		if got != tt.want || ok != tt.ok {
			t.Errorf("pickVersion(hint %q, require %v) = %q, %v; want %q, %v", tt.hint, tt.require, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := pickVersion([]versionCandidate{{"3.9.18", false}}, "", false); got != "3.9.18" || !ok {
		t.Errorf("tail only: got %q, %v", got, ok)
	}
}
