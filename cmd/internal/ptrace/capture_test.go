package ptrace

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/unwind"
)

func TestStackRange(t *testing.T) {
	maps := []proc.Mapping{{Start: 0x1000, End: 0x9000}, {Start: 0x10000, End: 0x20000}}
	cases := []struct {
		arch      unwind.Arch
		sp        uint64
		limit     int
		lo, hi    uint64
		truncated bool
	}{
		{unwind.AMD64, 0x8000, 0, 0x8000 - 128, 0x9000, false},       // red zone, to the mapping's end
		{unwind.AMD64, 0x1010, 0, 0x1000, 0x9000, false},             // red zone clamped to the mapping
		{unwind.ARM64, 0x8000, 0, 0x8000, 0x9000, false},             // no red zone
		{unwind.AMD64, 0x10000, 0x100, 0x10000, 0x10100, true},       // cut at the limit
		{unwind.AMD64, 0x10000, 0, 0x10000, 0x10000 + 64<<10, false}, // the whole 64 KiB mapping, under the default limit
	}
	for _, c := range cases {
		lo, hi, tr, err := stackRange(maps, c.arch, c.sp, c.limit)
		if err != nil || lo != c.lo || hi != c.hi || tr != c.truncated {
			t.Errorf("sp %#x limit %d: [%#x, %#x) truncated %v %v, want [%#x, %#x) %v", c.sp, c.limit, lo, hi, tr, err, c.lo, c.hi, c.truncated)
		}
	}
	if _, _, _, err := stackRange(maps, unwind.AMD64, 0x9000, 0); !errors.Is(err, ErrNoStackMapping) {
		t.Errorf("sp outside: %v", err)
	}
}

// shortReader serves n bytes of memory filled with 0xaa from base.
type shortReader struct{ base, n int64 }

func (r shortReader) ReadAt(p []byte, off int64) (int, error) {
	if off < r.base || off >= r.base+r.n {
		return 0, errors.New("fault")
	}
	k := min(int64(len(p)), r.base+r.n-off)
	copy(p, bytes.Repeat([]byte{0xaa}, int(k)))
	return int(k), errors.New("fault")
}

func TestReadStackFault(t *testing.T) {
	maps := []proc.Mapping{{Start: 0x1000, End: 0x9000}}
	st, err := ReadStack(shortReader{base: 0x7f80, n: 0x100}, maps, unwind.AMD64, 0x8000, 0)
	if err != nil || st.Addr != 0x7f80 || len(st.Data) != 0x100 || !st.Truncated {
		t.Errorf("partial read: %#x %d %v %v", st.Addr, len(st.Data), st.Truncated, err)
	}
	if _, err := ReadStack(shortReader{}, maps, unwind.AMD64, 0x8000, 0); err == nil {
		t.Error("unreadable stack: no error")
	}
}
