package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debuginfod"
	"github.com/pyattach/pyattach/venv/environ"
)

// TestXDGFromInjectedEnv: pyattach's configuration, trust store and
// caches come from the environment Main is handed, never from the
// process's: a broken config.toml under the process's XDG_CONFIG_HOME
// and HOME is not read, one under the handed XDG_CONFIG_HOME is.
func TestXDGFromInjectedEnv(t *testing.T) {
	proc := t.TempDir()
	for _, d := range []string{filepath.Join(proc, "xdg", "pyattach"), filepath.Join(proc, "home", ".config", "pyattach")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "config.toml"), []byte("bogus = 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(proc, "xdg"))
	t.Setenv("HOME", filepath.Join(proc, "home"))

	handed := t.TempDir()
	env := []string{"HOME=" + handed, "PATH=/usr/bin:/bin"}
	run := func() (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main([]string{"trust", "--list"}, nil, &stdout, &stderr, env)
		return code, stderr.String()
	}
	if code, stderr := run(); code != 0 {
		t.Fatalf("pyattach read the process's configuration: exit %d\n%s", code, stderr)
	}
	own := filepath.Join(handed, "cfg")
	if err := os.MkdirAll(filepath.Join(own, "pyattach"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(own, "pyattach", "config.toml"), []byte("bogus = 1\n"), 0o600)
	env = append(env, "XDG_CONFIG_HOME="+own)
	if code, stderr := run(); code != 2 || !strings.Contains(stderr, "unknown key bogus") {
		t.Fatalf("the handed XDG_CONFIG_HOME's config.toml was not read: exit %d\n%s", code, stderr)
	}
}

// testEnv is the test process's environment with pyattach's XDG
// directories in a temporary directory, for tests that run Main
// in-process: they never read the developer's configuration, trust store
// or symbol store, nor write to their cache. elfutils' debuginfod cache,
// shared with other tools, stays where the process's environment puts it.
func testEnv(t testing.TB) []string {
	t.Helper()
	env := environ.Env(os.Environ())
	cache := debuginfod.CacheDirFromEnv(env, func(p string) bool { _, err := os.Stat(p); return err == nil })
	d := t.TempDir()
	for _, kv := range [][2]string{
		{"XDG_CONFIG_HOME", filepath.Join(d, "config")},
		{"XDG_DATA_HOME", filepath.Join(d, "data")},
		{"XDG_CACHE_HOME", filepath.Join(d, "cache")},
		{"XDG_STATE_HOME", filepath.Join(d, "state")},
		{"XDG_CONFIG_DIRS", filepath.Join(d, "etc-xdg")},
		{"DEBUGINFOD_CACHE_PATH", cache},
	} {
		env = env.With(kv[0], kv[1])
	}
	return env
}
