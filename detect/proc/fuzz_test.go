package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// formatMaps writes maps the way the kernel does.
func formatMaps(maps []Mapping) string {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "%08x-%08x %s %08x %s %d ", m.Start, m.End, m.Perms, m.Offset, m.Dev, m.Inode)
		if m.Path != "" {
			b.WriteString(strings.Repeat(" ", 20))
			b.WriteString(strings.ReplaceAll(m.Path, "\n", `\012`))
			if m.Deleted {
				b.WriteString(deletedSuffix)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzParseMaps checks that ParseMaps does not panic, fails only with a
// *MapsError, and that what it accepts survives formatting and parsing
// again. The seed corpus in testdata/fuzz/FuzzParseMaps holds real maps
// of python3.11 processes.
func FuzzParseMaps(f *testing.F) {
	for _, name := range []string{"testdata/python3.11.maps", "testdata/python3.11-deleted.maps"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		maps, err := ParseMaps(bytes.NewReader(b))
		if err != nil {
			var me *MapsError
			if !errors.As(err, &me) || !errors.Is(err, ErrMalformedMaps) {
				t.Fatalf("error %v is not a *MapsError", err)
			}
			if me.Line < 1 || me.Line > bytes.Count(b, []byte("\n"))+1 {
				t.Fatalf("error line %d out of range", me.Line)
			}
			return
		}
		lines := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			lines++
		}
		if len(maps) != lines {
			t.Fatalf("%d mappings from %d lines", len(maps), lines)
		}
		for _, m := range maps {
			if m.End < m.Start || !validPerms(m.Perms) || !validDev(m.Dev) {
				t.Fatalf("bad mapping %+v", m)
			}
			if strings.HasPrefix(m.Path, " ") || strings.Contains(m.Path, `\012`) || m.Deleted && m.Path == "" {
				t.Fatalf("bad path in %+v", m)
			}
		}
		again, err := ParseMaps(strings.NewReader(formatMaps(maps)))
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		if len(again) != len(maps) {
			t.Fatalf("reparse: %d mappings, want %d", len(again), len(maps))
		}
		for i := range maps {
			if again[i] != maps[i] {
				t.Fatalf("reparse %d:\n got %+v\nwant %+v", i, again[i], maps[i])
			}
		}
		for _, mod := range Modules(maps) {
			if !strings.HasPrefix(mod.Path, "/") {
				t.Fatalf("module %+v", mod)
			}
		}
	})
}
