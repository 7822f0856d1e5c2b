package venv

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeTree builds files (all empty, mode 0755) under root and returns
// root-relative paths made absolute.
func fakeTree(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		writeFile(t, filepath.Join(root, f), "", 0o755)
	}
}

func rel(root string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimPrefix(p, root+"/")
	}
	return out
}

func TestCandidatesOrder(t *testing.T) {
	r := t.TempDir()
	fakeTree(t, r,
		"base/bin/python3.11", "base/bin/python3.11-config", "base/bin/python3.11-gdb.py", "base/bin/python3",
		"exec/python3.11",
		"extra/python3.11",
		"path1/python3.11", "path1/python",
		"path2/python3",
		"home/.pyenv/shims/python3.11",
		"home/.pyenv/versions/3.12.1/bin/python3.12",
		"home/.pyenv/versions/3.11.7/bin/python3.11",
		"home/.pyenv/versions/3.11.2/bin/python3.11",
		"uv/cpython-3.11.9-linux-x86_64-gnu/bin/python3.11",
		"uv/cpython-3.12.1-linux-x86_64-gnu/bin/python3.12",
		"conda-prefix/bin/python3.11",
		"home/miniforge3/bin/python3.11",
		"sys/python3.11",
	)
	symlink(t, "python3.11", filepath.Join(r, "sys", "python3"))
	writeFile(t, filepath.Join(r, "env", "pyvenv.cfg"), "", 0o644)
	env := &Env{
		Path: filepath.Join(r, "env"), Kind: KindCopies,
		Cfg:  &Cfg{Executable: filepath.Join(r, "exec/python3.11"), BaseExecutable: filepath.Join(r, "missing/python3.11")},
		Home: filepath.Join(r, "base/bin/"), Version: "3.11.2",
	}
	opts := Options{
		Env: []string{
			"HOME=" + filepath.Join(r, "home"),
			"PATH=" + strings.Join([]string{filepath.Join(r, "path1"), filepath.Join(r, "home/.pyenv/shims"), "", filepath.Join(r, "path2"), filepath.Join(r, "path1") + "/"}, ":"),
			"UV_PYTHON_INSTALL_DIR=" + filepath.Join(r, "uv"),
			"CONDA_PREFIX=" + filepath.Join(r, "conda-prefix"),
			"PATH=" + strings.Join([]string{filepath.Join(r, "path1"), filepath.Join(r, "home/.pyenv/shims"), "", filepath.Join(r, "path2"), filepath.Join(r, "path1") + "/"}, ":"),
		},
		ExtraDirs:  []string{filepath.Join(r, "extra")},
		SystemDirs: []string{filepath.Join(r, "sys")},
	}
	got := rel(r, Candidates(env, filepath.Join(env.Path, "bin", "python"), opts))
	want := []string{
		"exec/python3.11",
		"base/bin/python3.11", "base/bin/python3",
		"extra/python3.11",
		"path1/python3.11", "path1/python",
		"path2/python3",
		"sys/python3.11", "sys/python3",
		"home/.pyenv/versions/3.11.7/bin/python3.11", "home/.pyenv/versions/3.11.2/bin/python3.11",
		"uv/cpython-3.11.9-linux-x86_64-gnu/bin/python3.11",
		"conda-prefix/bin/python3.11",
		"home/miniforge3/bin/python3.11",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestCandidatesUnknownVersion(t *testing.T) {
	r := t.TempDir()
	fakeTree(t, r,
		"bin/python3.9", "bin/python3.12", "bin/python3.10", "bin/python2.7", "bin/python3", "bin/python",
		"bin/python3.12-config", "bin/python3.12-gdb.py", "bin/python3-dbg", "bin/pythonw", "bin/python-copy",
		"bin/python3.13t",
	)
	if err := os.MkdirAll(filepath.Join(r, "bin", "python3.14"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts := Options{Env: []string{"PATH=" + filepath.Join(r, "bin")}, SystemDirs: []string{}}
	got := rel(r, Candidates(nil, "/tmp/x/python-copy", opts))
	want := []string{
		"bin/python3.13t", "bin/python3.12", "bin/python3.10", "bin/python3.9", "bin/python3", "bin/python2.7",
		"bin/python-copy", "bin/python",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	// The version in the exe's name selects pythonX.Y.
	got = rel(r, Candidates(nil, "/tmp/x/python3.10", opts))
	want = []string{"bin/python3.10", "bin/python3", "bin/python"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("named: got %q, want %q", got, want)
	}
}

func TestCandidatesDefaults(t *testing.T) {
	r := t.TempDir()
	fakeTree(t, r,
		"home/.local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu/bin/python3.12",
		"xdg/uv/python/cpython-3.12.2-linux-x86_64-gnu/bin/python3.12",
		"home/.pyenv/versions/3.12.1/bin/python3.12",
		"root2/versions/3.12.3/bin/python3.12",
	)
	env := &Env{Path: "/nonexistent", Version: "3.12.1"}
	o := Options{Env: []string{"HOME=" + filepath.Join(r, "home")}, SystemDirs: []string{}}
	want := []string{"home/.pyenv/versions/3.12.1/bin/python3.12", "home/.local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu/bin/python3.12"}
	if got := rel(r, Candidates(env, "", o)); !reflect.DeepEqual(got, want) {
		t.Errorf("HOME defaults: got %q, want %q", got, want)
	}
	o.Env = append(o.Env, "XDG_DATA_HOME="+filepath.Join(r, "xdg"), "PYENV_ROOT="+filepath.Join(r, "root2")+"/")
	want = []string{"root2/versions/3.12.3/bin/python3.12", "xdg/uv/python/cpython-3.12.2-linux-x86_64-gnu/bin/python3.12"}
	if got := rel(r, Candidates(env, "", o)); !reflect.DeepEqual(got, want) {
		t.Errorf("PYENV_ROOT, XDG_DATA_HOME: got %q, want %q", got, want)
	}
	if got := Candidates(nil, "", Options{SystemDirs: []string{}}); len(got) != 0 {
		t.Errorf("empty options: %q", got)
	}
}

func TestCandidatesBounded(t *testing.T) {
	r := t.TempDir()
	for i := 0; i < MaxCandidates+50; i++ {
		fakeTree(t, r, fmt.Sprintf("bin/python3.%d", i))
	}
	got := Candidates(nil, "", Options{Env: []string{"PATH=" + filepath.Join(r, "bin")}, SystemDirs: []string{}})
	if len(got) != MaxCandidates {
		t.Fatalf("len = %d, want %d", len(got), MaxCandidates)
	}
	if filepath.Base(got[0]) != fmt.Sprintf("python3.%d", MaxCandidates+49) {
		t.Errorf("newest first: got %s", got[0])
	}
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"3.10", "3.9", 1}, {"3.9.18", "3.9.18", 0}, {"3.9", "3.9.1", -1}, {"2.7.18", "3.6.15", -1}, {"x", "3", -1},
		{"3.9", "3.9.0", -1}, {"3", "x", 1}, {"x", "", 0}, {"3.13.0rc1", "3.13.0", -1},
	} {
		if got := compareVersions(c.a, c.b); got != c.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
