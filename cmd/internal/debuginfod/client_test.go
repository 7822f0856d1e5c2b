package debuginfod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

func TestParseURLs(t *testing.T) {
	for _, tc := range []struct {
		in           string
		urls, ignore []string
	}{
		{"", nil, nil},
		{"   ", nil, nil},
		{"https://debuginfod.debian.net", []string{"https://debuginfod.debian.net"}, nil},
		{"  http://a:1/   http://b:2/x  ", []string{"http://a:1/", "http://b:2/x"}, nil},
		{"http://a\thttp://b\nhttp://c", []string{"http://a", "http://b", "http://c"}, nil},
		// elfutils sends the same server one query only.
		{"http://a/d1 http://a/d1 http://a/d1/", []string{"http://a/d1"}, nil},
		// libcurl reads a URL without a scheme as http.
		{"127.0.0.1:8002", []string{"http://127.0.0.1:8002"}, nil},
		{"ftp://a/x http://b", []string{"http://b"}, []string{"ftp://a/x"}},
		{"file:///srv/debuginfod", []string{"file:///srv/debuginfod"}, nil},
		{"http:// http://a?x=1 http://a#f", nil, []string{"http://", "http://a?x=1", "http://a#f"}},
		// A comma is no separator, for elfutils either.
		{"http://a,http://b", []string{"http://a,http://b"}, nil},
	} {
		urls, ignored := ParseURLs(tc.in)
		if !reflect.DeepEqual(urls, tc.urls) || !reflect.DeepEqual(ignored, tc.ignore) {
			t.Errorf("ParseURLs(%q) = %q, %q; want %q, %q", tc.in, urls, ignored, tc.urls, tc.ignore)
		}
	}
}

func TestRequestURL(t *testing.T) {
	// As debuginfod-find 0.188 asks: one trailing slash is kept, more are
	// the user's business.
	for _, tc := range []struct{ base, want string }{
		{"http://h:1", "http://h:1/buildid/ab/debuginfo"},
		{"http://h:1/", "http://h:1/buildid/ab/debuginfo"},
		{"http://h:1/x//", "http://h:1/x//buildid/ab/debuginfo"},
	} {
		if got := requestURL(tc.base, "ab", "debuginfo"); got != tc.want {
			t.Errorf("requestURL(%q) = %q, want %q", tc.base, got, tc.want)
		}
	}
}

