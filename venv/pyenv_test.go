package venv

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/testenv"
)

// realShim is what pyenv 2.x writes to $PYENV_ROOT/shims/<name>.
const realShim = `#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${0##*/}"

export PYENV_ROOT="/root/.pyenv"
SHIM_PATH=${0%/*}
if [[ $SHIM_PATH != "/root/.pyenv/shims" ]]; then
  export _PYENV_SHIM_PATH="$SHIM_PATH"
fi
exec "/root/.pyenv/libexec/pyenv" exec "$program" "$@"
`

// oldShim is the shim of pyenv 1.x.
const oldShim = `#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${0##*/}"
if [[ "$program" = "python"* ]]; then
  for arg; do
    case "$arg" in
    -c* | -- ) break ;;
    */* )
      if [ -f "$arg" ]; then
        export PYENV_FILE_ARG="$arg"
        break
      fi
      ;;
    esac
  done
fi

export PYENV_ROOT="/home/u/.pyenv"
exec "$PYENV_ROOT/libexec/pyenv" exec "$program" "$@"
`

func TestIsPyenvShim(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want bool
	}{
		{"pyenv 2 shim", realShim, true},
		{"pyenv 1 shim", oldShim, true},
		{"plain pyenv exec", "#!/bin/sh\nexport PYENV_ROOT=/x\nexec pyenv exec python \"$@\"\n", true},
		{"no shebang", strings.TrimPrefix(realShim, "#!"), false},
		{"no PYENV_ROOT", "#!/bin/sh\nexec /x/libexec/pyenv exec python\n", false},
		{"mentions pyenv only in a comment", "#!/bin/sh\n# PYENV_ROOT: exec pyenv exec is not run\necho hi\n", false},
		{"pip entry point", "#!/root/.pyenv/versions/3.12.1/bin/python3.12\nimport sys\nfrom pip._internal.cli.main import main\n", false},
		{"ELF", "\x7fELF\x02\x01\x01", false},
		{"empty", "", false},
	} {
		if got := IsPyenvShim(strings.NewReader(tt.in)); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	// Bounded read: a shim pattern past 64 KiB is not seen.
	big := "#!/bin/sh\n" + strings.Repeat("#\n", 40<<10) + "PYENV_ROOT=x\nexec pyenv exec python\n"
	if IsPyenvShim(strings.NewReader(big)) {
		t.Error("read past the bound")
	}
}

func TestIsPyenvShimOnMachine(t *testing.T) {
	shim := filepath.Join(testenv.PyenvRoot(), "shims", "python3")
	testenv.Need(t, shim)
	b, err := os.ReadFile(shim)
	if err != nil {
		t.Fatal(err)
	}
	if !IsPyenvShim(bytes.NewReader(b)) {
		t.Errorf("%s not recognised:\n%s", shim, b)
	}
	py := testenv.Pyenv(t, "3.12").Exe
	f, err := os.Open(py)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsPyenvShim(f) {
		t.Errorf("%s taken for a shim", py)
	}
}

// fakePyenv builds a pyenv root with the given versions, each with
// bin/python3.X and the python3/python symlinks, and a system dir.
func fakePyenv(t *testing.T, versions ...string) (root, sys string) {
	t.Helper()
	tmp := t.TempDir()
	root = filepath.Join(tmp, "pyenv")
	for _, v := range versions {
		bin := filepath.Join(root, "versions", v, "bin")
		xy := pyversion.MajorMinorOf(v)
		if xy == "" {
			xy = "3.99"
		}
		writeFile(t, filepath.Join(bin, "python"+xy), "", 0o755)
		symlink(t, "python"+xy, filepath.Join(bin, "python"+xy[:1]))
		symlink(t, "python"+xy[:1], filepath.Join(bin, "python"))
	}
	writeFile(t, filepath.Join(root, "shims", "python3"), realShim, 0o755)
	writeFile(t, filepath.Join(root, "shims", "python3.8"), realShim, 0o755)
	sys = filepath.Join(tmp, "sysbin")
	writeFile(t, filepath.Join(sys, "python3"), "", 0o755)
	writeFile(t, filepath.Join(sys, "python2"), "", 0o644) // not executable
	return root, sys
}

