package idcache

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/buildid"
)

const (
	idA = buildid.ID("c561f3aa7232f2bd6ac6d56bd475f1c154a00486")
	idB = buildid.ID("93ac61ec5a8eb1396f9fbd350e3169a558528a40")
)

func key(n uint64) Key {
	return Key{Dev: 65024, Ino: n, Size: 6809944, Mtime: 1791376507000000000, Ctime: 1795866707622447927}
}

func TestEncodeParse(t *testing.T) {
	in := []Entry{
		{Key: key(1), Value: Value{ID: idA}},
		{Key: key(2), Value: Value{}},
		{Key: key(3), Value: Value{NotELF: true}},
		// Times before 1970 and the largest numbers survive the trip.
		{Key: Key{Dev: 1<<64 - 1, Ino: 1<<64 - 1, Size: 1 << 62, Mtime: -5, Ctime: -1 << 63}, Value: Value{ID: "ab"}},
	}
	b := Encode(in)
	if !bytes.HasPrefix(b, []byte(header)) {
		t.Fatalf("Encode: no header:\n%s", b)
	}
	got := Parse(b)
	if fmt.Sprint(got) != fmt.Sprint(in) {
		t.Errorf("Parse(Encode(x)):\n%v\nwant\n%v", got, in)
	}
}

// TestParseCorrupt: what a corrupt or hostile file holds is skipped line
// by line; only well-formed entries with valid build-ids are read.
func TestParseCorrupt(t *testing.T) {
	good := "65024 7 100 1 2 " + string(idA) + "\n"
	for _, c := range []struct {
		name, text string
		want       int
	}{
		{"no header", good, 0},
		{"other version", "pyattach build-ids 2\n" + good, 0},
		{"good", header + good, 1},
		{"cut short", header + good + "65024 8 100 1 2 " + string(idB), 1},
		{"uppercase id", header + strings.ToUpper(good), 0},
		{"odd digits", header + "65024 7 100 1 2 abc\n", 0},
		{"id too long", header + "65024 7 100 1 2 " + strings.Repeat("ab", 65) + "\n", 0},
		{"path in id", header + "65024 7 100 1 2 ../../etc\n", 0},
		{"negative", header + "-1 7 100 1 2 -\n", 0},
		{"too large", header + "65024 7 18446744073709551616 1 2 -\n", 0},
		{"size out of range", header + "65024 7 9223372036854775807 1 2 -\n", 0},
		{"too few fields", header + "65024 7 100 1 -\n", 0},
		{"too many fields", header + "65024 7 100 1 2 3 -\n", 0},
		{"double space", header + "65024  7 100 1 2 -\n", 0},
		{"tab", header + "65024\t7 100 1 2 -\n", 0},
		{"NUL", header + "65024 7 100 1 2 -\x00\n", 0},
		{"empty lines", header + "\n\n" + good + "\n", 1},
		{"binary", header + "\xff\xfe\x00\x01\n" + good, 1},
	} {
		if got := Parse([]byte(c.text)); len(got) != c.want {
			t.Errorf("%s: %d entries %v, want %d", c.name, len(got), got, c.want)
		}
	}
	var b strings.Builder
	b.WriteString(header)
	for i := range MaxEntries + 10 {
		fmt.Fprintf(&b, "1 %d 1 1 1 -\n", i)
	}
	if n := len(Parse([]byte(b.String()))); n != MaxEntries {
		t.Errorf("a file of %d entries gave %d, want MaxEntries (%d)", MaxEntries+10, n, MaxEntries)
	}
}

// TestSaveOpen: what a run stores, the next one finds; a run that
// learnt nothing writes nothing.
func TestSaveOpen(t *testing.T) {
	dir := t.TempDir()
	c := Open(dir)
	if _, ok := c.Lookup(key(1)); ok {
		t.Fatal("a new cache has an entry")
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
		t.Fatal("Save wrote a cache with nothing in it")
	}
	c.Store(key(1), Value{ID: idA})
	c.Store(key(2), Value{NotELF: true})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", st.Mode().Perm())
	}
	c2 := Open(dir)
	if v, ok := c2.Lookup(key(1)); !ok || v.ID != idA {
		t.Errorf("Lookup(key 1) after Open = %v, %v", v, ok)
	}
	if v, ok := c2.Lookup(key(2)); !ok || !v.NotELF {
		t.Errorf("Lookup(key 2) after Open = %v, %v", v, ok)
	}
	// Any part of the key changed: not found.
	for _, k := range []Key{
		{Dev: 65025, Ino: 1, Size: 6809944, Mtime: 1791376507000000000, Ctime: 1795866707622447927},
		{Dev: 65024, Ino: 9, Size: 6809944, Mtime: 1791376507000000000, Ctime: 1795866707622447927},
		{Dev: 65024, Ino: 1, Size: 6809945, Mtime: 1791376507000000000, Ctime: 1795866707622447927},
		{Dev: 65024, Ino: 1, Size: 6809944, Mtime: 1791376507000000001, Ctime: 1795866707622447927},
		{Dev: 65024, Ino: 1, Size: 6809944, Mtime: 1791376507000000000, Ctime: 1795866707622447928},
	} {
		if v, ok := c2.Lookup(k); ok {
			t.Errorf("Lookup(%+v) = %v, found under a changed key", k, v)
		}
	}
	before, _ := os.ReadFile(filepath.Join(dir, FileName))
	c2.Store(key(1), Value{ID: idA}) // the same again: nothing new
	if err := c2.Save(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, FileName)); !bytes.Equal(before, after) {
		t.Error("a run that learnt nothing rewrote the cache")
	}
}

