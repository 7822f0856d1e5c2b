package rootfs

import (
	"errors"
	"io/fs"
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

// TestSecurityAbsoluteLinkOut: a root whose /usr/lib/debug is an
// absolute link to a directory outside it. The lexical join follows the
// link out to the host's file; HostPath, Open and Stat stay inside.
func TestSecurityAbsoluteLinkOut(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir() // stands for the host's /etc
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "usr/lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "usr/lib/debug")); err != nil {
		t.Fatal(err)
	}
	name := "/usr/lib/debug/secret"
	// The control: the lexical join reads the host file.
	if b, err := os.ReadFile(Join(root, name)); err != nil || string(b) != "host file" {
		t.Fatalf("control: the lexical join did not follow the link out (%q, %v); the test proves nothing", b, err)
	}
	p, err := HostPath(root, name)
	if err != nil || p != filepath.Join(root, outside, "secret") {
		t.Errorf("HostPath = %q, %v; want the link target inside the root", p, err)
	}
	if f, err := Open(root, name); err == nil {
		f.Close()
		t.Errorf("Open read the host's file through an absolute link")
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open: %v, want not-exist", err)
	}
	if _, err := Stat(root, name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat: %v, want not-exist", err)
	}
	// The same file placed at the link's target inside the root is read.
	in := filepath.Join(root, outside)
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "secret"), []byte("root file"), 0o644)
	f, err := Open(root, name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 64)
	n, _ := f.Read(b)
	if string(b[:n]) != "root file" {
		t.Errorf("Open read %q, want the root's file", b[:n])
	}
	if p, _ := HostPath("", "/a/../b"); p != "/b" {
		t.Errorf("HostPath on the host = %q", p)
	}
}

func TestStrip(t *testing.T) {
	for _, c := range []struct{ root, p, want string }{
		{"", "/usr/bin/python3", "/usr/bin/python3"},
		{"/r", "/r/usr/bin/python3", "/usr/bin/python3"},
		{"/r", "/r", "/"},
		{"/r", "/r/.venv/bin/python", "/.venv/bin/python"},
		{"/r", "/r/..data/x", "/..data/x"},
		{"/r", "/rr/x", "/rr/x"},
		{"/r", "/other/x", "/other/x"},
	} {
		if got := Strip(c.root, c.p); got != c.want {
			t.Errorf("Strip(%q, %q) = %q, want %q", c.root, c.p, got, c.want)
		}
	}
}

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/r", "/r", true}, {"/r/x", "/r", true}, {"/rx", "/r", false}, {"/x", "/r", false},
		{"/r/x", "/r/", true}, {"/anything", "/", true},
	} {
		if got := Under(c.p, c.dir); got != c.want {
			t.Errorf("Under(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}
