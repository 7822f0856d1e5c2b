package target

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestSecurityRootLinkOut: in a process's root, /usr/bin/python3 and
// /usr/lib/libpython3.so are absolute links to files outside that root
// (standing for the host's). Neither host file is read: the links are
// followed inside the root, where their targets do not exist.
func TestSecurityRootLinkOut(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside := filepath.Join(dir, "host")
	for _, d := range []string{filepath.Join(root, "usr", "bin"), filepath.Join(root, "usr", "lib"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"python3", "libpython3.so"} {
		os.WriteFile(filepath.Join(outside, name), []byte("host file, not ELF"), 0o755)
	}
	os.Symlink(filepath.Join(outside, "python3"), filepath.Join(root, "usr", "bin", "python3"))
	os.Symlink(filepath.Join(outside, "libpython3.so"), filepath.Join(root, "usr", "lib", "libpython3.so"))
	// The control: the lexical join reaches the host files.
	if _, err := os.Stat(filepath.Join(root, "usr", "bin", "python3")); err != nil {
		t.Fatalf("control: %v; the test proves nothing", err)
	}
	if err := fillPython(&Result{}, "/usr/bin/python3", root, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("fillPython: %v, want not-exist (the host file was read)", err)
	}
	if err := fillLibpython(&Result{}, "/usr/lib/libpython3.so", root, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("fillLibpython: %v, want not-exist (the host file was read)", err)
	}
	if h, err := inRoot(root, "/usr/bin/python3"); err != nil || h != filepath.Join(root, outside, "python3") {
		t.Errorf("inRoot = %q, %v", h, err)
	}
}
