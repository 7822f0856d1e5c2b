package extfetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/pyext"
	"github.com/pyattach/pyattach/detect/testenv"
)

const fakeLibpython = testenv.FakeLibpython

// fetchedInput is an Input whose only place to look is cache (gdb's
// data and debug directories are empty directories under dir), for an
// interpreter of version 3.12.1 that the user running the test owns.
func fetchedInput(dir, cache string) pyext.Input {
	return pyext.Input{
		Interpreter: "/nonexistent/bin/python3.12",
		Version:     "3.12.1",
		CacheDir:    cache,
		DataDirs:    []string{filepath.Join(dir, "gdb-data")},
		DebugDirs:   []string{filepath.Join(dir, "debug")},
		UID:         os.Getuid(),
	}
}

// expectFetched fails unless FindGDB picks the fetched copy at path.
func expectFetched(t *testing.T, in pyext.Input, path string) {
	t.Helper()
	got, tried, err := pyext.FindGDB(in)
	if err != nil || got == nil {
		t.Fatalf("FindGDB: %v; tried:\n%s", err, strings.Join(tried, "\n"))
	}
	if got.Path != path || got.Version != "3.12.1" || got.Source != pyext.SourceFetched || !got.VersionMatch || len(got.Warnings) != 0 {
		t.Errorf("got %+v\nwant the fetched %s, version 3.12.1, matching", got, path)
	}
}

// cpythonServer serves fakeLibpython at /v3.12.1/Tools/gdb/libpython.py
// and other bodies at the paths in extra; everything else is a 404.
func cpythonServer(t *testing.T, extra map[string]http.HandlerFunc) (*httptest.Server, *[]string) {
	t.Helper()
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if h, ok := extra[r.URL.Path]; ok {
			h(w, r)
			return
		}
		if r.URL.Path == "/python/cpython/v3.12.1/Tools/gdb/libpython.py" {
			w.Write([]byte(fakeLibpython))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &paths
}

// assertEmpty fails unless dir holds nothing at all.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind in %s: %s", dir, e.Name())
	}
}

func TestFetch(t *testing.T) {
	srv, paths := cpythonServer(t, nil)
	cache := t.TempDir()
	got, err := Fetch(context.Background(), srv.Client(), srv.URL+"/python/cpython/", "3.12.1", cache)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "extensions", "3.12.1", "libpython.py")
	if got != want {
		t.Errorf("path %q, want %q", got, want)
	}
	if (*paths)[0] != "/python/cpython/v3.12.1/Tools/gdb/libpython.py" {
		t.Errorf("requested %q", *paths)
	}
	data, err := os.ReadFile(got)
	if err != nil || string(data) != fakeLibpython {
		t.Errorf("content %q, %v", data, err)
	}
	st, _ := os.Stat(got)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if got := testenv.ListTree(t, filepath.Dir(got)); strings.Join(got, " ") != "libpython.py libpython.py.sha256" {
		t.Errorf("cache dir holds %q, want the extension and its SHA-256", got)
	}
	pin, _ := os.ReadFile(want + ".sha256")
	if sum := sha256.Sum256([]byte(fakeLibpython)); string(pin) != hex.EncodeToString(sum[:])+"\n" {
		t.Errorf("recorded SHA-256 %q, want that of the content", pin)
	}

	// FindGDB finds it in the cache, for a foreign target too.
	in := fetchedInput(t.TempDir(), cache)
	expectFetched(t, in, want)
	in.Foreign = true
	expectFetched(t, in, want)
}

// TestFetchedPinned: a cached extension whose content no longer has the
// SHA-256 recorded when it was fetched is refused; one without a record
// (an older pyattach's) serves a target of the user's own, never a
// foreign one.
func TestFetchedPinned(t *testing.T) {
	srv, _ := cpythonServer(t, nil)
	cache := t.TempDir()
	got, err := Fetch(context.Background(), srv.Client(), srv.URL+"/python/cpython/", "3.12.1", cache)
	if err != nil {
		t.Fatal(err)
	}
	in := fetchedInput(t.TempDir(), cache)
	testenv.WriteFile(t, got, []byte(fakeLibpython+"import os; os.system('id')\n"), 0o644)
	for _, foreign := range []bool{false, true} {
		in.Foreign = foreign
		found, tried, _ := pyext.FindGDB(in)
		if found != nil {
			t.Errorf("foreign=%v: changed copy used: %+v", foreign, found)
		}
		if !strings.Contains(strings.Join(tried, "\n"), got+": refused: its SHA-256 is") {
			t.Errorf("foreign=%v: tried does not say why:\n%s", foreign, strings.Join(tried, "\n"))
		}
	}
	if err := os.Remove(got + ".sha256"); err != nil {
		t.Fatal(err)
	}
	in.Foreign = false
	expectFetched(t, in, got)
	in.Foreign = true
	if found, tried, _ := pyext.FindGDB(in); found != nil || !strings.Contains(strings.Join(tried, "\n"), "no SHA-256 was recorded") {
		t.Errorf("foreign target, no record: found %+v, tried:\n%s", found, strings.Join(tried, "\n"))
	}
}

