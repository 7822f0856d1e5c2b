package saferead

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	linkToFile := filepath.Join(dir, "link-to-file")
	if err := os.Symlink("file", linkToFile); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, linkToFile} {
		f, st, err := OpenRegular(p)
		if err != nil {
			t.Fatalf("OpenRegular(%s): %v", p, err)
		}
		if st.Size() != 4 || !st.Mode().IsRegular() {
			t.Errorf("%s: size %d, mode %v; want 4, a regular file", p, st.Size(), st.Mode())
		}
		// Handed back in blocking mode.
		fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		if err != nil || fl&unix.O_NONBLOCK != 0 {
			t.Errorf("%s: flags %#x, %v; want O_NONBLOCK off", p, fl, err)
		}
		f.Close()
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	linkToFIFO := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, linkToFIFO); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct {
		path, kind string
	}{
		{dir, "a directory"},
		{fifo, "a FIFO"}, // without a writer: must not block
		{linkToFIFO, "a FIFO"},
		{"/dev/zero", "a character device"},
		{sock, "a socket"},
	} {
		f, st, err := OpenRegular(c.path)
		var nr *NotRegularError
		if !errors.Is(err, ErrNotRegular) || !errors.As(err, &nr) || f != nil || st == nil || st.Mode().IsRegular() {
			t.Errorf("OpenRegular(%s) = %v, %v, %v; want nil, its FileInfo, a *NotRegularError", c.path, f, st, err)
			continue
		}
		if want := c.path + " is " + c.kind + ", not a regular file"; err.Error() != want || Kind(st.Mode()) != c.kind {
			t.Errorf("OpenRegular(%s): %q (kind %q), want %q", c.path, err, Kind(st.Mode()), want)
		}
	}
	if _, _, err := OpenRegular(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	if _, err := Open(fifo); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open(fifo): %v, want ErrNotRegular", err)
	}
}

func TestKind(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		0o644:                    "a regular file",
		fs.ModeDir | 0o755:       "a directory",
		fs.ModeSymlink | 0o777:   "a symbolic link",
		fs.ModeDevice:            "a block device",
		fs.ModeIrregular | 0o600: "mode ?rw-------",
	} {
		if got := Kind(m); got != want {
			t.Errorf("Kind(%v) = %q, want %q", m, got, want)
		}
	}
}
