package debuginfod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// endless writes chunks of b to w until the client goes away; with
// length > 0 it first announces that Content-Length.
func endless(b []byte, length int64) func(w http.ResponseWriter, r *http.Request, id, rest string) {
	return func(w http.ResponseWriter, r *http.Request, _, _ string) {
		if length > 0 {
			w.Header().Set("Content-Length", fmt.Sprint(length))
		}
		for {
			if _, err := w.Write(b); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			if r.Context().Err() != nil {
				return
			}
		}
	}
}

// Issue 18: a server that announces or sends more than the limit, or
// than the cache's file system can take, is refused or cut there; the
// error names the server and the build-id; nothing is left in the
// cache. (A server sending 1 TiB wrote 8.8 GB into the cache.)
func TestDownloadBounds(t *testing.T) {
	id := fakeID(40)
	elf := makeELF(t, id, 5000)
	chunk := bytes.Repeat([]byte{0x7f}, 64<<10)
	const tib = 1 << 40
	for _, tc := range []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request, id, rest string)
		maxSize int64
		free    int64 // 0: the real file system
		want    error
		msg     string
	}{
		// The default limit (2 GiB) applies with no DEBUGINFOD_MAXSIZE:
		// refused from the header, before the body is read.
		{"announces 1 TiB", endless(chunk, tib), 0, 0, ErrTooLarge,
			"larger than the download limit: it announces 1099511627776 bytes, the limit is 2147483648 (DEBUGINFOD_MAXSIZE)"},
		// With no limit (DEBUGINFOD_MAXSIZE=0), the free space still
		// bounds it.
		{"announces 1 TiB, no limit", endless(chunk, tib), -1, 1 << 30, ErrNoSpace,
			"not enough free space in the cache: it announces 1099511627776 bytes, "},
		// No Content-Length: cut once past the limit.
		{"endless, no length", endless(chunk, 0), 1 << 20, 0, ErrTooLarge,
			"larger than the download limit: it sent more than 1048576 bytes (DEBUGINFOD_MAXSIZE)"},
		{"endless, no length, no limit, little space", endless(chunk, 0), -1, FreeMargin + 1<<20, ErrNoSpace,
			"not enough free space in the cache: it sent more than the 1048576 bytes "},
		// Shorter than announced.
		{"cut", func(w http.ResponseWriter, r *http.Request, _, _ string) {
			w.Header().Set("Content-Length", fmt.Sprint(len(elf)+1000))
			w.Write(elf)
		}, 0, 0, ErrCut, fmt.Sprintf("the download was cut short: %d of the %d bytes it announced", len(elf), len(elf)+1000)},
		// A debuginfod server that honours X-DEBUGINFOD-MAXSIZE.
		{"406", func(w http.ResponseWriter, r *http.Request, _, _ string) {
			if r.Header.Get("X-DEBUGINFOD-MAXSIZE") != "4096" {
				t.Errorf("X-DEBUGINFOD-MAXSIZE: %q", r.Header.Get("X-DEBUGINFOD-MAXSIZE"))
			}
			http.Error(w, "File too large", http.StatusNotAcceptable)
		}, 4096, 0, ErrTooLarge, "larger than the download limit: the server says so (406 Not Acceptable), limit 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.handle)
			c := testClient(t, s.URL)
			c.MaxSize = tc.maxSize
			if tc.free > 0 {
				c.freeSpace = func(string) (int64, error) { return tc.free, nil }
			}
			r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
			if !errors.Is(r.Err, tc.want) || r.Path != "" {
				t.Fatalf("Fetch: %q, %v; want %v", r.Path, r.Err, tc.want)
			}
			for _, w := range []string{"debuginfo " + id, "server " + s.URL, tc.msg} {
				if !strings.Contains(r.Err.Error(), w) {
					t.Errorf("error %q does not say %q", r.Err, w)
				}
			}
			if l := listCache(t, c.CacheDir); len(l) != 0 {
				t.Errorf("cache holds %q", l)
			}
		})
	}

	// Within the limit and the space, the same file is fine.
	s := newServer(t, files(map[string][]byte{id: elf}))
	c := testClient(t, s.URL)
	c.MaxSize = int64(len(elf))
	c.freeSpace = func(string) (int64, error) { return FreeMargin + int64(len(elf)), nil }
	if r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]; r.Err != nil {
		t.Errorf("at the limit: %v", r.Err)
	}
}

// A server that sends more than its Content-Length: what it announced
// is read and no more (the rest is not part of the answer), so the cache
// holds exactly the announced file.
func TestDownloadLongerThanAnnounced(t *testing.T) {
	id := fakeID(41)
	elf := makeELF(t, id, 5000)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, _, _ string) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(elf))
		buf.Write(elf)
		junk := bytes.Repeat([]byte{0xee}, 64<<10)
		for range 64 { // 4 MiB past the announced end, or until the client goes
			if _, err := buf.Write(junk); err != nil {
				return
			}
			if buf.Flush() != nil {
				return
			}
		}
	})
	c := testClient(t, s.URL)
	c.MaxSize = 1 << 20
	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	got, err := os.ReadFile(r.Path)
	if err != nil || !bytes.Equal(got, elf) {
		t.Errorf("cached %d bytes (%v), want the %d announced", len(got), err, len(elf))
	}
	if l := listCache(t, c.CacheDir); len(l) != 2 || l[0] != id+"/" || l[1] != filepath.Join(id, "debuginfo") {
		t.Errorf("cache holds %q", l)
	}
}

// cache_miss_s that is a FIFO or a link to /dev/zero does not block or
// run away: the default holds.
func TestCacheMissAgeNotRegular(t *testing.T) {
	c := testClient(t)
	if err := os.MkdirAll(c.CacheDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(c.CacheDir, "cache_miss_s")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := c.cacheMissAge(); got != defaultCacheMiss {
		t.Errorf("FIFO: %v", got)
	}
	os.Remove(p)
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Fatal(err)
	}
	if got := c.cacheMissAge(); got != defaultCacheMiss {
		t.Errorf("/dev/zero: %v", got)
	}
}
