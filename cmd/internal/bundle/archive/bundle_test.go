package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func sum(b string) string {
	h := sha256.Sum256([]byte(b))
	return hex.EncodeToString(h[:])
}

// good is a valid bundle's entries and contents.
func good() (*Manifest, []string) {
	data := []string{"\x7fELF core", "print('hi')\n", "\x7fELF debug"}
	m := &Manifest{
		CreatedBy: "test",
		Target:    Target{PID: 42, Exe: "/usr/bin/python3.11"},
		Entries: []Entry{
			{Name: "core", Kind: KindCore, Size: int64(len(data[0])), SHA256: sum(data[0]), Origin: "/tmp/core"},
			{Name: "root/srv/app.py", Kind: KindPythonSource, Path: "/srv/app.py", Size: int64(len(data[1])), SHA256: sum(data[1]), Origin: "/srv/app.py"},
			{Name: "debug/.build-id/ab/cdef.debug", Kind: KindDebug, Path: "/usr/bin/python3.11", BuildID: "abcdef", Size: int64(len(data[2])), SHA256: sum(data[2]), Origin: "/usr/lib/debug/.build-id/ab/cdef.debug"},
		},
	}
	return m, data
}

func write(t testing.TB, m *Manifest, data []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m, DefaultMaxSize)
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
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	m, data := good()
	b := write(t, m, data)
	if !IsBundle(b) {
		t.Fatal("IsBundle false for a bundle")
	}
	got, err := ReadManifest(bytes.NewReader(b), DefaultMaxSize)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != 3 || got.Target.PID != 42 || got.Format != Format {
		t.Fatalf("manifest: %+v", got)
	}
	dir := filepath.Join(t.TempDir(), "x")
	if _, err := Extract(bytes.NewReader(b), dir, DefaultMaxSize); err != nil {
		t.Fatal(err)
	}
	for i, e := range m.Entries {
		c, err := os.ReadFile(filepath.Join(dir, e.Name))
		if err != nil || string(c) != data[i] {
			t.Errorf("%s: %q %v", e.Name, c, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil {
		t.Error(err)
	}
	// The stream is plain zstd after the skippable frame: zstd tools read it.
	zr, err := zstd.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	if h, err := tr.Next(); err != nil || h.Name != ManifestName {
		t.Fatalf("first entry %v %v", h, err)
	}
}

func TestWriterRefusesChangedFile(t *testing.T) {
	m, data := good()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m, DefaultMaxSize)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(strings.NewReader(data[0] + "x")); err != nil {
		t.Fatal(err) // longer: cut at the size, same bytes
	}
	if err := w.Add(strings.NewReader("print('HI')\n")); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("changed file: %v", err)
	}
}

func TestWriterCap(t *testing.T) {
	m, _ := good()
	_, err := NewWriter(&bytes.Buffer{}, m, 10)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("cap: %v", err)
	}
}

// raw is a tar entry of a hand-made bundle.
type raw struct {
	hdr  tar.Header
	data string
}

// rawBundle writes a bundle by hand: manifest m (JSON, as is) and the
// entries, with whatever headers they carry.
func rawBundle(t testing.TB, m any, entries []raw) []byte {
	t.Helper()
	var buf bytes.Buffer
	head := append(append([]byte(nil), skippable...), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(head[4:], uint32(len(tag)))
	buf.Write(append(head, tag...))
	zw, _ := zstd.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	mj, _ := json.Marshal(m)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Size: int64(len(mj)), Mode: 0o644})
	tw.Write(mj)
	for _, e := range entries {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		tw.Write([]byte(e.data))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func reg(name, data string) raw {
	return raw{tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o644}, data}
}

func entry(name, kind, data string) Entry {
	return Entry{Name: name, Kind: kind, Size: int64(len(data)), SHA256: sum(data), Origin: "x"}
}

