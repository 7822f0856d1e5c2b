package debuginfod

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkFetch32 fetches 32 build-ids into a fresh cache from a server
// that takes 50 ms per request: about 32/Parallel rounds of 50 ms.
func BenchmarkFetch32(b *testing.B) {
	ids, m := fakeELFs(b, 1000, 32, func(int) int { return 64 << 10 })
	s := slowServer(b, m)
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