func TestCacheDirFromEnv(t *testing.T) {
	none := func(string) bool { return false }
	for _, tc := range []struct {
		env    []string
		exists func(string) bool
		want   string
	}{
		{[]string{"DEBUGINFOD_CACHE_PATH=/c", "XDG_CACHE_HOME=/x", "HOME=/h"}, none, "/c"},
		{[]string{"DEBUGINFOD_CACHE_PATH=", "XDG_CACHE_HOME=/x", "HOME=/h"}, none, "/x/debuginfod_client"},
		{[]string{"XDG_CACHE_HOME=", "HOME=/h"}, none, "/h/.cache/debuginfod_client"},
		{[]string{"HOME=/h"}, none, "/h/.cache/debuginfod_client"},
		{nil, none, "/.cache/debuginfod_client"},
		{[]string{"XDG_CACHE_HOME=rel"}, none, "rel/debuginfod_client"},
		{[]string{"XDG_CACHE_HOME=/x", "HOME=/h"}, func(p string) bool { return p == "/h/.debuginfod_client_cache" }, "/h/.debuginfod_client_cache"},
		{[]string{"HOME=/a", "HOME=/b"}, none, "/b/.cache/debuginfod_client"},
	} {
		if got := CacheDirFromEnv(tc.env, tc.exists); got != tc.want {
			t.Errorf("CacheDirFromEnv(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	c := FromEnv([]string{"DEBUGINFOD_URLS=http://a gopher://b", "DEBUGINFOD_CACHE_PATH=/c"}, nil)
	if !reflect.DeepEqual(c.URLs, []string{"http://a"}) || !reflect.DeepEqual(c.IgnoredURLs, []string{"gopher://b"}) ||
		c.CacheDir != "/c" || c.Timeout != 90*time.Second || c.MaxSize != 0 || c.Parallel != 8 || c.Progress != nil {
		t.Errorf("FromEnv defaults: %+v", c)
	}
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{{"5", 5 * time.Second}, {" 7 ", 7 * time.Second}, {"0", 0}, {"-3", 0}, {"x", 90 * time.Second}} {
		if got := FromEnv([]string{"DEBUGINFOD_TIMEOUT=" + tc.v}, nil).Timeout; got != tc.want {
			t.Errorf("DEBUGINFOD_TIMEOUT=%q: Timeout %v, want %v", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v    string
		want int64
	}{{"1000", 1000}, {"0", -1}, {"-1", -1}, {"1k", 0}} {
		if got := FromEnv([]string{"DEBUGINFOD_MAXSIZE=" + tc.v}, nil).MaxSize; got != tc.want {
			t.Errorf("DEBUGINFOD_MAXSIZE=%q: MaxSize %v, want %v", tc.v, got, tc.want)
		}
	}
	// Set, even empty, means progress on the writer given (elfutils
	// checks getenv != NULL); unset, none even with a writer.
	var w strings.Builder
	if c := FromEnv([]string{"DEBUGINFOD_PROGRESS="}, &w); c.Progress != &w {
		t.Errorf("DEBUGINFOD_PROGRESS set: Progress = %v", c.Progress)
	}
	if c := FromEnv(nil, &w); c.Progress != nil {
		t.Errorf("DEBUGINFOD_PROGRESS unset: Progress = %v", c.Progress)
	}
}

func TestCheckBuildID(t *testing.T) {
	for _, id := range []string{"ab", "3d481f7beb569366850485043ca07137963683fe", strings.Repeat("0f", 64)} {
		if err := CheckBuildID(id); err != nil {
			t.Errorf("CheckBuildID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", "a", "abc", "AB", "3D48", "zz", "../../etc/passwd", "ab/cd", "ab\x00c", " ab", "ab ", strings.Repeat("0f", 65), "abcd%2f"} {
		if err := CheckBuildID(id); !errors.Is(err, ErrBadBuildID) {
			t.Errorf("CheckBuildID(%q) = %v, want ErrBadBuildID", id, err)
		}
	}
}

func TestSourceNames(t *testing.T) {
	// Names and URLs as debuginfod-find 0.188 wrote and asked them.
	for _, tc := range []struct{ path, name, url string }{
		{"/usr/include/stdio.h", "source##usr##include##stdio.h", "/usr/include/stdio.h"},
		{"/tmp/exp/src/../src/hello.c", "source##tmp##exp##src##..##src##hello.c", "/tmp/exp/src/../src/hello.c"},
		{"/tmp/exp/src//hello.c", "source##tmp##exp##src####hello.c", "/tmp/exp/src//hello.c"},
		{"/tmp/exp/src/we#ird/h.c", "source##tmp##exp##src##we#_ird##h.c", "/tmp/exp/src/we%23ird/h.c"},
		{"/a b/c#d/%e?f.c", "source##a b##c#_d##%e?f.c", "/a%20b/c%23d/%25e%3Ff.c"},
	} {
		if got := SourceEntryName(tc.path); got != tc.name {
			t.Errorf("SourceEntryName(%q) = %q, want %q", tc.path, got, tc.name)
		}
		if got := escapeSourcePath(tc.path); got != tc.url {
			t.Errorf("escapeSourcePath(%q) = %q, want %q", tc.path, got, tc.url)
		}
	}
}

func TestFetch(t *testing.T) {
	id := fakeID(1)
	elf := makeELF(t, id, 1000)
	s := newServer(t, files(map[string][]byte{id: elf}))
	c := testClient(t, s.URL)
	res := c.Fetch(context.Background(), "debuginfo", []string{id})
	want := []Result{{BuildID: id, Path: filepath.Join(c.CacheDir, id, "debuginfo"), Server: s.URL}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("Fetch = %+v, want %+v", res, want)
	}
	got, err := os.ReadFile(res[0].Path)
	if err != nil || !bytes.Equal(got, elf) {
		t.Fatalf("cached file: %d bytes, %v; want the %d served", len(got), err, len(elf))
	}
	if l := listCache(t, c.CacheDir); !reflect.DeepEqual(l, []string{id + "/", id + "/debuginfo"}) {
		t.Errorf("cache holds %q", l)
	}
	// elfutils' modes and dates.
	st, _ := os.Stat(res[0].Path)
	if st.Mode() != 0o400 || !st.ModTime().Equal(lastModified) {
		t.Errorf("cached file mode %v mtime %v, want 0400 and %v", st.Mode(), st.ModTime(), lastModified)
	}
	if st, _ := os.Stat(filepath.Dir(res[0].Path)); st.Mode().Perm() != 0o700 {
		t.Errorf("entry dir mode %v, want 0700", st.Mode())
	}
	if p, ok := c.Cached(id, "debuginfo"); !ok || p != res[0].Path {
		t.Errorf("Cached = %q, %v", p, ok)
	}
	if _, ok := c.Cached(id, "executable"); ok {
		t.Errorf("Cached executable: ok")
	}

	// Again: from the cache, without a request.
	before := s.requests.Load()
	res = c.Fetch(context.Background(), "debuginfo", []string{id, id})
	for _, r := range res {
		if r.Err != nil || !r.FromCache || r.Path != want[0].Path || r.Server != "" {
			t.Errorf("second Fetch: %+v", r)
		}
	}
	if n := s.requests.Load() - before; n != 0 {
		t.Errorf("second Fetch made %d requests", n)
	}
}

func TestFetchDuplicatesOnce(t *testing.T) {
	id := fakeID(2)
	s := newServer(t, files(map[string][]byte{id: makeELF(t, id, 0)}))
	c := testClient(t, s.URL)
	res := c.Fetch(context.Background(), "debuginfo", []string{id, id, id})
	for _, r := range res {
		if r.Err != nil || r.Path == "" {
			t.Errorf("%+v", r)
		}
	}
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests for one build-id", n)
	}
}

func TestFetchExecutable(t *testing.T) {
	id := fakeID(3)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, gotID, rest string) {
		if gotID != id || rest != "executable" {
			http.NotFound(w, r)
			return
		}
		w.Write(makeELF(t, id, 10))
	})
	c := testClient(t, s.URL)
	r := c.Fetch(context.Background(), "executable", []string{id})[0]
	if r.Err != nil || r.Path != filepath.Join(c.CacheDir, id, "executable") {
		t.Fatalf("%+v", r)
	}
	if r := c.Fetch(context.Background(), "source", []string{id})[0]; r.Err == nil || !strings.Contains(r.Err.Error(), `unknown kind "source"`) {
		t.Errorf("kind source: %v", r.Err)
	}
}

func TestFetchSecondServer(t *testing.T) {
	id := fakeID(4)
	elf := makeELF(t, id, 100)
	missing := newServer(t, files(nil))
	serve := files(map[string][]byte{id: elf})
	good := newServer(t, func(w http.ResponseWriter, r *http.Request, id, rest string) {
		time.Sleep(100 * time.Millisecond) // the 404 comes first
		serve(w, r, id, rest)
	})
	c := testClient(t, missing.URL, good.URL)
	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if r.Err != nil || r.Server != good.URL || r.FromCache {
		t.Fatalf("%+v", r)
	}
	if missing.requests.Load() != 1 || good.requests.Load() != 1 {
		t.Errorf("requests: %d to the first server, %d to the second", missing.requests.Load(), good.requests.Load())
	}
}

func TestFetchAllServersAtOnce(t *testing.T) {
	// A slow server does not hold up a fast one: all are asked at once and
	// the first answer wins. The slow server answers only when its request
	// is cancelled, and the client's timeout is an hour: a Fetch that
	// waited for it would hang the test (the test binary's -timeout fails
	// it), not merely be slow; no wall clock is measured.
	id := fakeID(5)
	elf := makeELF(t, id, 100)
	slow := newServer(t, func(w http.ResponseWriter, r *http.Request, id, rest string) {
		<-r.Context().Done()
	})
	fast := newServer(t, files(map[string][]byte{id: elf}))
	c := testClient(t, slow.URL, fast.URL)
	c.Timeout = time.Hour
	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if r.Err != nil || r.Server != fast.URL {
		t.Fatalf("%+v", r)
	}
}

func TestNotFoundNegativeCache(t *testing.T) {
	id := fakeID(6)
	a := newServer(t, files(nil))
	b := newServer(t, files(nil))
	c := testClient(t, a.URL, b.URL)
	now := time.Now()
	c.now = func() time.Time { return now }

	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if !errors.Is(r.Err, ErrNotFound) || r.Path != "" {
		t.Fatalf("Fetch: %+v, want ErrNotFound", r)
	}
	if !strings.Contains(r.Err.Error(), a.URL) || !strings.Contains(r.Err.Error(), b.URL) {
		t.Errorf("error does not name the servers: %v", r.Err)
	}
	// The negative entry elfutils also leaves: empty, here mode 0000.
	neg := filepath.Join(c.CacheDir, id, "debuginfo")
	st, err := os.Stat(neg)
	if err != nil || st.Size() != 0 || st.Mode() != 0 {
		t.Fatalf("negative entry: %v, %v", st, err)
	}
	assertNoTemp(t, c.CacheDir)

	// Within cache_miss_s (default 600 s): known missing, no request.
	now = now.Add(599 * time.Second)
	r = c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if !errors.Is(r.Err, ErrNotFound) || !strings.Contains(r.Err.Error(), "negative cache entry") {
		t.Errorf("within cache_miss_s: %v", r.Err)
	}
	if n := a.requests.Load() + b.requests.Load(); n != 2 {
		t.Errorf("%d requests, want the first 2 only", n)
	}
	if _, err := c.CachedErr(id, "debuginfo"); !errors.Is(err, ErrNotFound) {
		t.Errorf("CachedErr = %v, want ErrNotFound", err)
	}

	// cache_miss_s shortened: the entry expired, and the servers are asked.
	os.WriteFile(filepath.Join(c.CacheDir, "cache_miss_s"), []byte("60\n"), 0o644)
	r = c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if !errors.Is(r.Err, ErrNotFound) || strings.Contains(r.Err.Error(), "negative cache entry") {
		t.Errorf("after cache_miss_s: %v", r.Err)
	}
	if n := a.requests.Load() + b.requests.Load(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

func TestNegativeEntryFromElfutils(t *testing.T) {
	// elfutils 0.188 leaves an empty 0644 file; a good file replaces it
	// when it expires.
	id := fakeID(7)
	s := newServer(t, files(map[string][]byte{id: makeELF(t, id, 0)}))
	c := testClient(t, s.URL)
	p := filepath.Join(c.CacheDir, id, "debuginfo")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, nil, 0o644)
	if r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]; !errors.Is(r.Err, ErrNotFound) {
		t.Errorf("fresh elfutils negative entry: %v", r.Err)
	}
	old := time.Now().Add(-601 * time.Second)
	os.Chtimes(p, old, old)
	if r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]; r.Err != nil || r.Path != p {
		t.Errorf("expired negative entry: %+v", r)
	}
}

func TestWrongBuildID(t *testing.T) {
	id, other := fakeID(8), fakeID(9)
	s := newServer(t, files(map[string][]byte{id: makeELF(t, other, 100)}))
	c := testClient(t, s.URL)
	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if !errors.Is(r.Err, ErrWrongBuildID) {
		t.Fatalf("Fetch: %v, want ErrWrongBuildID", r.Err)
	}
	t.Log(r.Err)
	for _, s := range []string{s.URL, id, other} {
		if !strings.Contains(r.Err.Error(), s) {
			t.Errorf("error %q does not name %s", r.Err, s)
		}
	}
	if l := listCache(t, c.CacheDir); len(l) != 0 {
		t.Errorf("cache holds %q", l)
	}

	// Not ELF at all.
	s2 := newServer(t, files(map[string][]byte{id: []byte("<html>hello</html>")}))
	c2 := testClient(t, s2.URL)
	r = c2.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if !errors.Is(r.Err, ErrWrongBuildID) || !errors.Is(r.Err, elfinfo.ErrNotELF) {
		t.Errorf("non-ELF answer: %v", r.Err)
	}
	if l := listCache(t, c2.CacheDir); len(l) != 0 {
		t.Errorf("cache holds %q", l)
	}
}

func TestWrongThenRightServer(t *testing.T) {
	// The first answer is wrong; the server that answered later is asked
	// again and its file is taken.
	id := fakeID(10)
	wrong := newServer(t, files(map[string][]byte{id: makeELF(t, fakeID(11), 0)}))
	right := newServer(t, func(w http.ResponseWriter, r *http.Request, gotID, rest string) {
		time.Sleep(200 * time.Millisecond)
		files(map[string][]byte{id: makeELF(t, id, 0)})(w, r, gotID, rest)
	})
	c := testClient(t, wrong.URL, right.URL)
	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if r.Err != nil || r.Server != right.URL {
		t.Fatalf("%+v", r)
	}
	if n := right.requests.Load(); n != 2 {
		t.Logf("%d requests to the right server", n)
	}
}

func TestTooLarge(t *testing.T) {
	id := fakeID(12)
	elf := makeELF(t, id, 5000)
	for _, tc := range []struct {
		name   string
		handle func(w http.ResponseWriter, r *http.Request, id, rest string)
	}{
		{"content-length", files(map[string][]byte{id: elf})},
		{"x-debuginfod-size", func(w http.ResponseWriter, r *http.Request, _, _ string) {
			w.Header().Set("X-DEBUGINFOD-SIZE", "1000000")
			w.(http.Flusher).Flush()
			w.Write(elf[:100])
		}},
		{"chunked", func(w http.ResponseWriter, r *http.Request, _, _ string) {
			// No Content-Length: the copy is bounded.
			for i := 0; i < len(elf); i += 512 {
				w.Write(elf[i:min(i+512, len(elf))])
				w.(http.Flusher).Flush()
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.handle)
			c := testClient(t, s.URL)
			c.MaxSize = 4096
			r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
			if !errors.Is(r.Err, ErrTooLarge) || !strings.Contains(r.Err.Error(), s.URL) {
				t.Fatalf("Fetch: %v, want ErrTooLarge naming the server", r.Err)
			}
			if l := listCache(t, c.CacheDir); len(l) != 0 {
				t.Errorf("cache holds %q", l)
			}
			// Under the limit, the same answer is fine.
			c = testClient(t, s.URL)
			c.MaxSize = int64(len(elf))
			if tc.name == "x-debuginfod-size" {
				return
			}
			if r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]; r.Err != nil {
				t.Errorf("at the limit: %v", r.Err)
			}
		})
	}
}

func TestSlowServer(t *testing.T) {
	slowID, fastID, dripID := fakeID(13), fakeID(14), fakeID(15)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, id, rest string) {
		switch id {
		case fastID:
			w.Write(makeELF(t, fastID, 0))
		case slowID: // answers nothing
			select {
			case <-r.Context().Done():
			case <-done:
			}
		case dripID: // 1 KiB, then 1 KiB every 100 ms: less than 100 KiB per Timeout
			w.Header().Set("Content-Length", "1000000")
			b := makeELF(t, dripID, 1000000)
			for i := 0; ; i += 1024 {
				if _, err := w.Write(b[i : i+1024]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-done:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	})
	c := testClient(t, s.URL)
	c.Timeout = 500 * time.Millisecond
	start := time.Now()
	res := c.Fetch(context.Background(), "debuginfo", []string{slowID, fastID, dripID})
	d := time.Since(start)
	if res[1].Err != nil {
		t.Errorf("fast build-id: %v", res[1].Err)
	}
	for _, r := range []Result{res[0], res[2]} {
		if !errors.Is(r.Err, os.ErrDeadlineExceeded) || !strings.Contains(r.Err.Error(), "DEBUGINFOD_TIMEOUT") || !strings.Contains(r.Err.Error(), s.URL) {
			t.Errorf("slow build-id %s: %v", r.BuildID, r.Err)
		}
	}
	// Never before the timeout (a later end is the machine's load; a
	// client that never timed out the drip would hang the test).
	if d < 500*time.Millisecond {
		t.Errorf("took %v with Timeout 500ms", d)
	}
	assertNoTemp(t, c.CacheDir)
	if l := listCache(t, c.CacheDir); !reflect.DeepEqual(l, []string{fastID + "/", fastID + "/debuginfo"}) {
		t.Errorf("cache holds %q", l)
	}
}

func TestServerClosesMidBody(t *testing.T) {
	id := fakeID(16)
	elf := makeELF(t, id, 100000)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, _, _ string) {
		w.Header().Set("Content-Length", fmt.Sprint(len(elf)))
		w.Write(elf[:30000])
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	c := testClient(t, s.URL)
	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), s.URL) {
		t.Fatalf("Fetch: %+v, want an error naming the server", r)
	}
	t.Log(r.Err)
	if l := listCache(t, c.CacheDir); len(l) != 0 {
		t.Errorf("cache holds %q", l)
	}
}

func TestCancel(t *testing.T) {
	ids := []string{fakeID(17), fakeID(18), fakeID(19)}
	started := make(chan struct{}, len(ids))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, id, _ string) {
		w.Header().Set("Content-Length", "100000")
		w.Write(makeELF(t, id, 10000))
		w.(http.Flusher).Flush()
		started <- struct{}{}
		<-r.Context().Done()
	})
	c := testClient(t, s.URL)
	c.Parallel = 2
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	// The server holds every request until it is cancelled: a Fetch that
	// ignored ctx would hang the test rather than return.
	res := c.Fetch(ctx, "debuginfo", ids)
	for _, r := range res {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", r.BuildID, r.Err)
		}
	}
	if l := listCache(t, c.CacheDir); len(l) != 0 {
		t.Errorf("cache holds %q", l)
	}
}

