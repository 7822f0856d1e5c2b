package zcore

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

// Compress is data compressed in format, as the CLI tools write it.
func compress(t testing.TB, format Format, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch format {
	case Zstd:
		w, err = zstd.NewWriter(&b)
	case LZ4:
		w = lz4.NewWriter(&b)
	case XZ:
		w, err = xz.NewWriter(&b)
	case Gzip:
		w = gzip.NewWriter(&b)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var formats = []Format{Zstd, LZ4, XZ, Gzip}

func payload() []byte {
	var b bytes.Buffer
	b.WriteString("\x7fELF")
	for i := 0; b.Len() < 3<<20; i++ {
		b.WriteString(strings.Repeat("x", i%97))
		b.WriteByte(byte(i))
	}
	return b.Bytes()
}

// cacheFiles are the names in dir.
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestInflateRoundTrip(t *testing.T) {
	data := payload()
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			src, dir := filepath.Join(t.TempDir(), "core.bin"), t.TempDir()
			if err := os.WriteFile(src, compress(t, f, data), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := SniffFile(src); got != f {
				t.Fatalf("SniffFile = %q, want %q", got, f)
			}
			c, err := Inflate(context.Background(), src, dir, DefaultMaxSize)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(c.Path)
			if err != nil || !bytes.Equal(got, data) || c.Size != int64(len(data)) || c.Reused {
				t.Fatalf("decompressed %d bytes (err %v, size %d, reused %v), want %d", len(got), err, c.Size, c.Reused, len(data))
			}
			c2, err := Inflate(context.Background(), src, dir, DefaultMaxSize)
			if err != nil || !c2.Reused || c2.Path != c.Path {
				t.Fatalf("second Inflate: %+v, %v; want the cached %s", c2, err, c.Path)
			}
			if n := cacheFiles(t, dir); len(n) != 1 {
				t.Fatalf("cache holds %q, want one core", n)
			}
			// A core unused for longer than Unused goes when another is
			// decompressed; the one in use stays.
			old := time.Now().Add(-Unused - time.Hour)
			os.Chtimes(c.Path, old, old)
			src2 := filepath.Join(t.TempDir(), "other")
			os.WriteFile(src2, compress(t, f, data[:1000]), 0o600)
			c3, err := Inflate(context.Background(), src2, dir, DefaultMaxSize)
			if err != nil {
				t.Fatal(err)
			}
			if n := cacheFiles(t, dir); len(n) != 1 || n[0] != filepath.Base(c3.Path) {
				t.Fatalf("cache holds %q, want only %s", n, c3.Path)
			}
		})
	}
}

// TestInflateHostile: a bomb (beyond the cap), a truncated stream and
// garbage after a valid magic are refused, and the cache holds nothing.
func TestInflateHostile(t *testing.T) {
	data := payload()
	for _, f := range formats {
		good := compress(t, f, data)
		garbage := append(append([]byte(nil), good[:6]...), bytes.Repeat([]byte{0xa5, 0x13, 0x77}, 4000)...)
		if f == Gzip {
			garbage = append(append([]byte(nil), good[:3]...), bytes.Repeat([]byte{0xa5, 0x13, 0x77}, 4000)...)
		}
		for _, tc := range []struct {
			name string
			in   []byte
			max  int64
			kind string
		}{
			{"bomb", good, 1 << 20, "bomb"},
			{"truncated", good[:len(good)*2/3], DefaultMaxSize, "corrupt"},
			{"cut-at-end", good[:len(good)-3], DefaultMaxSize, "corrupt"},
			{"garbage", garbage, DefaultMaxSize, "corrupt"},
		} {
			t.Run(string(f)+"/"+tc.name, func(t *testing.T) {
				src, dir := filepath.Join(t.TempDir(), "c"), t.TempDir()
				if err := os.WriteFile(src, tc.in, 0o600); err != nil {
					t.Fatal(err)
				}
				_, err := Inflate(context.Background(), src, dir, tc.max)
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.kind {
					t.Fatalf("Inflate = %v, want a %q *Error", err, tc.kind)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				if n := cacheFiles(t, dir); len(n) != 0 {
					t.Fatalf("cache holds %q after the error", n)
				}
			})
		}
	}
}

func TestInflateNotCore(t *testing.T) {
	for _, f := range formats {
		src, dir := filepath.Join(t.TempDir(), "c"), t.TempDir()
		os.WriteFile(src, compress(t, f, bytes.Repeat([]byte("log line\n"), 1000)), 0o600)
		_, err := Inflate(context.Background(), src, dir, DefaultMaxSize)
		var e *Error
		if !errors.As(err, &e) || e.Kind != "notcore" {
			t.Errorf("%s: Inflate(text) = %v, want a notcore *Error", f, err)
		}
		if n := cacheFiles(t, dir); len(n) != 0 {
			t.Errorf("%s: cache holds %q", f, n)
		}
	}
}

func TestInflateFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "core.zst")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	done := make(chan error, 1)
	go func() {
		_, err := Inflate(context.Background(), fifo, dir, DefaultMaxSize)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "FIFO") && !strings.Contains(err.Error(), "not a regular") {
			t.Fatalf("Inflate(FIFO) = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Inflate blocked on a FIFO")
	}
	if SniffFile(fifo) != None {
		t.Error("SniffFile(FIFO) names a format")
	}
	if n := cacheFiles(t, dir); len(n) != 0 {
		t.Fatalf("cache holds %q", n)
	}
}