func TestPyenvWhich(t *testing.T) {
	root, sys := fakePyenv(t, "2.7.18", "3.8.18", "3.12.0", "3.12.1", "3.12.2rc1", "3.13.0", "3.13.0t", "3.11-dev")
	proj := filepath.Join(t.TempDir(), "proj")
	sub := filepath.Join(proj, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	base := []string{"PYENV_ROOT=" + root, "PATH=" + filepath.Join(root, "shims") + ":" + sys}
	v := func(p string) string { return filepath.Join(root, "versions", p) }

	for _, tt := range []struct {
		name     string
		env      []string
		global   string // $PYENV_ROOT/version
		local    string // proj/.python-version
		cmd      string
		wantPath string
		wantVer  string
	}{
		{"global", nil, "3.8.18\n", "", "python3", v("3.8.18/bin/python3"), "3.8.18"},
		{"no version file", nil, "", "", "python3", filepath.Join(sys, "python3"), "system"},
		{"local beats global", nil, "3.8.18", "3.13.0\n", "python3", v("3.13.0/bin/python3"), "3.13.0"},
		{"PYENV_VERSION beats local", []string{"PYENV_VERSION=2.7.18"}, "", "3.13.0", "python2.7", v("2.7.18/bin/python2.7"), "2.7.18"},
		{"list, first has it", []string{"PYENV_VERSION=3.8.18:2.7.18"}, "", "", "python", v("3.8.18/bin/python"), "3.8.18"},
		{"list, second has it", []string{"PYENV_VERSION=3.8.18:2.7.18"}, "", "", "python2", v("2.7.18/bin/python2"), "2.7.18"},
		{"multi-line file with comments and CRLF", nil, "", "# pinned\r\n\r\n2.7.18 extra words\r\n3.12.1\r\n", "python3", v("3.12.1/bin/python3"), "3.12.1"},
		{"prefix picks newest release", nil, "", "3.12", "python3.12", v("3.12.1/bin/python3.12"), "3.12.1"},
		{"free-threaded prefix", nil, "", "3.13t", "python3.13", v("3.13.0t/bin/python3.13"), "3.13.0t"},
		{"python- prefix", nil, "", "python-3.8.18", "python3.8", v("3.8.18/bin/python3.8"), "3.8.18"},
		{"not installed falls to system", nil, "", "3.4.0", "python3", filepath.Join(sys, "python3"), "system"},
		{"system", []string{"PYENV_VERSION=system"}, "", "3.13.0", "python3", filepath.Join(sys, "python3"), "system"},
		{"path traversal ignored", nil, "", "../../etc\n3.8.18\n", "python3", v("3.8.18/bin/python3"), "3.8.18"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(root, "version"))
			os.Remove(filepath.Join(proj, ".python-version"))
			if tt.global != "" {
				writeFile(t, filepath.Join(root, "version"), tt.global, 0o644)
			}
			if tt.local != "" {
				writeFile(t, filepath.Join(proj, ".python-version"), tt.local, 0o644)
			}
			opts := Options{Env: append(append([]string{}, base...), tt.env...)}
			path, ver, err := PyenvWhich(tt.cmd, sub, opts)
			if err != nil || path != tt.wantPath || ver != tt.wantVer {
				t.Errorf("got %s, %s, %v; want %s, %s", path, ver, err, tt.wantPath, tt.wantVer)
			}
		})
	}

	// Nothing anywhere: the error names the versions and where they
	// were set.
	os.Remove(filepath.Join(root, "version"))
	writeFile(t, filepath.Join(proj, ".python-version"), "3.4.0\n3.8.18\n", 0o644)
	_, _, err := PyenvWhich("python2", sub, Options{Env: base})
	if !errors.Is(err, ErrPyenvNotFound) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"python2", "3.4.0:3.8.18", filepath.Join(proj, ".python-version"), "not installed", "3.4.0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, _, err = PyenvWhich("nope", "", Options{Env: append(base, "PYENV_VERSION=3.8.18")})
	if !errors.Is(err, ErrPyenvNotFound) || !strings.Contains(err.Error(), "PYENV_VERSION environment variable") {
		t.Errorf("err = %v", err)
	}
	if _, _, err := PyenvWhich("a/b", "", Options{Env: base}); err == nil {
		t.Error("accepted a path as command name")
	}
	if _, _, err := PyenvWhich("python", "", Options{}); err == nil {
		t.Error("no PYENV_ROOT and no HOME: want an error")
	}
}

