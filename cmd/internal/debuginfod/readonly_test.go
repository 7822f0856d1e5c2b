package debuginfod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// In its helper mode "fetch", run as another user, the test binary
// fetches helperIDEnv from helperURLEnv into helperCacheEnv and prints a
// helperResult.
const (
	helperURLEnv   = "PYATTACH_DEBUGINFOD_TEST_URL"
	helperCacheEnv = "PYATTACH_DEBUGINFOD_TEST_CACHE"
	helperIDEnv    = "PYATTACH_DEBUGINFOD_TEST_ID"
)

func TestMain(m *testing.M) {
	testenv.HelperMain(m, "fetch", helperFetch)
}

type helperResult struct {
	UID         int
	Err         string
	NotWritable bool
}

func helperFetch() int {
	c := &Client{URLs: []string{os.Getenv(helperURLEnv)}, CacheDir: os.Getenv(helperCacheEnv)}
	r := c.Fetch(context.Background(), KindDebuginfo, []string{os.Getenv(helperIDEnv)})[0]
	out := helperResult{UID: os.Getuid(), Err: fmt.Sprint(r.Err), NotWritable: errors.Is(r.Err, ErrCacheNotWritable)}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// TestCacheReadOnlyAsNobody runs a fetch as nobody into a cache directory
// of mode 0555 (root bypasses the mode, so root cannot test it itself).
func TestCacheReadOnlyAsNobody(t *testing.T) {
	testenv.NeedRoot(t, "to run the fetch as nobody (root bypasses the mode)")
	id := fakeID(30)
	s := newServer(t, files(map[string][]byte{id: makeELF(t, id, 0)}))

	// A directory nobody can enter, holding the test binary and the cache.
	dir, asNobody := testenv.Nobody(t)
	cache := filepath.Join(dir, "cache")
	for _, d := range []string{cache, filepath.Join(cache, fakeID(31))} {
		if err := os.Mkdir(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct{ name, id string }{
		{"no entry dir", id},
		{"read-only entry dir", fakeID(31)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := asNobody(testenv.HelperEnv+"=fetch", helperURLEnv+"="+s.URL, helperCacheEnv+"="+cache, helperIDEnv+"="+tc.id)
			var r helperResult
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("helper output %q: %v", out, err)
			}
			if r.UID != 65534 {
				t.Fatalf("helper ran as uid %d", r.UID)
			}
			t.Log(r.Err)
			want := "cache dir " + cache
			if !r.NotWritable || !strings.Contains(r.Err, want) || !strings.Contains(r.Err, "is not writable: ") || !strings.Contains(r.Err, "permission denied") {
				t.Errorf("as nobody: %q, want ErrCacheNotWritable naming %s", r.Err, cache)
			}
		})
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("%d requests: fetched with nowhere to put it", n)
	}
}
