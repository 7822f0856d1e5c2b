package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/bundle/archive"
)

func writeBundle(t *testing.T, files map[string]string) string {
	t.Helper()
	m := &archive.Manifest{CreatedBy: "test"}
	var data []string
	for _, n := range []string{"core", "root/usr/lib/x/libfoo.so.1.2", "root/srv/app.py"} {
		d, ok := files[n]
		if !ok {
			continue
		}
		kind := archive.KindPythonSource
		switch {
		case n == "core":
			kind = archive.KindCore
		case strings.Contains(n, ".so"):
			kind = archive.KindModule
		}
		h := sha256.Sum256([]byte(d))
		m.Entries = append(m.Entries, archive.Entry{Name: n, Kind: kind, Size: int64(len(d)), SHA256: hex.EncodeToString(h[:]), Origin: "test"})
		data = append(data, d)
	}
	p := filepath.Join(t.TempDir(), "b.pyattach")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := archive.NewWriter(f, m, archive.DefaultMaxSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range data {
		if err := w.Add(strings.NewReader(d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpenOnceAndReuse: a bundle is unpacked once, under its sha256,
// with no temporary directory left; opened again it is reused.
func TestOpenOnceAndReuse(t *testing.T) {
	b := writeBundle(t, map[string]string{"core": "CORE", "root/srv/app.py": "print(1)\n"})
	cache := t.TempDir()
	o1, err := Open(b, cache, archive.DefaultMaxSize)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(b)
	sum := sha256.Sum256(raw)
	if filepath.Base(o1.Dir) != hex.EncodeToString(sum[:]) {
		t.Errorf("unpacked into %s, not the bundle's sha256", o1.Dir)
	}
	if got, err := os.ReadFile(filepath.Join(o1.Root, "srv/app.py")); err != nil || string(got) != "print(1)\n" {
		t.Errorf("root/srv/app.py: %q %v", got, err)
	}
	// A mark in the unpacked tree survives a second Open: it was reused.
	os.WriteFile(filepath.Join(o1.Dir, "mark"), nil, 0o644)
	o2, err := Open(b, cache, archive.DefaultMaxSize)
	if err != nil || o2.Dir != o1.Dir {
		t.Fatalf("second open: %v %v", o2, err)
	}
	if _, err := os.Stat(filepath.Join(o2.Dir, "mark")); err != nil {
		t.Error("the second open unpacked again")
	}
	ents, _ := os.ReadDir(cache)
	if len(ents) != 1 {
		t.Errorf("the cache holds %d entries, want the one bundle: %v", len(ents), ents)
	}
}

// TestOpenRefusedWritesNothing: a bundle cut short is refused and the
// cache stays empty.
func TestOpenRefusedWritesNothing(t *testing.T) {
	b := writeBundle(t, map[string]string{"core": strings.Repeat("C", 1<<16), "root/srv/app.py": "print(1)\n"})
	raw, _ := os.ReadFile(b)
	os.WriteFile(b, raw[:len(raw)/2], 0o644)
	cache := t.TempDir()
	if _, err := Open(b, cache, archive.DefaultMaxSize); err == nil {
		t.Fatal("a cut bundle was opened")
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("the cache holds %v", ents)
	}
}

// TestNativeSourceDirs: the directories a native source's path steps
// back out of are made under src/, never above it, and each top
// directory of the paths maps onto src/; an entry whose name is not its
// path's gives nothing.
func TestNativeSourceDirs(t *testing.T) {
	dir := t.TempDir()
	src := func(p string) archive.Entry {
		return archive.Entry{Name: NativeSourceName(p), Kind: archive.KindNativeSource, Path: p}
	}
	m := &archive.Manifest{Entries: []archive.Entry{
		src("/build/py-3.11.99/build-static/../Modules/timemodule.c"),
		src("/../../../opt/x/../y.c"),
		{Name: "src/usr/a.c", Kind: archive.KindNativeSource, Path: "/etc/../../z/../a.c"},
		{Name: "src/usr/b.c", Kind: archive.KindNativeSource, Path: "relative/../b.c"},
	}}
	sourceDirs(dir, m)
	if st, err := os.Stat(filepath.Join(dir, "src/build/py-3.11.99/build-static")); err != nil || !st.IsDir() {
		t.Errorf("build-static was not made: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "src/opt/x")); err != nil || !st.IsDir() {
		t.Errorf("opt/x was not made: %v", err)
	}
	for _, p := range []string{"src/etc", "src/z", "src/relative", "opt", "build"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was made", p)
		}
	}
	o := opened("b", dir, m)
	got := o.SourceRules()
	want := [][2]string{{"/build", filepath.Join(dir, "src/build")}, {"/opt", filepath.Join(dir, "src/opt")}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("SourceRules = %q, want %q", got, want)
	}
	for p, want := range map[string]string{"/a/b.c": "src/a/b.c", "/a/../../b.c": "src/b.c", "a/b.c": "", "/a/\n.c": ""} {
		if got := NativeSourceName(p); got != want {
			t.Errorf("NativeSourceName(%q) = %q, want %q", p, got, want)
		}
	}
}
