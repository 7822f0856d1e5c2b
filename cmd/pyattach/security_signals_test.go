package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// stallingDebuginfod is a debuginfod-like server on 127.0.0.1 that
// starts every answer (a few KB of a promised 10 MB) and then stalls
// until the client goes away. started is closed when the first answer
// has begun; with notFound set it answers 404 at once instead.
type stallingDebuginfod struct {
	*httptest.Server
	started  chan struct{}
	once     sync.Once
	notFound atomic.Bool
}

func newStallingDebuginfod(t *testing.T) *stallingDebuginfod {
	s := &stallingDebuginfod{started: make(chan struct{})}
	done := make(chan struct{})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.notFound.Load() || !strings.HasPrefix(r.URL.Path, "/buildid/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", "10000000")
		w.Write(bytes.Repeat([]byte{0x7f}, 4096))
		w.(http.Flusher).Flush()
		s.once.Do(func() { close(s.started) })
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(done) }) // runs first: lets the handlers return
	return s
}

// tempFiles lists pyattach's temporary files under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), safefs.TempPrefix) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// checkNoTempFiles fails the test if pyattach left a temporary file
// under dir; what says whose.
func checkNoTempFiles(t *testing.T, dir, what string) {
	t.Helper()
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("%s: %v", what, left)
	}
}

// debuginfodEnv is the test's environment without its DEBUGINFOD_* and
// XDG_* variables (DEBUGINFOD_PROGRESS, even empty, asks for a progress
// bar), with HOME and the XDG directories in home, the server's URL, and
// pathDir (if not "") first on PATH.
func debuginfodEnv(home, url, cache, pathDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok && pathDir != "" {
			kv = "PATH=" + pathDir + ":" + path
		}
		if !strings.HasPrefix(kv, "DEBUGINFOD_") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"DEBUGINFOD_URLS="+url, "DEBUGINFOD_CACHE_PATH="+cache)
}

// startDownloading starts pyattach with args, its environment from
// debuginfodEnv (a new home), and returns once srv has begun to answer.
func startDownloading(t *testing.T, srv *stallingDebuginfod, cache, pathDir string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(pyattachBin(t), args...)
	cmd.Env = debuginfodEnv(t.TempDir(), srv.URL, cache, pathDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	select {
	case <-srv.started:
	case <-time.After(60 * time.Second):
		t.Fatalf("the download never started; stderr:\n%s", &stderr)
	}
	return cmd, &stdout, &stderr
}

// debuginfodRun starts `pyattach debuginfo` on a program whose debug
// file only the server has, and returns once the download is under way
// (its temporary file is in the cache).
func debuginfodRun(t *testing.T, srv *stallingDebuginfod, prog, cache string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd, stdout, stderr := startDownloading(t, srv, cache, "", "debuginfo", prog)
	if len(tempFiles(t, cache)) == 0 {
		t.Fatalf("no temporary file in %s while downloading", cache)
	}
	return cmd, stdout, stderr
}

// copyTrue is a copy of /bin/true: an ELF file with a build-id whose
// debug file no local directory holds.
func copyTrue(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip(err)
	}
	p := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Ctrl-C (SIGINT) or SIGTERM during a debuginfod download: pyattach
// stops with 130 or 143, says so in one line, and leaves no temporary
// file in the cache. (Issue 9, class 9.)
func TestSecuritySignalDebuginfodDownload(t *testing.T) {
	prog := copyTrue(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newStallingDebuginfod(t)
			cache := filepath.Join(t.TempDir(), "cache")
			cmd, stdout, stderr := debuginfodRun(t, srv, prog, cache)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("after %s: %v (exit code %d), want exit code %d; stderr:\n%s", tc.name, err, cmd.ProcessState.ExitCode(), tc.code, stderr)
			}
			if want := "pyattach: interrupted by " + tc.name + "\n"; stderr.String() != want {
				t.Errorf("stderr %q, want the one line %q", stderr, want)
			}
			if stdout.Len() != 0 {
				t.Errorf("a half-filled table on stdout:\n%s", stdout)
			}
			checkNoTempFiles(t, cache, "temporary files left in the cache")
		})
	}
}

// A run killed outright (SIGKILL) cannot clean up; the next run that
// uses the same cache entry sweeps what it left. (Issue 9, class 9.)
func TestSecuritySignalKilledRunSwept(t *testing.T) {
	prog := copyTrue(t)
	srv := newStallingDebuginfod(t)
	cache := filepath.Join(t.TempDir(), "cache")
	cmd, _, _ := debuginfodRun(t, srv, prog, cache)
	cmd.Process.Kill()
	cmd.Wait()
	left := tempFiles(t, cache)
	if len(left) == 0 {
		t.Fatal("SIGKILL left no temporary file: the test proves nothing")
	}
	srv.notFound.Store(true)
	again := exec.Command(pyattachBin(t), "debuginfo", prog)
	again.Env = debuginfodEnv(t.TempDir(), srv.URL, cache, "")
	if out, err := again.CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	checkNoTempFiles(t, cache, "stale temporary files of the killed run kept")
}

// Ctrl-C while pyattach gdb is still fetching debug files stops
// pyattach with 130; the debugger is not started. (Issue 9, class 9.)
func TestSecuritySignalBeforeExec(t *testing.T) {
	prog := pythonNewBuildID(t)
	srv := newStallingDebuginfod(t)
	cache := filepath.Join(t.TempDir(), "cache")
	fake := t.TempDir()
	marker := filepath.Join(t.TempDir(), "gdb-started")
	os.WriteFile(filepath.Join(fake, "gdb"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	cmd, _, stderr := startDownloading(t, srv, cache, fake, "gdb", "--args", prog)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || stderr.String() != "pyattach: interrupted by SIGINT\n" {
		t.Errorf("exit code %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("gdb was started after Ctrl-C")
	}
	checkNoTempFiles(t, cache, "temporary files left")
}

// pythonNewBuildID is a copy of Debian's python3.11 with one byte of its
// build-id changed: still Python, but no local debug file matches it, so
// pyattach asks debuginfod.
func pythonNewBuildID(t *testing.T) string {
	t.Helper()
	py := testenv.Debian(t).Exe
	id, err := elfinfo.ReadBuildIDFile(py)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(id)
	data, err := os.ReadFile(py)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, append([]byte("GNU\x00"), raw...))
	if i < 0 {
		t.Fatalf("build-id %s not found in %s", id, py)
	}
	data[i+4] ^= 0xff
	p := filepath.Join(t.TempDir(), "python3.11")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
