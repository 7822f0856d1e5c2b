package main

import (
	"fmt"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// TestReadelfFor: the hint for a corrupt file names the readelf command
// that shows the part the parser rejected.
func TestReadelfFor(t *testing.T) {
	for _, tc := range []struct {
		section, want string
	}{
		{"PT_NOTE", "readelf -n FILE"},
		{".note.gnu.build-id", "readelf -n FILE"},
		{"NT_FILE", "readelf -n FILE"},
		{".debug_line", "readelf --debug-dump=info FILE"},
		{".gnu_debuglink", "readelf -S FILE"},
		{"program headers", "readelf -l FILE"},
		{"symbol table", "readelf -s FILE"},
		{"", "readelf -h FILE"},
	} {
		err := fmt.Errorf("python facts: %w", elfinfo.Corruptf(tc.section, 0, "bad"))
		if got := readelfFor(err); got != tc.want {
			t.Errorf("section %q: %q, want %q", tc.section, got, tc.want)
		}
		if h := hintFor(err); h != "the file is truncated or corrupt (still being copied?); check it with: "+tc.want {
			t.Errorf("section %q: hint %q", tc.section, h)
		}
	}
}