func TestCacheNotWritable(t *testing.T) {
	// Root writes anywhere chmod forbids; a cache path under a regular
	// file cannot be written by anyone.
	id := fakeID(20)
	s := newServer(t, files(map[string][]byte{id: makeELF(t, id, 0)}))
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	c := testClient(t, s.URL)
	c.CacheDir = filepath.Join(file, "cache")
	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if !errors.Is(r.Err, ErrCacheNotWritable) {
		t.Fatalf("Fetch: %v, want ErrCacheNotWritable", r.Err)
	}
	want := "cache dir " + c.CacheDir + " is not writable: "
	if !strings.Contains(r.Err.Error(), want) || !strings.Contains(r.Err.Error(), "DEBUGINFOD_CACHE_PATH") {
		t.Errorf("error %q: want %q and the fix", r.Err, want)
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("%d requests: the file was fetched with nowhere to put it", n)
	}
}

func TestInvalidBuildIDs(t *testing.T) {
	s := newServer(t, files(nil))
	c := testClient(t, s.URL)
	bad := []string{"", "a", "ABCD", "../../../etc", "ab/../cd", "zz", "ab cd", strings.Repeat("ab", 65)}
	res := c.Fetch(context.Background(), "debuginfo", bad)
	for i, r := range res {
		if r.BuildID != bad[i] || !errors.Is(r.Err, ErrBadBuildID) {
			t.Errorf("%q: %+v", bad[i], r)
		}
	}
	for _, id := range bad {
		if _, ok := c.Cached(id, "debuginfo"); ok {
			t.Errorf("Cached(%q) ok", id)
		}
		if _, err := c.FetchSource(context.Background(), id, "/x.c"); !errors.Is(err, ErrBadBuildID) {
			t.Errorf("FetchSource(%q): %v", id, err)
		}
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("%d requests", n)
	}
	if l := listCache(t, c.CacheDir); len(l) != 0 {
		t.Errorf("cache holds %q", l)
	}
}

