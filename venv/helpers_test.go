package venv

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// inCI reports whether the tests run in CI, where a missing tool is a
// failure rather than a reason to skip.
func inCI() bool { return os.Getenv("CI") == "true" }

// requireTool returns path when it names an executable file (an absolute
// path) or a command on PATH (a bare name). Otherwise it skips the test,
// or fails it in CI.
func requireTool(t testing.TB, path string) string {
	t.Helper()
	p := path
	var err error
	if strings.ContainsRune(path, '/') {
		var fi os.FileInfo
		fi, err = os.Stat(path)
		if err == nil && (!fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0) {
			err = os.ErrPermission
		}
	} else {
		p, err = exec.LookPath(path)
	}
	if err != nil {
		if inCI() {
			t.Fatalf("%s is required in CI: %v", path, err)
		}
		t.Skipf("%s not available: %v", path, err)
	}
	return p
}

// systemPython is Debian's python3.11; venvs made from it resolve to it.
const systemPython = "/usr/bin/python3.11"

// pyenvRoot is the machine's pyenv root ($PYENV_ROOT, else ~/.pyenv).
func pyenvRoot() string {
	if r := os.Getenv("PYENV_ROOT"); r != "" {
		return r
	}
	h, _ := os.UserHomeDir()
	return filepath.Join(h, ".pyenv")
}

// pyenvPython returns $PYENV_ROOT/versions/<xy>.*/bin/python<xy>, the
// newest installed xy version, skipping or failing like requireTool.
func pyenvPython(t testing.TB, xy string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(pyenvRoot(), "versions", xy+".*"))
	sort.Slice(dirs, func(i, j int) bool {
		return compareVersions(versionIn(filepath.Base(dirs[i])), versionIn(filepath.Base(dirs[j]))) > 0
	})
	for _, d := range dirs {
		p := filepath.Join(d, "bin", "python"+xy)
		if _, err := os.Stat(p); err == nil {
			return requireTool(t, p)
		}
	}
	return requireTool(t, filepath.Join(pyenvRoot(), "versions", xy+".x", "bin", "python"+xy))
}

// buildID returns the build-id of path, failing the test without one.
func buildID(t testing.TB, path string) string {
	t.Helper()
	id, err := elfinfo.ReadBuildIDFile(path)
	if err != nil || id == "" {
		t.Fatalf("build-id of %s: %q, %v", path, id, err)
	}
	return id
}

// makeVenv runs `python -m venv --without-pip [args] dir`.
func makeVenv(t testing.TB, python, dir string, args ...string) string {
	t.Helper()
	argv := append([]string{"-m", "venv", "--without-pip"}, args...)
	argv = append(argv, dir)
	cmd := exec.Command(python, argv...)
	cmd.Env = append(os.Environ(), "PYTHONNOUSERSITE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", python, strings.Join(argv, " "), err, out)
	}
	return dir
}

// copyFile copies src to dst with mode 0755, creating dst's directory.
func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes content to path, creating directories.
func writeFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
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
