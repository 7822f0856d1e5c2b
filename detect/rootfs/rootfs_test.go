package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolveHost(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("usr/lib/x86_64-linux-gnu")
	mk("opt/py/lib")
	os.Symlink("usr/lib", filepath.Join(root, "lib"))                          // relative
	os.Symlink("/opt/py/lib", filepath.Join(root, "usr/lib/pylib"))            // absolute: inside the root
	os.Symlink("../../../../../../etc", filepath.Join(root, "usr/lib/escape")) // climbs: stops at the root
	os.Symlink("loop2", filepath.Join(root, "loop1"))
	os.Symlink("loop1", filepath.Join(root, "loop2"))
	for _, tc := range []struct{ in, want string }{
		{"/lib/x86_64-linux-gnu/libc.so.6", "usr/lib/x86_64-linux-gnu/libc.so.6"},
		{"/usr/lib/pylib/libpython3.12.so", "opt/py/lib/libpython3.12.so"},
		{"/usr/lib/escape/passwd", "etc/passwd"},
		{"/../../etc/passwd", "etc/passwd"},
		{"/", "."},
		{"/missing/dir/file", "missing/dir/file"},
	} {
		got, err := ResolveHost(root, tc.in)
		if err != nil || got != filepath.Join(root, tc.want) {
			t.Errorf("ResolveHost(%q) = %q, %v; want %q", tc.in, got, err, filepath.Join(root, tc.want))
		}
	}
	if _, err := ResolveHost(root, "/loop1/x"); !errors.Is(err, ErrLinkLoop) {
		t.Errorf("loop: %v", err)
	}
}
