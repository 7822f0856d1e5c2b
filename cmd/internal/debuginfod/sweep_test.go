package debuginfod

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
)

// A temporary file left in an entry's directory by a killed run (its
// writer's pid no longer runs) is swept by the next Fetch of that
// build-id, also when the cache already holds the file; a live writer's
// is left alone. (Issue 9, class 9.)
func TestSecuritySweepStaleTemp(t *testing.T) {
	id := fakeID(1)
	srv := newServer(t, files(map[string][]byte{id: makeELF(t, id, 10)}))
	c := testClient(t, srv.URL)
	dir := filepath.Join(c.CacheDir, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(dir, safefs.TempPrefix+strconv.Itoa(dead.Process.Pid)+"-0123")
	live := filepath.Join(dir, safefs.TempPrefix+strconv.Itoa(os.Getpid())+"-4567")
	os.WriteFile(stale, []byte("half a download"), 0o600)
	os.WriteFile(live, []byte("a download under way"), 0o600)

	for range 2 { // a download, then a cache hit
		os.WriteFile(stale, []byte("half a download"), 0o600)
		r := c.Fetch(context.Background(), "debuginfo", []string{id})
		if r[0].Err != nil {
			t.Fatal(r[0].Err)
		}
		if _, err := os.Lstat(stale); !os.IsNotExist(err) {
			t.Errorf("stale temporary file of a dead pid kept (cache hit %v): %v", r[0].FromCache, err)
		}
		if _, err := os.Lstat(live); err != nil {
			t.Errorf("a live writer's temporary file removed: %v", err)
		}
	}
}
