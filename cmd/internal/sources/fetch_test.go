package sources

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/srcmap"
)

// fakeFetcher serves every file from a local copy; missing files fail.
type fakeFetcher struct {
	cache, sources string
	asked          []string
}

func (f *fakeFetcher) FetchSource(_ context.Context, id, p string) (string, error) {
	f.asked = append(f.asked, id+" "+p)
	c := filepath.Join(f.cache, filepath.Base(p))
	if _, err := os.Stat(c); err != nil {
		return "", errors.New("not served")
	}
	return c, nil
}

func (f *fakeFetcher) SourcesDir() (string, error) { return f.sources, nil }

// TestFetchGroupSources: fetched files are laid out under the cache as
// recorded, one rule maps the group's prefix onto them, and a recorded
// ".." never climbs out of the cache.
func TestFetchGroupSources(t *testing.T) {
	f := &fakeFetcher{cache: t.TempDir(), sources: t.TempDir()}
	for _, n := range []string{"ceval.c", "escape.c"} {
		if err := os.WriteFile(filepath.Join(f.cache, n), []byte("/* "+n+" */\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const id = "c561f3aa7232f2bd"
	g := srcmap.Group{Prefix: "/build/cpython", Files: []string{
		"/build/cpython/Python/ceval.c",
		"/build/cpython/../../../../escape.c",
		"/build/cpython/Objects/missing.c",
	}}
	owner := map[string]string{}
	for _, p := range g.Files {
		owner[p] = id
	}
	r, ok := fetchGroupSources(context.Background(), f, g, owner)
	base := filepath.Join(f.sources, id)
	if !ok || r.From != "/build/cpython" || r.To != filepath.Join(base, "build", "cpython") || r.Resolved != 2 || r.Total != 3 || r.Via != "debuginfod" {
		t.Fatalf("rule %+v, %v", r, ok)
	}
	if b, err := os.ReadFile(filepath.Join(r.To, "Python", "ceval.c")); err != nil || !strings.Contains(string(b), "ceval.c") {
		t.Errorf("ceval.c not laid out under %s: %v", r.To, err)
	}
	if b, err := os.ReadFile(filepath.Join(base, "escape.c")); err != nil || !strings.Contains(string(b), "escape.c") {
		t.Errorf("a recorded .. climbed out of the cache: %v", err)
	}

	// No module's build-id names the files, or a bad one: nothing asked.
	f.asked = nil
	for _, o := range []map[string]string{{}, {g.Files[0]: "../x"}} {
		if _, ok := fetchGroupSources(context.Background(), f, g, o); ok || len(f.asked) != 0 {
			t.Errorf("owner %v: fetched %q", o, f.asked)
		}
	}
}
