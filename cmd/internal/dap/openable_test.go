package dap

import (
	"os"
	"path"
	"path/filepath"
	"testing"
)

// TestOpenable: a Python frame's file is given to the editor by path
// only when it is a regular file under the target's root, reached
// without a symbolic link; a co_filename that climbs out of the root
// ("/../") or through a link gets a sourceReference instead.
func TestOpenable(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(root, "app", "main.py"), filepath.Join(dir, "host.py")} {
		if err := os.WriteFile(f, []byte("x = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(dir, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		want bool
	}{
		{"/app/main.py", true},
		{"/app/../app/main.py", true},
		{"/../host.py", false},
		{"/app/../../host.py", false},
		{"/link/host.py", false},
		{"/app", false},
		{"/app/missing.py", false},
	} {
		if got := openable(root, path.Clean(root+c.file)); got != c.want {
			t.Errorf("openable(%q under the root) = %v, want %v", c.file, got, c.want)
		}
	}
	if !openable("", filepath.Join(dir, "host.py")) {
		t.Errorf("a host file is not openable without a root")
	}
}
