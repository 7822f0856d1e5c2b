//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/pyattach/pyattach/venv/environ"
)

// TestResolveBuildIDCache: resolve of a process writes its modules'
// build-ids to $XDG_CACHE_HOME/pyattach/buildids, and the next run takes
// them from there (an entry changed in place is what it reports, its key
// being the file's); resolve -v says how long each step took.
func TestResolveBuildIDCache(t *testing.T) {
	py := testenv.Need(t, testenv.DebianPath)
	pid := strconv.Itoa(testenv.StartPython(t, py, ""))
	env := environ.Env(testEnv(t))
	run := func(args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Main(args, nil, &stdout, &stderr, env); code != 0 {
			t.Fatalf("pyattach %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	// runJSONEnv would give each run directories of its own.
	resolveJSON := func() *target.Result {
		t.Helper()
		out, _ := run("resolve", "--json", pid)
		var r target.Result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("bad JSON: %v\n%s", err, out)
		}
		return &r
	}
	r := resolveJSON()
	cacheFile := filepath.Join(env.Dirs().CacheHome, "pyattach", "buildids")
	b, err := os.ReadFile(cacheFile)
	if err != nil {
		t.Fatalf("resolve left no build-id cache: %v", err)
	}
	if len(r.Modules) == 0 {
		t.Fatal("no modules")
	}
	var mod string
	for _, m := range r.Modules {
		if m.BuildID == "" {
			continue
		}
		if !bytes.Contains(b, []byte(" "+m.BuildID+"\n")) {
			t.Errorf("the cache lacks %s's build-id %s:\n%s", m.Path, m.BuildID, b)
		}
		if strings.Contains(filepath.Base(m.Path), "libc.so") {
			mod = m.BuildID
		}
	}
	if mod == "" {
		t.Fatalf("no libc among the modules: %+v", r.Modules)
	}
	// The same key with another build-id: the cache, not the file, answers.
	const other = "0123456789abcdef0123456789abcdef01234567"
	if err := os.WriteFile(cacheFile, bytes.ReplaceAll(b, []byte(mod), []byte(other)), 0o600); err != nil {
		t.Fatal(err)
	}
	r = resolveJSON()
	found := false
	for _, m := range r.Modules {
		if strings.Contains(filepath.Base(m.Path), "libc.so") {
			found = m.BuildID == other
		}
	}
	if !found {
		t.Errorf("the second run read libc again instead of taking its cached build-id")
	}
	// A cache others may write is not read: the file answers again.
	if err := os.Chmod(cacheFile, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, m := range resolveJSON().Modules {
		if strings.Contains(filepath.Base(m.Path), "libc.so") && m.BuildID != mod {
			t.Errorf("a world-writable cache was read: libc's build-id %s, the file's %s", m.BuildID, mod)
		}
	}

	_, stderr := run("resolve", "-v", pid)
	for _, want := range []string{"start-up before main", "/proc/PID/maps:", "the executable: ELF and Python facts", "the modules' build-ids:", "since main"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("resolve -v does not say %q:\n%s", want, stderr)
		}
	}
}