// TestPyenvWhichMatchesPyenv compares PyenvWhich with the real `pyenv
// which` on this machine's pyenv.
func TestPyenvWhichMatchesPyenv(t *testing.T) {
	root := testenv.PyenvRoot()
	pyenv := filepath.Join(root, "bin", "pyenv")
	if _, err := os.Stat(pyenv); err != nil {
		pyenv = "pyenv"
	}
	pyenv = testenv.Need(t, pyenv)

	// The machine's environment less the variables that would select a
	// version behind the test's back.
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "PYENV_VERSION" && k != "PYENV_DIR" && k != "PYENV_ROOT" && !strings.HasPrefix(k, "_PYENV_SHIM_PATHS_") {
			env = append(env, kv)
		}
	}
	env = append(env, "PYENV_ROOT="+root)

	dir := filepath.Join(t.TempDir(), "proj")
	sub := filepath.Join(dir, "src")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// The cases name the versions installed here, never fixed ones.
	var vers []testenv.Python
	for _, p := range testenv.PyenvAll(t) {
		if !strings.ContainsAny(p.ABIFlags, "dt") {
			vers = append(vers, p)
		}
	}
	oldest, newest := vers[0], vers[len(vers)-1]
	second := vers[len(vers)/2]
	cases := []struct{ local, name string }{
		{filepath.Base(newest.Prefix), "python3"},
		{newest.Minor(), "python" + newest.Minor()},
		{filepath.Base(oldest.Prefix) + "\n" + filepath.Base(second.Prefix) + "\n", "python" + second.Minor()},
		{filepath.Base(oldest.Prefix), "python3"},
		{"system", "python3"},
		{"9.9.9", "python3"},
		{filepath.Base(second.Prefix), "no-such-command"},
		{"", "python3"},
	}
	for _, c := range cases {
		os.Remove(filepath.Join(dir, ".python-version"))
		if c.local != "" {
			writeFile(t, filepath.Join(dir, ".python-version"), c.local, 0o644)
		}
		cmd := exec.Command(pyenv, "which", c.name)
		cmd.Dir = sub
		cmd.Env = env
		out, runErr := cmd.Output()
		want := strings.TrimSpace(string(out))

		got, ver, err := PyenvWhich(c.name, sub, Options{Env: env})
		t.Logf(".python-version %q, which %s: pyenv %q, PyenvWhich %q (version %q, err %v)", c.local, c.name, want, got, ver, err)
		if (runErr != nil) != (err != nil) || got != want {
			t.Errorf(".python-version %q, which %s: pyenv says %q (%v), PyenvWhich %q version %q (%v)", c.local, c.name, want, runErr, got, ver, err)
		}
	}

	// And through a real shim, with Resolve.
	shim := testenv.NeedFile(t, filepath.Join(root, "shims", "python3"), "pyenv rehash")
	py3 := testenv.Pyenv(t, "3.11+")
	writeFile(t, filepath.Join(dir, ".python-version"), filepath.Base(py3.Prefix)+"\n", 0o644)
	want := testenv.NeedFile(t, filepath.Join(py3.Prefix, "bin", "python"+py3.Minor()), "")
	res, err := Resolve(shim, Options{Env: env, Dir: sub, SystemDirs: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Interpreter != realOf(t, want) || res.Via != viaPyenvShim || res.Copy != shim {
		t.Errorf("Resolve(shim) = %+v", res)
	}
}
