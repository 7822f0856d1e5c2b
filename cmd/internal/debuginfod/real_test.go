package debuginfod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// The tests in this file run elfutils: a real debuginfod server and
// debuginfod-find, sharing a cache with the Client.

// fixture is a C program built with gcc -g, split into a stripped
// executable and its debug file.
type fixture struct {
	src, exe, debug, buildID string
}

// buildFixture compiles a program printing msg in dir:
//
//	gcc -g -Wl,--build-id -o NAME NAME.c
//	objcopy --only-keep-debug NAME NAME.debug
//	strip -g NAME
func buildFixture(t testing.TB, dir, name, msg string) fixture {
	t.Helper()
	src := fmt.Sprintf("#include <stdio.h>\nint main(void) { puts(%q); return 0; }\n", msg)
	f := fixture{src: filepath.Join(dir, name+".c"), debug: filepath.Join(dir, name+".debug")}
	f.exe = testenv.CC(t, dir, name, src, "-g", "-O0", "-Wl,--build-id")
	testenv.SplitDebug(t, f.exe, f.debug)
	var err error
	if f.buildID, err = elfinfo.ReadBuildIDFile(f.debug); err != nil {
		t.Fatal(err)
	}
	if id, err := elfinfo.ReadBuildIDFile(f.exe); err != nil || id != f.buildID {
		t.Fatalf("build-ids: %s %v, debug file %s", id, err, f.buildID)
	}
	return f
}

// freePort returns a TCP port on 127.0.0.1 nobody listens on, now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a child's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startDebuginfod runs `debuginfod -F dir` on a free port and waits until
// it serves buildID's debuginfo. It is killed when the test ends.
func startDebuginfod(t testing.TB, dir, buildID string) string {
	t.Helper()
	bin := testenv.Need(t, "debuginfod")
	db := filepath.Join(t.TempDir(), "debuginfod.sqlite")
	var (
		cmd *exec.Cmd
		log lockedBuffer
		url string
	)
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		url = fmt.Sprintf("http://127.0.0.1:%d", port)
		cmd = exec.Command(bin, "-F", dir, "-p", fmt.Sprint(port), "-d", db)
		cmd.Stdout, cmd.Stderr = &log, &log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		})
		if waitServing(url+"/buildid/"+buildID+"/debuginfo", exited, 30*time.Second) {
			return url
		}
		select {
		case <-exited:
			// Lost the port to someone else? Try another, once.
			if attempt == 0 {
				continue
			}
		default:
		}
		t.Fatalf("debuginfod did not serve %s within 30s:\n%s", buildID, log.String())
	}
}

