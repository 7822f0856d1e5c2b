//go:build linux

package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/idcache"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/detect/testenv"
)

// cachedID is cachedBuildID on the named file.
func cachedID(t *testing.T, c *idcache.Cache, name string) string {
	t.Helper()
	f, err := saferead.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, notELF, err := cachedBuildID(c, f, f)
	if err != nil || notELF {
		t.Fatalf("cachedBuildID(%s) = %q, notELF %v, %v", name, id, notELF, err)
	}
	return id
}

// TestCachedBuildID: a build-id comes from the cache while the file's
// key holds, and is read again once the file's size, mtime, ctime or
// inode changed, even when its mtime was set back.
func TestCachedBuildID(t *testing.T) {
	src := ""
	for _, p := range []string{testenv.DebianPath, "/usr/bin/sleep", "/bin/sh"} {
		if _, err := elfinfo.ReadBuildIDFile(p); err == nil {
			src = p
			break
		}
	}
	if src == "" {
		testenv.Missing(t, "no ELF file with a build-id among %s, /usr/bin/sleep, /bin/sh", testenv.DebianPath)
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "prog")
	testenv.CopyFile(t, src, name, 0o755)
	real, err := elfinfo.ReadBuildIDFile(name)
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	c := idcache.Open(cacheDir)
	if got := cachedID(t, c, name); got != real {
		t.Fatalf("first read: %q, want %q", got, real)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	// Poison the entry: a hit now answers the poisoned id.
	const poison = "00112233445566778899aabbccddeeff00112233"
	poisonAll := func() *idcache.Cache {
		c := idcache.Open(cacheDir)
		entries := c.Entries()
		if len(entries) != 1 {
			t.Fatalf("cache holds %d entries, want 1", len(entries))
		}
		for _, e := range entries {
			c.Store(e.Key, idcache.Value{ID: poison})
		}
		return c
	}
	if got := cachedID(t, poisonAll(), name); got != poison {
		t.Fatalf("unchanged file: %q, want the cached %q", got, poison)
	}

	st, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	mtime := st.ModTime()
	for _, change := range []struct {
		what string
		do   func()
	}{
		{"mtime", func() {
			if err := os.Chtimes(name, time.Time{}, mtime.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}},
		{"ctime alone (mtime set back)", func() {
			if err := os.Chmod(name, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(name, time.Time{}, mtime); err != nil {
				t.Fatal(err)
			}
		}},
		{"size", func() {
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte{0})
			f.Close()
			if err := os.Chtimes(name, time.Time{}, mtime); err != nil {
				t.Fatal(err)
			}
		}},
		{"inode", func() {
			tmp := name + ".new"
			testenv.CopyFile(t, name, tmp, 0o755)
			if err := os.Rename(tmp, name); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(name, time.Time{}, mtime); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		c := idcache.Open(cacheDir)
		cachedID(t, c, name) // the key of the file as it is now
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
		c = idcache.Open(cacheDir)
		// Keep one entry: the file's current key.
		keep := c.Entries()[0]
		fresh := idcache.Open(t.TempDir())
		fresh.Store(keep.Key, idcache.Value{ID: poison})
		if got := cachedID(t, fresh, name); got != poison {
			t.Fatalf("before the %s change: %q, want the cached %q", change.what, got, poison)
		}
		change.do()
		if got := cachedID(t, fresh, name); got != real {
			t.Errorf("after the %s changed: %q (the cache's), want %q read from the file", change.what, got, real)
		}
	}
}

// TestBuildIDReader: venv's build-id reader through the cache answers as
// elfinfo.ReadBuildIDFile does, sentinel errors included, and takes a
// known file's build-id from the cache.
func TestBuildIDReader(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text")
	if err := os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := idcache.Open("")
	read := buildIDReader(c)
	for _, name := range []string{text, filepath.Join(dir, "missing"), "/bin/sh"} {
		want, wantErr := elfinfo.ReadBuildIDFile(name)
		for range 2 { // read, then from the cache
			got, err := read(name)
			if got != want || !errors.Is(err, wantErr) && fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("%s: %q, %v; ReadBuildIDFile: %q, %v", name, got, err, want, wantErr)
			}
		}
	}
	if n := len(c.Entries()); n != 2 {
		t.Errorf("the cache holds %d entries, want 2 (the text file, /bin/sh)", n)
	}
	if buildIDReader(nil) != nil {
		t.Error("no cache should mean venv's own reader")
	}
}
