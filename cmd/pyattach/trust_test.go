package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/venv/environ"
)

// TestSecurityTrustStore: the store keeps any path byte for byte (a
// newline or a non-UTF-8 byte cannot forge or widen an entry), is the
// user's alone, and trusts nothing when others could write it.
func TestSecurityTrustStore(t *testing.T) {
	data := t.TempDir()
	os.Chmod(data, 0o700)
	dirs := environ.Env{"HOME=/nonexistent", "XDG_DATA_HOME=" + data}.Dirs()

	proj := t.TempDir()
	os.Chmod(proj, 0o700)
	var files []string
	for _, name := range []string{"plain", "new\nline", "bad\xffutf8", `quote" 0123`} {
		dir := filepath.Join(proj, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, ProjectConfigName)
		os.WriteFile(f, []byte("extensions = [\"x.py\"]\n"), 0o644)
		files = append(files, f)
	}
	s, err := loadTrustStore(dirs)
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("extensions = [\"x.py\"]\n")
	for _, f := range files {
		s.set(f, content)
	}
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(trustStorePath(dirs))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("store %v, %v; want mode 0600", st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Dir(trustStorePath(dirs))); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("store directory %v, %v; want mode 0700", st.Mode(), err)
	}
	raw, _ := os.ReadFile(trustStorePath(dirs))
	if n := bytes.Count(raw, []byte("\n")); n != len(files)+1 {
		t.Errorf("store has %d lines for %d files:\n%s", n, len(files), raw)
	}
	s2, err := loadTrustStore(dirs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if got := s2.state(f, content); got != trustYes {
			t.Errorf("%q: state %v after a round trip", f, got)
		}
		if got := s2.state(f, append(content, '#')); got != trustChanged {
			t.Errorf("%q changed: state %v", f, got)
		}
	}
	// "new" is not trusted because "new\nline" is.
	if got := s2.state(filepath.Join(proj, "new"), content); got != trustNo {
		t.Errorf("a prefix of a trusted path: state %v", got)
	}

	// The command in the notice is quoted for the shell.
	spaced := filepath.Join(proj, "a b's", ProjectConfigName)
	os.Mkdir(filepath.Dir(spaced), 0o755)
	os.WriteFile(spaced, content, 0o644)
	if why, want := projectTrust(spaced, content, os.Geteuid(), dirs), "not trusted; to trust it, run: pyattach trust '"+proj+"/a b'\\''s'"; why != want {
		t.Errorf("notice %q, want %q", why, want)
	}

	// A store that others may write trusts nothing.
	os.Chmod(trustStorePath(dirs), 0o666)
	if _, err := loadTrustStore(dirs); err == nil || !strings.Contains(err.Error(), "writable by its group and by others") {
		t.Errorf("a store writable by others: %v", err)
	}
	if why := projectTrust(files[0], content, os.Geteuid(), dirs); !strings.HasPrefix(why, "not trusted (trust store: ") {
		t.Errorf("projectTrust with a bad store: %q", why)
	}
}
