package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/testenv"
)

// hostileDebuginfod answers every build-id with an endless body: with
// length > 0 it announces that Content-Length, else none.
func hostileDebuginfod(t *testing.T, length int64) *httptest.Server {
	chunk := bytes.Repeat([]byte{0x7f}, 64<<10)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/buildid/") {
			http.NotFound(w, r)
			return
		}
		if length > 0 {
			w.Header().Set("Content-Length", fmt.Sprint(length))
		}
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// pyattach debuginfo against a debuginfod server that sends
// an endless answer (1 TiB announced, or no length at all) stops at the
// download limit: a one-line warning naming the build-id and the server
// with a hint, the module listed without debug information (the other
// modules' findings stand), exit status 1 with a closing error line, and
// nothing in the cache.
func TestSecurityDebuginfodEndless(t *testing.T) {
	prog := copyTrue(t)
	for _, tc := range []struct {
		name    string
		length  int64
		maxsize string // DEBUGINFOD_MAXSIZE, "" for unset
		msg     string
		hint    string
	}{
		{"1 TiB announced, default limit", 1 << 40, "",
			"larger than the download limit: it announces 1099511627776 bytes, the limit is 2147483648 (DEBUGINFOD_MAXSIZE)",
			"  hint: no real debug file is this large; if you trust the server, raise the limit: export DEBUGINFOD_MAXSIZE=BYTES (0: none)\n"},
		{"no length, DEBUGINFOD_MAXSIZE", 0, "1048576",
			"larger than the download limit: it sent more than 1048576 bytes (DEBUGINFOD_MAXSIZE)",
			"  hint: no real debug file is this large; if you trust the server, raise the limit: export DEBUGINFOD_MAXSIZE=BYTES (0: none)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := hostileDebuginfod(t, tc.length)
			cache := filepath.Join(t.TempDir(), "cache")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, pyattachBin(t), "debuginfo", prog)
			cmd.Env = debuginfodEnv(t.TempDir(), srv.URL, cache, "")
			if tc.maxsize != "" {
				cmd.Env = append(cmd.Env, "DEBUGINFOD_MAXSIZE="+tc.maxsize)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
				t.Fatalf("pyattach debuginfo: %v (want exit status 1); stderr:\n%s", err, &stderr)
			}
			t.Logf("stderr:\n%s", &stderr)
			lines := strings.SplitAfter(stderr.String(), "\n")
			if len(lines) != 4 || lines[3] != "" ||
				lines[2] != "pyattach: error: debuginfo "+prog+": 1 debuginfod download(s) stopped by a bound (warned above); nothing of them was kept\n" ||
				!strings.HasPrefix(lines[0], "pyattach: warning: debuginfo ") ||
				!strings.Contains(lines[0], ": server "+srv.URL+": "+tc.msg+"\n") ||
				lines[1] != tc.hint {
				t.Errorf("stderr:\n%s\nwant one warning naming the build-id, the server and %q, then the hint %q", &stderr, tc.msg, tc.hint)
			}
			if !strings.Contains(stdout.String(), prog) || !strings.Contains(stdout.String(), "debuginfod: debuginfo ") {
				t.Errorf("stdout does not list %s with the failed download:\n%s", prog, &stdout)
			}
			if l := testenv.ListTree(t, cache); len(l) != 0 {
				t.Errorf("cache holds %q", l)
			}
		})
	}
}