func waitServing(url string, exited <-chan struct{}, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// debuginfodFind runs debuginfod-find with DEBUGINFOD_URLS=urls and the
// cache; it returns the path it prints.
func debuginfodFind(t testing.TB, urls, cache string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(testenv.Need(t, "debuginfod-find"), args...)
	cmd.Env = append(withoutKey(os.Environ(), "DEBUGINFOD_PROGRESS"),
		"DEBUGINFOD_URLS="+urls, "DEBUGINFOD_CACHE_PATH="+cache, "DEBUGINFOD_RETRY_LIMIT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("debuginfod-find %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// withoutKey drops KEY=... entries from env.
func withoutKey(env []string, key string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return out
}

func TestRealDebuginfod(t *testing.T) {
	for _, tool := range []string{"debuginfod", "debuginfod-find", "gcc", "objcopy", "strip"} {
		testenv.Need(t, tool)
	}
	work := t.TempDir()
	srv := filepath.Join(work, "srv")
	os.Mkdir(srv, 0o755)
	hello := buildFixture(t, srv, "hello", "hello")
	other := buildFixture(t, work, "other", "another program")
	url := startDebuginfod(t, srv, hello.buildID)
	// An address nobody answers on: debuginfod-find 0.188 does not even
	// look in its cache when DEBUGINFOD_URLS is empty, so "offline" is a
	// dead server.
	dead := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))

	cache := filepath.Join(work, "cache")
	c := &Client{URLs: []string{url}, CacheDir: cache, Timeout: 30 * time.Second}
	ctx := context.Background()

	// The Client fetches; debuginfod-find finds it in the cache.
	r := c.Fetch(ctx, KindDebuginfo, []string{hello.buildID})[0]
	if r.Err != nil || r.FromCache || r.Server != url {
		t.Fatalf("Fetch: %+v", r)
	}
	want, _ := os.ReadFile(hello.debug)
	if got, _ := os.ReadFile(r.Path); !bytes.Equal(got, want) {
		t.Errorf("fetched %d bytes, not the %d of %s", len(got), len(want), hello.debug)
	}
	if p, err := debuginfodFind(t, dead, cache, "debuginfo", hello.buildID); err != nil || p != r.Path {
		t.Errorf("debuginfod-find offline: %q, %v; want %q", p, err, r.Path)
	}

	// A source file, in elfutils' naming.
	sp, err := c.FetchSource(ctx, hello.buildID, hello.src)
	if err != nil {
		t.Fatalf("FetchSource: %v", err)
	}
	if b, _ := os.ReadFile(sp); !strings.Contains(string(b), `puts("hello")`) {
		t.Errorf("source %s: %q", sp, b)
	}
	if p, err := debuginfodFind(t, dead, cache, "source", hello.buildID, hello.src); err != nil || p != sp {
		t.Errorf("debuginfod-find source offline: %q, %v; want %q", p, err, sp)
	}

	// debuginfod-find fetches; the Client finds it in the cache.
	p, err := debuginfodFind(t, url, cache, "executable", hello.buildID)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Cached(hello.buildID, KindExecutable); !ok || got != p {
		t.Errorf("Cached executable = %q, %v; debuginfod-find wrote %q", got, ok, p)
	}
	c2 := &Client{CacheDir: cache} // no servers: the cache only
	if r := c2.Fetch(ctx, KindExecutable, []string{hello.buildID})[0]; r.Err != nil || !r.FromCache || r.Path != p {
		t.Errorf("Fetch from debuginfod-find's entry: %+v", r)
	}
	if sp2, err := c2.FetchSource(ctx, hello.buildID, hello.src); err != nil || sp2 != sp {
		t.Errorf("FetchSource from cache: %q, %v", sp2, err)
	}

	// A miss: debuginfod-find and the Client honour each other's negative
	// entries. The Client's (mode 0000) stops debuginfod-find from asking
	// a server that has the file.
	missing := newServer(t, files(nil))
	cacheNeg := filepath.Join(work, "cache-neg")
	cn := &Client{URLs: []string{missing.URL}, CacheDir: cacheNeg}
	if r := cn.Fetch(ctx, KindDebuginfo, []string{hello.buildID})[0]; !errors.Is(r.Err, ErrNotFound) {
		t.Fatalf("Fetch from a 404 server: %v", r.Err)
	}
	if p, err := debuginfodFind(t, url, cacheNeg, "debuginfo", hello.buildID); err == nil {
		t.Errorf("debuginfod-find ignored the negative entry: found %s", p)
	}
	if _, err := debuginfodFind(t, missing.URL, cacheNeg, "debuginfo", other.buildID); err == nil {
		t.Errorf("debuginfod-find found %s", other.buildID)
	}
	before := missing.requests.Load()
	if r := cn.Fetch(ctx, KindDebuginfo, []string{other.buildID})[0]; !errors.Is(r.Err, ErrNotFound) || missing.requests.Load() != before {
		t.Errorf("Fetch after debuginfod-find's miss: %v, %d requests", r.Err, missing.requests.Load()-before)
	}

	// A server sending another program's debug file is refused.
	otherDebug, _ := os.ReadFile(other.debug)
	liar := newServer(t, files(map[string][]byte{hello.buildID: otherDebug}))
	cl := &Client{URLs: []string{liar.URL}, CacheDir: filepath.Join(work, "cache-liar")}
	r = cl.Fetch(ctx, KindDebuginfo, []string{hello.buildID})[0]
	if !errors.Is(r.Err, ErrWrongBuildID) || !strings.Contains(r.Err.Error(), other.buildID) {
		t.Errorf("Fetch from a lying server: %v", r.Err)
	}
	if l := listCache(t, cl.CacheDir); len(l) != 0 {
		t.Errorf("cache holds %q", l)
	}
}
