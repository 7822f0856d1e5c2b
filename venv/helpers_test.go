package venv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// buildID returns the build-id of path, failing the test without one.
func buildID(t testing.TB, path string) string {
	t.Helper()
	id, err := elfinfo.ReadBuildIDFile(path)
	if err != nil || id == "" {
		t.Fatalf("build-id of %s: %q, %v", path, id, err)
	}
	return id
}

// writeFile writes content to path, creating directories.
func writeFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	testenv.WriteFile(t, path, []byte(content), mode)
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// isolated returns Options that see no PATH, an empty HOME and no system
// directories, so that only what a test builds can be found.
func isolated(t testing.TB) Options {
	home := t.TempDir()
	return Options{Env: []string{"HOME=" + home, "PATH="}, SystemDirs: []string{}}
}

// realOf resolves path's symlinks.
func realOf(t testing.TB, path string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
