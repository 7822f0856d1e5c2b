package debuginfod

import (
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/testenv"
)

// makeELF returns a minimal little-endian ELF64 file: a header, one
// PT_NOTE program header and a GNU build-id note with id (hex), then pad
// bytes of zeros. It is all elfinfo.ReadBuildID needs.
func makeELF(t testing.TB, id string, pad int) []byte {
	t.Helper()
	desc, err := hex.DecodeString(id)
	if err != nil {
		t.Fatal(err)
	}
	descLen := (len(desc) + 3) &^ 3
	note := make([]byte, 12+4+descLen)
	le := binary.LittleEndian
	le.PutUint32(note[0:], 4)
	le.PutUint32(note[4:], uint32(len(desc)))
	le.PutUint32(note[8:], 3) // NT_GNU_BUILD_ID
	copy(note[12:], "GNU\x00")
	copy(note[16:], desc)

	const ehsize, phsize = 64, 56
	b := make([]byte, ehsize+phsize, ehsize+phsize+len(note)+pad)
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = 2, 1, 1 // ELFCLASS64, little-endian, EV_CURRENT
	le.PutUint16(b[16:], 2)    // ET_EXEC
	le.PutUint16(b[18:], 62)   // EM_X86_64
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[32:], ehsize) // e_phoff
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[54:], phsize)
	le.PutUint16(b[56:], 1) // e_phnum
	le.PutUint16(b[58:], 64)
	ph := b[ehsize:]
	le.PutUint32(ph[0:], 4) // PT_NOTE
	le.PutUint32(ph[4:], 4) // PF_R
	le.PutUint64(ph[8:], ehsize+phsize)
	le.PutUint64(ph[32:], uint64(len(note)))
	le.PutUint64(ph[40:], uint64(len(note)))
	le.PutUint64(ph[48:], 4)
	b = append(b, note...)
	return append(b, make([]byte, pad)...)
}

// fakeID returns a distinct 20-byte build-id for n.
func fakeID(n int) string {
	return strings.Repeat("ab", 18) + hex.EncodeToString([]byte{byte(n >> 8), byte(n)})
}

// server is a fake debuginfod server on 127.0.0.1.
// fakeELFs makes n build-ids from fakeID(first) on and, for each, a
// makeELF file with pad(i) bytes of padding.
func fakeELFs(t testing.TB, first, n int, pad func(i int) int) ([]string, map[string][]byte) {
	t.Helper()
	var ids []string
	m := map[string][]byte{}
	for i := range n {
		id := fakeID(first + i)
		ids = append(ids, id)
		m[id] = makeELF(t, id, pad(i))
	}
	return ids, m
}

// slowServer serves the files of m, each after 50 ms.
func slowServer(t testing.TB, m map[string][]byte) *server {
	t.Helper()
	serve := files(m)
	return newServer(t, func(w http.ResponseWriter, r *http.Request, id, rest string) {
		time.Sleep(50 * time.Millisecond)
		serve(w, r, id, rest)
	})
}

type server struct {
	*httptest.Server
	requests atomic.Int64
	inFlight atomic.Int64
	peak     atomic.Int64
	mu       sync.Mutex
	paths    []string
}

// newServer serves handle for /buildid/<id>/<rest>; it counts requests and
// how many run at once.
func newServer(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, id, rest string)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for {
			p := s.peak.Load()
			if n <= p || s.peak.CompareAndSwap(p, n) {
				break
			}
		}
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.EscapedPath())
		s.mu.Unlock()
		rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/buildid/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		id, rest, _ := strings.Cut(rest, "/")
		handle(w, r, id, rest)
	}))
	t.Cleanup(s.Close)
	return s
}

// files serves the given build-id -> content map for debuginfo, with
// a Last-Modified date.
func files(m map[string][]byte) func(w http.ResponseWriter, r *http.Request, id, rest string) {
	return func(w http.ResponseWriter, r *http.Request, id, rest string) {
		b, ok := m[id]
		if !ok || rest != "debuginfo" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Last-Modified", lastModified.UTC().Format(http.TimeFormat))
		w.Write(b)
	}
}

var lastModified = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// testClient is a Client for urls with a fresh cache.
func testClient(t testing.TB, urls ...string) *Client {
	t.Helper()
	return &Client{URLs: urls, CacheDir: filepath.Join(t.TempDir(), "cache"), Timeout: 10 * time.Second}
}

// listCache returns every path under dir, relative, with "/" after
// directories.
func listCache(t testing.TB, dir string) []string {
	t.Helper()
	return testenv.ListTree(t, dir)
}

// assertNoTemp fails when a temporary file is left in dir.
func assertNoTemp(t testing.TB, dir string) {
	t.Helper()
	for _, p := range listCache(t, dir) {
		if strings.Contains(p, ".pyattach-tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
	}
}