// hostile are bundles that must be refused, each with a word of the
// one-line reason.
func hostile(t testing.TB) map[string]struct {
	b    []byte
	want string
} {
	core := entry("core", KindCore, "C")
	man := func(es ...Entry) *Manifest {
		return &Manifest{Format: Format, Entries: append([]Entry{core}, es...), Missing: []Missing{}}
	}
	src := "print(1)\n"
	out := map[string]struct {
		b    []byte
		want string
	}{}
	add := func(name string, b []byte, want string) {
		out[name] = struct {
			b    []byte
			want string
		}{b, want}
	}
	for _, n := range []string{"root/../../etc/passwd", "/etc/passwd", "root/a\nb.py", "root/a\x1bb.py", "root/./a.py", "other/x", "root//a.py"} {
		add("name "+n, rawBundle(t, man(entry(n, KindPythonSource, src)), []raw{reg("core", "C"), reg(n, src)}), "refused")
	}
	add("dotdot in tar only", rawBundle(t, man(entry("root/a.py", KindPythonSource, src)), []raw{reg("core", "C"), reg("root/../a.py", src)}), "climbs")
	add("absolute in tar only", rawBundle(t, man(entry("root/a.py", KindPythonSource, src)), []raw{reg("core", "C"), reg("/root/a.py", src)}), "absolute")
	sym := raw{tar.Header{Typeflag: tar.TypeSymlink, Name: "root/a.py", Linkname: "/etc/passwd", Mode: 0o777}, ""}
	add("symlink", rawBundle(t, man(entry("root/a.py", KindPythonSource, "")), []raw{reg("core", "C"), sym}), "symbolic link")
	hard := raw{tar.Header{Typeflag: tar.TypeLink, Name: "root/a.py", Linkname: "core"}, ""}
	add("hardlink", rawBundle(t, man(entry("root/a.py", KindPythonSource, "")), []raw{reg("core", "C"), hard}), "hard link")
	dev := raw{tar.Header{Typeflag: tar.TypeChar, Name: "root/dev/mem", Devmajor: 1, Devminor: 1}, ""}
	add("device", rawBundle(t, man(entry("root/dev/mem", KindPythonSource, "")), []raw{reg("core", "C"), dev}), "device")
	fifo := raw{tar.Header{Typeflag: tar.TypeFifo, Name: "root/f"}, ""}
	add("fifo", rawBundle(t, man(entry("root/f", KindPythonSource, "")), []raw{reg("core", "C"), fifo}), "FIFO")
	add("duplicate in manifest", rawBundle(t, man(entry("root/a.py", KindPythonSource, src), entry("root/a.py", KindPythonSource, src)), []raw{reg("core", "C"), reg("root/a.py", src), reg("root/a.py", src)}), "duplicate")
	add("duplicate in tar", rawBundle(t, man(entry("root/a.py", KindPythonSource, src)), []raw{reg("core", "C"), reg("root/a.py", src), reg("root/a.py", src)}), "not in the manifest")
	add("extra entry", rawBundle(t, man(), []raw{reg("core", "C"), reg("root/x", "x")}), "not in the manifest")
	add("missing entry", rawBundle(t, man(entry("root/a.py", KindPythonSource, src)), []raw{reg("core", "C")}), "missing")
	lie := entry("root/a.py", KindPythonSource, src)
	lie.Size = 3
	add("size vs manifest", rawBundle(t, man(lie), []raw{reg("core", "C"), reg("root/a.py", src)}), "manifest")
	add("content vs sha256", rawBundle(t, man(entry("root/a.py", KindPythonSource, src)), []raw{reg("core", "C"), reg("root/a.py", "print(2)\n")}), "sha256")
	add("file below file", rawBundle(t, man(entry("root/a", KindPythonSource, src), entry("root/a/b", KindPythonSource, src)), []raw{reg("core", "C"), reg("root/a", src), reg("root/a/b", src)}), "below")
	big := entry("root/big", KindPythonSource, "")
	big.Size = DefaultMaxSize
	add("over the cap", rawBundle(t, man(big), []raw{reg("core", "C")}), "cap")
	add("no core", rawBundle(t, &Manifest{Format: Format, Entries: []Entry{}}, nil), "core")
	add("manifest not first", func() []byte {
		b := rawBundle(t, man(), []raw{reg("core", "C")})
		_ = b
		var buf bytes.Buffer
		head := append(append([]byte(nil), skippable...), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(head[4:], uint32(len(tag)))
		buf.Write(append(head, tag...))
		zw, _ := zstd.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "core", Size: 1})
		tw.Write([]byte("C"))
		tw.Close()
		zw.Close()
		return buf.Bytes()
	}(), "first entry")
	return out
}

func TestHostile(t *testing.T) {
	for name, c := range hostile(t) {
		t.Run(name, func(t *testing.T) {
			_, err := Verify(bytes.NewReader(c.b), DefaultMaxSize)
			if !errors.Is(err, ErrHostile) {
				t.Fatalf("Verify: %v, want refused", err)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line with %q", err, c.want)
			}
			dir := filepath.Join(t.TempDir(), "out")
			if _, err := Extract(bytes.NewReader(c.b), dir, DefaultMaxSize); err == nil {
				t.Fatal("Extract accepted it")
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("Extract left %s: %v", dir, err)
			}
		})
	}
}

func TestNotBundle(t *testing.T) {
	for _, b := range []string{"", "\x7fELF\x02\x01\x01", "\x28\xb5\x2f\xfdhello", string(skippable) + "\x04\x00\x00\x00abcd"} {
		if _, err := Verify(strings.NewReader(b), DefaultMaxSize); !errors.Is(err, ErrNotBundle) {
			t.Errorf("%q: %v", b, err)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"core", "root/usr/bin/python3.13", "debug/.build-id/ab/cd.debug", "ext/gdb/python3.13-gdb.py", "walker/pyattach_gdb.py", "root/srv/ünïcode.py", "root/a b.py"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "core/x", "root", "root/", "/root/x", "root/../x", "root/x/..", "root/x\x00", "root/x\ty", "root/x\u0085", "root/\xff", "etc/passwd", "./core", "root/" + strings.Repeat("a", 256), "debug/x", "debug/.build-id/ab/cd", "debug/.build-id/AB/cd.debug", "debug/.build-id/ab/c/d.debug", "ext/gdb/a/b", "ext/x", "walker/a/b"} {
		if err := CheckName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzVerify(f *testing.F) {
	m, data := good()
	f.Add(write(f, m, data))
	for _, c := range hostile(f) {
		f.Add(c.b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Verify(bytes.NewReader(b), 1<<20)
		if err != nil {
			return
		}
		// What Verify accepts, Extract writes, and only under its dir.
		dir := filepath.Join(t.TempDir(), "x")
		m2, err := Extract(bytes.NewReader(b), dir, 1<<20)
		if err != nil {
			t.Fatalf("Verify accepted, Extract refused: %v", err)
		}
		if len(m2.Entries) != len(m.Entries) {
			t.Fatal("manifests differ")
		}
		for _, e := range m.Entries {
			st, err := os.Lstat(filepath.Join(dir, e.Name))
			if err != nil || !st.Mode().IsRegular() || st.Size() != e.Size {
				t.Fatalf("%s: %v %v", e.Name, st, err)
			}
		}
	})
}
