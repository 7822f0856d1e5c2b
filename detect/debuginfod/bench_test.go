package debuginfod

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkFetch32 fetches 32 build-ids into a fresh cache from a server
// that takes 50 ms per request: about 32/Parallel rounds of 50 ms.
func BenchmarkFetch32(b *testing.B) {
	var ids []string
	m := map[string][]byte{}
	for i := range 32 {
		id := fakeID(1000 + i)
		ids = append(ids, id)
		m[id] = makeELF(b, id, 64<<10)
	}
	serve := files(m)
	s := newServer(b, func(w http.ResponseWriter, r *http.Request, id, rest string) {
		time.Sleep(50 * time.Millisecond)
		serve(w, r, id, rest)
	})
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := &Client{URLs: []string{s.URL}, CacheDir: filepath.Join(dir, strconv.Itoa(i)), Timeout: 10 * time.Second}
		for _, r := range c.Fetch(context.Background(), KindDebuginfo, ids) {
			if r.Err != nil || r.FromCache {
				b.Fatalf("%+v", r)
			}
		}
	}
}
