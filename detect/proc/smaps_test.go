package proc

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestParseSmaps(t *testing.T) {
	const text = `00400000-0041f000 r--p 00000000 fe:00 10166287                           /usr/bin/python3.11
Size:                124 kB
Rss:                 124 kB
Anonymous:             0 kB
Swap:                  0 kB
VmFlags: rd mr mw me 
00940000-00a7f000 rw-p 00540000 fe:00 10166287                           /usr/bin/python3.11
Rss:                1272 kB
Anonymous:           312 kB
Swap:                  8 kB
THPeligible:           0
VmFlags: rd wr mr mw me ac dd
7ffd0000-7ffd1000 r--p 00000000 00:00 0                                  [vvar]
VmFlags: rd mr pf io de dd
`
	areas, err := ParseSmaps(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(areas) != 3 {
		t.Fatalf("%d areas, want 3", len(areas))
	}
	a := areas[1]
	if a.Start != 0x940000 || a.Path != "/usr/bin/python3.11" || a.Rss != 1272<<10 || a.Anonymous != 312<<10 || a.Swap != 8<<10 || !a.Flag("dd") || a.Flag("io") {
		t.Errorf("area 1 = %+v", a)
	}
	if !areas[2].Flag("io") || areas[2].Path != "[vvar]" || areas[0].Anonymous != 0 {
		t.Errorf("areas = %+v", areas)
	}
	for _, bad := range []string{
		"Rss: 4 kB\n", // a field first
		"00400000-0041f000 r--p 00000000 fe:00 1 /x\nAnonymous: lots kB\n", // a bad number
		"00400000-0041f000 r--p 00000000 fe:00 1 /x\nRss: 4\n",             // no unit
		"not a mapping\n",
	} {
		if _, err := ParseSmaps(strings.NewReader(bad)); !errors.Is(err, ErrMalformedMaps) {
			t.Errorf("ParseSmaps(%q) = %v, want a MapsError", bad, err)
		}
	}
}

// FuzzParseSmaps checks that ParseSmaps does not panic, fails only with
// a *MapsError, and reads the same mappings as ParseMaps does from the
// maps lines alone. The seed is the start of a python3.11 process's
// smaps.
func FuzzParseSmaps(f *testing.F) {
	b, err := os.ReadFile("testdata/python3.11.smaps")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("00400000-0041f000 r--p 00000000 fe:00 1 /x\nAnonymous: 18014398509481983 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		areas, err := ParseSmaps(bytes.NewReader(b))
		if err != nil {
			var me *MapsError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a *MapsError", err)
			}
			return
		}
		var maps bytes.Buffer
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if _, _, field := smapsField(bytes.TrimSuffix(l, []byte("\n"))); !field && len(l) > 0 {
				maps.Write(l)
			}
		}
		want, err := ParseMaps(&maps)
		if err != nil {
			t.Fatalf("ParseMaps of the maps lines: %v", err)
		}
		if len(want) != len(areas) {
			t.Fatalf("%d areas, ParseMaps reads %d", len(areas), len(want))
		}
		for i := range want {
			if areas[i].Mapping != want[i] {
				t.Fatalf("area %d: %+v, ParseMaps: %+v", i, areas[i].Mapping, want[i])
			}
			if areas[i].Anonymous > 1<<63 || areas[i].Rss > 1<<63 {
				t.Fatalf("area %d: sizes overflow: %+v", i, areas[i])
			}
		}
	})
}
