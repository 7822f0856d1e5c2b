package srcscan

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// FuzzScan feeds whole files to Scan. The seed corpus in
// testdata/fuzz/FuzzScan holds tiny gcc-built executables (DWARF 2, 4
// and 5, -gz compressed, -fdebug-prefix-map), made from
//
//	inc/u.h: static inline int twice(int x) { return x * 2; }
//	s.c:     #include "u.h"
//	         int _start(void) { return twice(3); }
//
// with gcc -nostdlib -static -O1 -Iinc -Wl,--build-id=none
// -Wl,-z,noseparate-code -Wl,-z,norelro -fno-asynchronous-unwind-tables
// plus -g, -gdwarf-4, -gdwarf-2, -g -gz, -gdwarf-4 -gz or
// -g -fdebug-prefix-map=DIR=/nonexistent.
func FuzzScan(f *testing.F) {
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Scan(bytes.NewReader(b))
		if err != nil {
			var fe *elfinfo.FormatError
			if !errors.As(err, &fe) && !errors.Is(err, elfinfo.ErrNotELF) {
				t.Fatalf("error is neither a *elfinfo.FormatError nor ErrNotELF: %v", err)
			}
			if fe != nil && (!errors.Is(err, elfinfo.ErrCorrupt) || fe.Section == "" && fe.Off >= 0 || strings.ContainsAny(err.Error(), "\n\r")) {
				t.Fatalf("FormatError %q: want ErrCorrupt, an offset only with a section, one line", err)
			}
			return
		}
		if !sort.StringsAreSorted(res.Files) {
			t.Fatal("Files not sorted")
		}
		for i := 1; i < len(res.Files); i++ {
			if res.Files[i] == res.Files[i-1] {
				t.Fatalf("duplicate file %q", res.Files[i])
			}
		}
	})
}