func TestInflateCancelled(t *testing.T) {
	src, dir := filepath.Join(t.TempDir(), "c"), t.TempDir()
	os.WriteFile(src, compress(t, Zstd, payload()), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Inflate(ctx, src, dir, DefaultMaxSize); err == nil {
		t.Fatal("Inflate ran under a cancelled context")
	}
	if n := cacheFiles(t, dir); len(n) != 0 {
		t.Fatalf("cache holds %q", n)
	}
}

func TestParseName(t *testing.T) {
	n, ok := ParseName(`core.python3\x2e11.1000.0123456789abcdef0123456789abcdef.4242.1700000000123456.zst`)
	if !ok || n.Comm != "python3.11" || n.UID != 1000 || n.PID != 4242 || n.BootID != "0123456789abcdef0123456789abcdef" ||
		!n.Time.Equal(time.UnixMicro(1700000000123456)) {
		t.Fatalf("ParseName = %+v, %v", n, ok)
	}
	if n, ok := ParseName(`core.a.b.0.0123456789abcdef0123456789abcdef.7.1`); !ok || n.Comm != "a.b" || n.PID != 7 {
		t.Fatalf("unescaped dot: %+v, %v", n, ok)
	}
	for _, bad := range []string{
		"core", "core.1234", "python.core", `core.x\x2.0.0123456789abcdef0123456789abcdef.1.1`,
		"core.x.0.0123456789abcdef0123456789abcdeg.1.1", "core.x.0.0123456789abcdef0123456789abcdef.0.1",
		"core..0.0123456789abcdef0123456789abcdef.1.1",
	} {
		if n, ok := ParseName(bad); ok {
			t.Errorf("ParseName(%q) = %+v, want false", bad, n)
		}
	}
}

func TestCoredumpctl(t *testing.T) {
	list := []byte(`[{"time":2,"pid":10,"uid":0,"sig":11,"corefile":"present","exe":"/usr/bin/python3.11","size":5},
{"time":3,"pid":11,"uid":0,"sig":6,"corefile":"missing","exe":"/x","size":0},
{"time":1,"pid":10,"uid":0,"sig":6,"corefile":"present","exe":"/usr/bin/python3.11","size":5}]`)
	es, err := ParseList(list)
	if err != nil || len(es) != 3 {
		t.Fatalf("ParseList = %+v, %v", es, err)
	}
	if e, ok := Pick(es, "latest"); !ok || e.PID != 11 {
		t.Errorf("Pick(latest) = %+v, %v", e, ok)
	}
	if e, ok := Pick(es, "10"); !ok || e.Time != 2 {
		t.Errorf("Pick(10) = %+v, %v", e, ok)
	}
	if _, ok := Pick(es, "12"); ok {
		t.Error("Pick(12) found an entry")
	}
	if _, err := ParseList([]byte("No coredumps found.")); err == nil {
		t.Error("ParseList took text")
	}
	info := "           PID: 10 (python3.11)\n       Storage: /var/lib/systemd/coredump/core.python3\\x2e11.0.b.10.2.zst (present)\n  Size on Disk: 1M\n"
	if got := ParseStorage(info); got != `/var/lib/systemd/coredump/core.python3\x2e11.0.b.10.2.zst` {
		t.Errorf("ParseStorage = %q", got)
	}
	for _, s := range []string{"Storage: none\n", "Storage: journal\n", "PID: 1\n", ""} {
		if got := ParseStorage(s); got != "" {
			t.Errorf("ParseStorage(%q) = %q", s, got)
		}
	}
}

func FuzzParseStorage(f *testing.F) {
	f.Add("Storage: /a b/c (present)\n")
	f.Fuzz(func(t *testing.T, s string) {
		if p := ParseStorage(s); p != "" && p[0] != '/' {
			t.Fatalf("ParseStorage(%q) = %q", s, p)
		}
	})
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"100": 100, "64G": 64 << 30, "512m": 512 << 20, "1T": 1 << 40} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "G", "-1", "1.5G", "0", "99999999999999999999", "8388608T"} {
		if got, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", s, got)
		}
	}
}

func FuzzSniff(f *testing.F) {
	for _, fm := range formats {
		f.Add(compress(f, fm, []byte("core")))
	}
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fm := Sniff(b)
		if fm != None && len(b) < 3 {
			t.Fatalf("Sniff(%x) = %q on fewer bytes than any magic", b, fm)
		}
		if fm != Sniff(append(append([]byte(nil), b...), 0, 1, 2)) {
			t.Fatal("trailing bytes changed the format")
		}
	})
}

func FuzzParseName(f *testing.F) {
	f.Add(`core.python3\x2e11.1000.0123456789abcdef0123456789abcdef.4242.1700000000123456.zst`)
	f.Add(`core.\x41.0.0123456789abcdef0123456789abcdef.1.1.lz4`)
	f.Add("core.x.y")
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := ParseName(s)
		if ok && (n.PID <= 0 || n.Comm == "" || len(n.BootID) != 32) {
			t.Fatalf("ParseName(%q) = %+v", s, n)
		}
	})
}