func TestParallel(t *testing.T) {
	ids, m := fakeELFs(t, 100, 32, func(i int) int { return i })
	s := slowServer(t, m)
	for _, parallel := range []int{1, 4, 8} {
		s.peak.Store(0)
		c := testClient(t, s.URL)
		c.Parallel = parallel
		start := time.Now()
		res := c.Fetch(context.Background(), "debuginfo", ids)
		d := time.Since(start)
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("%+v", r)
			}
		}
		// At most Parallel at once, and more than one when allowed (on
		// an idle machine, exactly Parallel).
		p := s.peak.Load()
		if p > int64(parallel) || parallel > 1 && p < 2 {
			t.Errorf("Parallel %d: %d requests at once", parallel, p)
		}
		t.Logf("Parallel %d: 32 build-ids in %v, %d requests at once", parallel, d, p)
	}
}

func TestCachedBadFile(t *testing.T) {
	id := fakeID(21)
	elf := makeELF(t, id, 0)
	c := testClient(t)
	p := filepath.Join(c.CacheDir, id, "debuginfo")
	os.MkdirAll(filepath.Dir(p), 0o700)
	check := func(content []byte, want error) {
		t.Helper()
		os.WriteFile(p, content, 0o600)
		if got, ok := c.Cached(id, "debuginfo"); ok {
			t.Errorf("Cached of a bad file: %q", got)
		}
		if _, err := c.CachedErr(id, "debuginfo"); !errors.Is(err, want) {
			t.Errorf("CachedErr = %v, want %v", err, want)
		}
		// Reported, not deleted.
		r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
		if !errors.Is(r.Err, ErrNoServers) || !errors.Is(r.Err, want) || !strings.Contains(r.Err.Error(), "ignoring cache entry "+p) {
			t.Errorf("Fetch: %v", r.Err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("bad file deleted: %v", err)
		}
	}
	check([]byte("garbage, not ELF"), elfinfo.ErrNotELF)
	check(makeELF(t, fakeID(22), 0), ErrWrongBuildID)
	check(elf[:70], elfinfo.ErrCorrupt)

	// A good download replaces it.
	s := newServer(t, files(map[string][]byte{id: elf}))
	c.URLs = []string{s.URL}
	if r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]; r.Err != nil || r.FromCache {
		t.Fatalf("%+v", r)
	}
	if got, ok := c.Cached(id, "debuginfo"); !ok || got != p {
		t.Errorf("Cached after refetch: %q %v", got, ok)
	}
}