// TestBounded: the cache keeps MaxEntries entries, the ones used last.
func TestBounded(t *testing.T) {
	dir := t.TempDir()
	c := Open(dir)
	for i := range MaxEntries {
		c.Store(key(uint64(i)), Value{})
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c = Open(dir)
	c.Lookup(key(7))
	c.Store(key(MaxEntries+1), Value{ID: idB})
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	got := Open(dir).Entries()
	if len(got) != MaxEntries {
		t.Fatalf("%d entries saved, want %d", len(got), MaxEntries)
	}
	seen := map[uint64]bool{}
	for _, e := range got {
		seen[e.Ino] = true
	}
	if !seen[7] || !seen[MaxEntries+1] {
		t.Error("the entries used in the last run were dropped")
	}
	// The file lists the entries used last first: its tail goes.
	if seen[MaxEntries-1] || !seen[0] {
		t.Error("the file's last entry was kept over the last run's")
	}
}

// TestUntrusted: a cache file another user could have written, or that
// is not a small regular file, is not read.
func TestUntrusted(t *testing.T) {
	valid := Encode([]Entry{{Key: key(1), Value: Value{ID: idA}}})
	setups := map[string]func(t *testing.T, path string){
		"group-writable": func(t *testing.T, path string) {
			write(t, path, valid, 0o600)
			if err := os.Chmod(path, 0o620); err != nil {
				t.Fatal(err)
			}
		},
		"world-writable": func(t *testing.T, path string) {
			write(t, path, valid, 0o600)
			if err := os.Chmod(path, 0o606); err != nil {
				t.Fatal(err)
			}
		},
		"too large": func(t *testing.T, path string) {
			write(t, path, append(valid, bytes.Repeat([]byte("\n"), MaxFileSize)...), 0o600)
		},
		"a directory": func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		},
		"a FIFO": func(t *testing.T, path string) {
			mkfifo(t, path)
		},
	}
	if os.Geteuid() == 0 {
		// Root must not use a cache another user owns, even its own link
		// to one.
		setups["owned by another user"] = func(t *testing.T, path string) {
			write(t, path, valid, 0o600)
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
		setups["a link to another user's file"] = func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "other")
			write(t, other, valid, 0o600)
			if err := os.Chown(other, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, setup := range setups {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			setup(t, filepath.Join(dir, FileName))
			if v, ok := Open(dir).Lookup(key(1)); ok {
				t.Errorf("an untrusted cache was read: %v", v)
			}
		})
	}
	t.Run("trusted", func(t *testing.T) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, FileName), valid, 0o600)
		if _, ok := Open(dir).Lookup(key(1)); !ok {
			t.Error("the user's own cache was not read")
		}
	})
}

func write(t *testing.T, path string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
}

func TestNilCache(t *testing.T) {
	var c *Cache
	c.Store(key(1), Value{ID: idA})
	if _, ok := c.Lookup(key(1)); ok {
		t.Error("a nil cache remembered something")
	}
	if err := c.Save(); err != nil || c.Entries() != nil {
		t.Errorf("nil cache: Save %v, Entries %v", err, c.Entries())
	}
	// A cache without a directory lives in memory only.
	m := Open("")
	m.Store(key(1), Value{ID: idA})
	if _, ok := m.Lookup(key(1)); !ok {
		t.Error("an in-memory cache forgot")
	}
	if err := m.Save(); err != nil {
		t.Error(err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Encode([]Entry{{Key: key(1), Value: Value{ID: idA}}, {Key: key(2)}, {Key: key(3), Value: Value{NotELF: true}}}))
	f.Add([]byte(header + "1 2 3 4 5 ab\n1 2 3 4 5 AB\n"))
	f.Add([]byte(header + "1 2 3 4 5 -\n1 2 3 4"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries := Parse(b)
		if len(entries) > MaxEntries {
			t.Fatalf("%d entries", len(entries))
		}
		for _, e := range entries {
			if e.ID != "" && !e.ID.Valid() {
				t.Fatalf("invalid build-id %q accepted", e.ID)
			}
			if e.ID != "" && e.NotELF {
				t.Fatalf("entry both with a build-id and not ELF: %+v", e)
			}
			if e.Size < 0 {
				t.Fatalf("negative size: %+v", e)
			}
		}
		// What was read is written back the same way.
		if again := Parse(Encode(entries)); fmt.Sprint(again) != fmt.Sprint(entries) {
			t.Fatalf("Parse(Encode(Parse(b))) = %v, want %v", again, entries)
		}
	})
}