func TestFetchFailures(t *testing.T) {
	big := strings.Repeat("#", pyext.MaxFetchSize+10)
	srv, _ := cpythonServer(t, map[string]http.HandlerFunc{
		"/v3.12.2/Tools/gdb/libpython.py": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<!DOCTYPE html><html><body>Rate limited</body></html>"))
		},
		"/v3.12.3/Tools/gdb/libpython.py": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(fakeLibpython)+len(big)))
			w.Write([]byte(fakeLibpython + big))
		},
		"/v3.12.4/Tools/gdb/libpython.py": func(w http.ResponseWriter, r *http.Request) {
			// Chunked: no Content-Length to refuse early.
			w.Write([]byte(fakeLibpython))
			w.(http.Flusher).Flush()
			w.Write([]byte(big))
		},
		"/v3.12.5/Tools/gdb/libpython.py": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		},
	})
	for _, tc := range []struct {
		version, want string
		is            error
	}{
		{"3.99.0", "CPython has no tag v3.99.0", ErrNoSuchVersion},
		{"3.12.2", "not CPython's libpython.py", nil},
		{"3.12.3", "more than the 4194304 allowed", nil},
		{"3.12.4", "more than the 4194304 bytes allowed", nil},
		{"3.12.5", "500 Internal Server Error", nil},
		{"3.12", "a CPython tag needs major.minor.micro", ErrInvalidVersion},
		{"3.13.0+", "a CPython tag needs major.minor.micro", ErrInvalidVersion},
		{"../../etc/3.1.1", "a CPython tag needs major.minor.micro", ErrInvalidVersion},
	} {
		t.Run(tc.version, func(t *testing.T) {
			cache := t.TempDir()
			got, err := Fetch(context.Background(), srv.Client(), srv.URL, tc.version, cache)
			if err == nil {
				t.Fatalf("Fetch = %q, want an error", got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", err, tc.is)
			}
			if strings.Contains(tc.want, "tag v") && !strings.Contains(err.Error(), srv.URL+"/v"+tc.version) {
				t.Errorf("error %q does not name the URL", err)
			}
			assertEmpty(t, cache)
		})
	}
}

func TestFetchCancelMidBody(t *testing.T) {
	sent := make(chan struct{})
	srv, _ := cpythonServer(t, map[string]http.HandlerFunc{
		"/v3.11.9/Tools/gdb/libpython.py": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100000")
			w.Write([]byte(fakeLibpython))
			w.(http.Flusher).Flush()
			close(sent)
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		},
	})
	cache := filepath.Join(t.TempDir(), "cache") // Fetch makes it
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sent
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	_, err := Fetch(ctx, srv.Client(), srv.URL, "3.11.9", cache)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("cache dir left behind: %v", err)
	}
}

func TestFetchNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	_, err := Fetch(context.Background(), nil, url, "3.12.1", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), url+"/v3.12.1/Tools/gdb/libpython.py") {
		t.Errorf("error %v does not name the URL", err)
	}
}

func TestFetchUnwritableCache(t *testing.T) {
	srv, _ := cpythonServer(t, nil)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	_, err := Fetch(context.Background(), srv.Client(), srv.URL+"/python/cpython", "3.12.1", filepath.Join(file, "cache"))
	if err == nil {
		t.Fatal("no error for a cache under a file")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestSecurityBaseURL: what Fetch downloads is sourced by every later
// gdb run, so only https, or http that never leaves the machine.
func TestSecurityBaseURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://raw.githubusercontent.com/python/cpython", true},
		{"https://mirror.example.org:8443/cpython/", true},
		{"http://127.0.0.1:8080/cpython", true},
		{"http://127.5.6.7/cpython", true},
		{"http://[::1]:80/cpython", true},
		{"http://localhost:9000", true},
		{"http://LOCALHOST/x", true},
		{"http://example.org/cpython", false},
		{"http://10.0.0.1/cpython", false},
		{"http://localhost.example.org/x", false},
		{"http://127.0.0.1.example.org/x", false},
		{"http://[::ffff:10.0.0.1]/x", false},
		{"ftp://example.org/x", false},
		{"file:///srv/cpython", false},
		{"https:///nohost", false},
		{"example.org/cpython", false},
		{"", false},
	} {
		err := CheckBaseURL(tc.url)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInsecureURL)) {
			t.Errorf("CheckBaseURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
	if err := CheckBaseURL("http://example.org/cpython"); err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Errorf("http error %v does not say why", err)
	}

	// Fetch refuses before asking anyone; nothing lands in the cache.
	cache := t.TempDir()
	if _, err := Fetch(context.Background(), nil, "http://example.org/cpython", "3.12.1", cache); !errors.Is(err, ErrInsecureURL) {
		t.Errorf("Fetch over http: %v", err)
	}
	assertEmpty(t, cache)

	// A loopback server may not redirect to a plain http host elsewhere.
	srv, _ := cpythonServer(t, map[string]http.HandlerFunc{
		"/redir/v3.12.1/Tools/gdb/libpython.py": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.invalid/v3.12.1/Tools/gdb/libpython.py", http.StatusFound)
		},
	})
	if _, err := Fetch(context.Background(), srv.Client(), srv.URL+"/redir", "3.12.1", cache); !errors.Is(err, ErrInsecureURL) {
		t.Errorf("Fetch through a redirect to http: %v", err)
	}
	assertEmpty(t, cache)
}