func TestNoServers(t *testing.T) {
	c := testClient(t)
	r := c.Fetch(context.Background(), "debuginfo", []string{fakeID(23)})[0]
	if !errors.Is(r.Err, ErrNoServers) {
		t.Errorf("%v", r.Err)
	}
}

func TestFetchSource(t *testing.T) {
	id := fakeID(24)
	const path = "/build/src/we#ird dir/main.c"
	const content = "int main(void) { return 0; }\n"
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, gotID, rest string) {
		if gotID == id && rest == "source/build/src/we%23ird%20dir/main.c" {
			w.Write([]byte(content))
			return
		}
		http.NotFound(w, r)
	})
	c := testClient(t, s.URL)
	p, err := c.FetchSource(context.Background(), id, path)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.CacheDir, id, "source##build##src##we#_ird dir##main.c"); p != want {
		t.Errorf("path %q, want %q", p, want)
	}
	if b, _ := os.ReadFile(p); string(b) != content {
		t.Errorf("content %q", b)
	}
	if p2, err := c.FetchSource(context.Background(), id, path); err != nil || p2 != p || s.requests.Load() != 1 {
		t.Errorf("second FetchSource: %q, %v, %d requests", p2, err, s.requests.Load())
	}
	// Missing: a negative entry, as elfutils leaves.
	if _, err := c.FetchSource(context.Background(), id, "/nope.c"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing source: %v", err)
	}
	if st, err := os.Stat(filepath.Join(c.CacheDir, id, "source##nope.c")); err != nil || st.Size() != 0 {
		t.Errorf("negative entry: %v", err)
	}
	for _, bad := range []string{"relative.c", "/a\x00b", "/" + strings.Repeat("d/", 130)} {
		if _, err := c.FetchSource(context.Background(), id, bad); err == nil {
			t.Errorf("FetchSource(%q): no error", bad)
		}
	}
	// Bounded by MaxSize.
	c.MaxSize = 10
	if _, err := c.FetchSource(context.Background(), id, "/build/src/other.c"); !errors.Is(err, ErrNotFound) {
		t.Errorf("%v", err)
	}
	s2 := newServer(t, func(w http.ResponseWriter, r *http.Request, _, _ string) { w.Write([]byte(content)) })
	c2 := testClient(t, s2.URL)
	c2.MaxSize = 10
	if _, err := c2.FetchSource(context.Background(), id, path); !errors.Is(err, ErrTooLarge) {
		t.Errorf("source over MaxSize: %v", err)
	}
}

