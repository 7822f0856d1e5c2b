package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, st, err := OpenRegular(file)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st.Size() != 4 {
		t.Errorf("size %d, want 4", st.Size())
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, fifo} {
		f, st, err := OpenRegular(p) // a FIFO without a writer must not block
		if !errors.Is(err, ErrNotRegular) || f != nil || st == nil || st.Mode().IsRegular() {
			t.Errorf("OpenRegular(%s) = %v, %v, %v; want nil, its FileInfo, ErrNotRegular", p, f, st, err)
		}
	}
	if _, _, err := OpenRegular(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}