func TestFileURL(t *testing.T) {
	// file:// servers: the same layout on the local file system.
	id := fakeID(25)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "buildid", id), 0o755)
	os.WriteFile(filepath.Join(root, "buildid", id, "debuginfo"), makeELF(t, id, 0), 0o644)
	urls, _ := ParseURLs("file://" + root)
	c := testClient(t, urls...)
	res := c.Fetch(context.Background(), "debuginfo", []string{id, fakeID(26)})
	if res[0].Err != nil || !errors.Is(res[1].Err, ErrNotFound) {
		t.Errorf("%+v", res)
	}
}

func TestProgress(t *testing.T) {
	ids, m := fakeELFs(t, 200, 3, func(int) int { return 50000 })
	s := newServer(t, files(m))
	c := testClient(t, s.URL)
	var buf bytes.Buffer
	c.Progress = &buf
	res := c.Fetch(context.Background(), "debuginfo", append(ids, fakeID(299)))
	if res[3].Err == nil {
		t.Errorf("missing build-id found")
	}
	out := buf.String()
	if !strings.Contains(out, "debuginfod: 3/3 files") || !strings.Contains(out, "100%") || !strings.HasSuffix(out, "\n") {
		t.Errorf("progress output %q", out)
	}
	// From the cache: nothing to show.
	buf.Reset()
	c.Fetch(context.Background(), "debuginfo", ids)
	if buf.Len() != 0 {
		t.Errorf("progress for cached files: %q", buf.String())
	}
}

func TestErrorsNameKindAndID(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, _, _ string) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	c := testClient(t, s.URL)
	id := fakeID(27)
	r := c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	want := "debuginfo " + id + ": server " + s.URL + ": 500 Internal Server Error"
	if r.Err == nil || r.Err.Error() != want {
		t.Errorf("error %q, want %q", r.Err, want)
	}
	if errors.Is(r.Err, ErrNotFound) {
		t.Errorf("a 500 is not ErrNotFound")
	}
	if _, err := os.Stat(filepath.Join(c.CacheDir, id)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("entry dir left behind: %v", err)
	}
	// Mixed answers: not ErrNotFound, and no negative entry.
	s404 := newServer(t, files(nil))
	c.URLs = []string{s404.URL, s.URL}
	r = c.Fetch(context.Background(), "debuginfo", []string{id})[0]
	if r.Err == nil || errors.Is(r.Err, ErrNotFound) || !strings.Contains(r.Err.Error(), "not found (404)") {
		t.Errorf("404 and 500: %v", r.Err)
	}
	if l := listCache(t, c.CacheDir); len(slices.DeleteFunc(l, func(s string) bool { return s == "" })) != 0 {
		t.Errorf("cache holds %q", l)
	}
}
