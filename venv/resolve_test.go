package venv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// checkResolve resolves exe and checks the interpreter and Via.
func checkResolve(t *testing.T, exe string, opts Options, wantInterp, wantVia string) *Resolution {
	t.Helper()
	res, err := Resolve(exe, opts)
	if err != nil {
		t.Fatalf("Resolve(%s): %v", exe, err)
	}
	if res.Interpreter != wantInterp || res.Via != wantVia {
		t.Fatalf("Resolve(%s) = %s via %q, want %s via %q (checked %+v)", exe, res.Interpreter, res.Via, wantInterp, wantVia, res.Checked)
	}
	if res.Copy != exe {
		t.Errorf("Copy = %s, want %s", res.Copy, exe)
	}
	if wantVia != viaSelf && wantVia != viaSymlink && wantVia != viaPyenvShim && res.MatchedBy != MatchedByContent && (res.BuildID == "" || res.BuildID != res.CopyBuildID || res.MatchedBy != MatchedByBuildID) {
		t.Errorf("build-ids differ: copy %s, interpreter %s", res.CopyBuildID, res.BuildID)
	}
	return res
}

func TestResolveSystemVenvs(t *testing.T) {
	py := testenv.Debian(t).Exe
	id := buildID(t, py)
	tmp := t.TempDir()
	copies := testenv.Venv(t, py, filepath.Join(tmp, "copies"), "--copies")
	links := testenv.Venv(t, py, filepath.Join(tmp, "links"))
	opts := isolated(t)

	for _, name := range []string{"python", "python3", "python3.11"} {
		res := checkResolve(t, filepath.Join(copies, "bin", name), opts, py, viaCfg)
		if res.BuildID != id || res.Env == nil || res.Env.Kind != KindCopies || len(res.Checked) != 1 {
			t.Errorf("%s: %+v", name, res)
		}
		res = checkResolve(t, filepath.Join(links, "bin", name), opts, py, viaSymlink)
		if res.BuildID != id || res.Env == nil || res.Env.Kind != KindSymlinks {
			t.Errorf("%s: %+v", name, res)
		}
	}

	// The base interpreter itself, and through /usr/bin/python3 -> python3.11.
	checkResolve(t, py, opts, py, viaSelf)
	if _, err := os.Lstat("/usr/bin/python3"); err == nil && realOf(t, "/usr/bin/python3") == py {
		checkResolve(t, "/usr/bin/python3", opts, py, viaSymlink)
	}

	// A symlink venv with a broken pyvenv.cfg still resolves: the link
	// says it all.
	writeFile(t, filepath.Join(links, "pyvenv.cfg"), "home /usr/bin\n", 0o644)
	checkResolve(t, filepath.Join(links, "bin", "python"), opts, py, viaSymlink)

	// A symlink from outside onto the copy: the copy is still matched.
	link := filepath.Join(tmp, "elsewhere", "mypython")
	symlink(t, filepath.Join(copies, "bin", "python"), link)
	res := checkResolve(t, link, opts, py, viaCfg)
	if res.Env == nil || res.Env.Path != copies {
		t.Errorf("env of link = %+v", res.Env)
	}
}

// An activated venv puts its own bin first on PATH; the other copies in
// it must not be taken for the original.
func TestResolveActivatedVenvSkipsOtherCopies(t *testing.T) {
	py := testenv.Debian(t).Exe
	tmp := t.TempDir()
	v := testenv.Venv(t, py, filepath.Join(tmp, "v"), "--copies")
	// Drop executable and point home at an empty dir, as Python < 3.11
	// cfgs with a moved base look.
	empty := filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(v, "pyvenv.cfg"), "home = "+empty+"\nversion = 3.11.2\n", 0o644)
	opts := isolated(t)
	opts.Env = append(opts.Env, "PATH="+filepath.Join(v, "bin")+":"+filepath.Dir(py))
	res := checkResolve(t, filepath.Join(v, "bin", "python"), opts, py, viaCands)
	for _, c := range res.Checked {
		if strings.HasPrefix(c.Path, v) {
			t.Errorf("checked a copy inside the venv: %s", c.Path)
		}
	}
}

func TestResolvePyenvVenvCopies(t *testing.T) {
	for _, p := range testenv.PyenvAll(t) {
		xy := p.Minor()
		if !strings.HasPrefix(p.Version, "3.") || strings.ContainsAny(p.ABIFlags, "dt") {
			continue // Python 2 has no venv module; a debug or free-threaded build
		}
		t.Run(xy, func(t *testing.T) {
			t.Parallel()
			py := p.Exe
			v := testenv.Venv(t, py, filepath.Join(t.TempDir(), "v"), "--copies")
			res := checkResolve(t, filepath.Join(v, "bin", "python"), isolated(t), realOf(t, py), viaCfg)
			if res.BuildID != buildID(t, py) || res.Env.Version == "" || !strings.HasPrefix(res.Env.Version, xy+".") {
				t.Errorf("%+v, env %+v", res, res.Env)
			}
			if !strings.Contains(res.Interpreter, "/versions/"+xy+".") {
				t.Errorf("interpreter %s not under versions/%s.*", res.Interpreter, xy)
			}
		})
	}
}

// virtualenv 20 made Python 2 envs in the legacy layout: no pyvenv.cfg,
// bin/python a copy of <prefix>/bin/python2.7, and the base prefix in
// lib/python2.7/orig-prefix.txt. virtualenv is not installed here, so the
// test builds that layout by hand.
func TestResolvePython2Virtualenv(t *testing.T) {
	py := testenv.Pyenv(t, "2.7").Exe
	prefix := filepath.Dir(filepath.Dir(py))
	v := filepath.Join(t.TempDir(), "py2env")
	testenv.CopyFile(t, py, filepath.Join(v, "bin", "python"), 0o755)
	symlink(t, "python", filepath.Join(v, "bin", "python2"))
	symlink(t, "python", filepath.Join(v, "bin", "python2.7"))
	writeFile(t, filepath.Join(v, "lib", "python2.7", "orig-prefix.txt"), prefix, 0o644)

	for _, name := range []string{"python", "python2.7"} {
		res := checkResolve(t, filepath.Join(v, "bin", name), isolated(t), realOf(t, py), viaOrig)
		if res.Env == nil || !res.Env.Python2 || res.Env.OrigPrefix != prefix || res.Env.Kind != KindCopies {
			t.Errorf("env = %+v", res.Env)
		}
	}
}

func TestResolveBareCopy(t *testing.T) {
	py := testenv.Debian(t).Exe
	tmp := t.TempDir()
	cp := filepath.Join(tmp, "python-copy")
	testenv.CopyFile(t, py, cp, 0o755)

	// Not in an env: its own interpreter unless asked.
	opts := isolated(t)
	checkResolve(t, cp, opts, cp, viaSelf)
	opts.FindOriginal = true
	checkResolve(t, cp, opts, cp, viaSelf) // nothing to find

	opts.SystemDirs = []string{filepath.Dir(py)}
	checkResolve(t, cp, opts, py, viaCands)
	opts.SystemDirs = nil
	checkResolve(t, cp, opts, py, viaCands)

	// The original binary itself is not a copy of anything else.
	checkResolve(t, py, opts, py, viaSelf)
}

func TestResolveBareCopyOfPyenv(t *testing.T) {
	py := testenv.Pyenv(t, "3.12").Exe
	cp := filepath.Join(t.TempDir(), "python3.12")
	testenv.CopyFile(t, py, cp, 0o755)
	opts := isolated(t)
	opts.FindOriginal = true
	opts.Env = append(opts.Env, "PYENV_ROOT="+testenv.PyenvRoot())
	checkResolve(t, cp, opts, realOf(t, py), viaCands)
}

// A venv whose base interpreter was replaced: home holds a python with a
// different build-id. The error must name both build-ids.
func TestResolveUpgradedBase(t *testing.T) {
	newerPy := testenv.Pyenv(t, "3.12")
	newer := newerPy.Exe
	other := testenv.Pyenv(t, "3.11").Exe
	tmp := t.TempDir()
	home := filepath.Join(tmp, "base", "bin")
	testenv.CopyFile(t, other, filepath.Join(home, "python3.12"), 0o755) // "upgraded" in place
	v := filepath.Join(tmp, "v")
	testenv.CopyFile(t, newer, filepath.Join(v, "bin", "python"), 0o755)
	writeFile(t, filepath.Join(v, "pyvenv.cfg"), "home = "+home+"\ninclude-system-site-packages = false\nversion = "+newerPy.Version+"\n", 0o644)

	exe := filepath.Join(v, "bin", "python")
	_, err := Resolve(exe, isolated(t))
	if !errors.Is(err, ErrNoMatch) {
		t.Fatalf("err = %v, want ErrNoMatch", err)
	}
	var nm *NoMatchError
	if !errors.As(err, &nm) {
		t.Fatalf("err = %T", err)
	}
	copyID, otherID := buildID(t, newer), buildID(t, other)
	if nm.CopyBuildID != copyID || nm.Home != home || len(nm.Checked) != 1 || nm.Checked[0].BuildID != otherID {
		t.Errorf("NoMatchError = %+v", nm)
	}
	want := exe + " (build-id " + copyID + ") is a copy of no interpreter found: " +
		filepath.Join(home, "python3.12") + " has build-id " + otherID + " (the base interpreter was probably upgraded"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q\nwant prefix %q", err, want)
	}
}

func TestNoMatchErrorText(t *testing.T) {
	e := &NoMatchError{
		Copy: ".venv/bin/python", CopyBuildID: "1234", Home: "/usr/bin",
		Checked: []Candidate{
			{Path: "/opt/x/python3.11", Err: "not an ELF file"},
			{Path: "/usr/bin/python3.11", BuildID: "abcd"},
			{Path: "/a/python3.11", BuildID: "ef01"},
			{Path: "/b/python3.11", BuildID: "ef02"},
			{Path: "/c/python3.11", BuildID: "ef03"},
		},
	}
	want := ".venv/bin/python (build-id 1234) is a copy of no interpreter found: /usr/bin/python3.11 has build-id abcd; " +
		"/opt/x/python3.11 could not be read: not an ELF file; /a/python3.11 has build-id ef01; and 2 more checked " +
		"(the base interpreter was probably upgraded or rebuilt after the venv was made; recreate the venv)"
	if e.Error() != want {
		t.Errorf("got  %q\nwant %q", e.Error(), want)
	}
	e = &NoMatchError{Copy: "p", CopyBuildID: "12", Home: "/gone/bin"}
	if want := "p (build-id 12) is a copy of no interpreter found: no candidate interpreter exists (home /gone/bin holds no python)"; e.Error() != want {
		t.Errorf("got %q", e.Error())
	}
	if !errors.Is(e, ErrNoMatch) || errors.Is(e, ErrNotVenv) {
		t.Error("errors.Is wrong")
	}
}

func TestResolveSymlinkLoop(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	symlink(t, b, a)
	symlink(t, a, b)
	if _, err := Resolve(a, isolated(t)); !errors.Is(err, ErrSymlinkLoop) {
		t.Errorf("err = %v, want ErrSymlinkLoop", err)
	}

	// A loop inside a venv's bin.
	v := filepath.Join(tmp, "v")
	writeFile(t, filepath.Join(v, "pyvenv.cfg"), "home = /usr/bin\n", 0o644)
	symlink(t, "python3", filepath.Join(v, "bin", "python"))
	symlink(t, "python", filepath.Join(v, "bin", "python3"))
	_, err := Resolve(filepath.Join(v, "bin", "python"), isolated(t))
	if !errors.Is(err, ErrSymlinkLoop) || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Errorf("err = %v, want ErrSymlinkLoop", err)
	}
}

// A looping or unreadable candidate is recorded and passed over.
func TestResolveBadCandidates(t *testing.T) {
	py := testenv.Debian(t).Exe
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	symlink(t, "python3", filepath.Join(home, "python3.11"))
	symlink(t, "python3.11", filepath.Join(home, "python3"))
	writeFile(t, filepath.Join(home, "python"), "#!/bin/sh\n", 0o755)
	v := filepath.Join(tmp, "v")
	testenv.CopyFile(t, py, filepath.Join(v, "bin", "python"), 0o755)
	writeFile(t, filepath.Join(v, "pyvenv.cfg"), "home = "+home+"\nversion = 3.11.2\n", 0o644)
	opts := isolated(t)
	_, err := Resolve(filepath.Join(v, "bin", "python"), opts)
	var nm *NoMatchError
	if !errors.As(err, &nm) {
		t.Fatalf("err = %v", err)
	}
	// Looping candidates do not exist for Candidates; the script is read.
	if len(nm.Checked) != 1 || nm.Checked[0].Path != filepath.Join(home, "python") || !strings.Contains(nm.Checked[0].Err, "not an ELF") {
		t.Errorf("checked = %+v", nm.Checked)
	}
	opts.SystemDirs = []string{filepath.Dir(py)}
	checkResolve(t, filepath.Join(v, "bin", "python"), opts, py, viaCands)
}

func TestResolveConda(t *testing.T) {
	py := testenv.Debian(t).Exe
	c := filepath.Join(t.TempDir(), "conda")
	if err := os.MkdirAll(filepath.Join(c, "conda-meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.CopyFile(t, py, filepath.Join(c, "bin", "python3.11"), 0o755)
	symlink(t, "python3.11", filepath.Join(c, "bin", "python"))
	real := filepath.Join(realOf(t, c), "bin", "python3.11")
	for _, name := range []string{"python", "python3.11"} {
		res := checkResolve(t, filepath.Join(c, "bin", name), isolated(t), real, viaSelf)
		if res.Env == nil || res.Env.Kind != KindConda || res.BuildID != buildID(t, py) {
			t.Errorf("%s: %+v", name, res)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tmp := t.TempDir()
	if _, err := Resolve(filepath.Join(tmp, "missing"), isolated(t)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := Resolve(tmp, isolated(t)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("dir: %v", err)
	}
	script := filepath.Join(tmp, "script")
	writeFile(t, script, "#!/bin/sh\necho hi\n", 0o755)
	if _, err := Resolve(script, isolated(t)); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("script: %v", err)
	}
	// A venv copy that is not ELF cannot be matched.
	v := filepath.Join(tmp, "v")
	writeFile(t, filepath.Join(v, "pyvenv.cfg"), "home = /usr/bin\n", 0o644)
	writeFile(t, filepath.Join(v, "bin", "python"), "not elf", 0o755)
	if _, err := Resolve(filepath.Join(v, "bin", "python"), isolated(t)); err == nil || !strings.Contains(err.Error(), "read build-id") {
		t.Errorf("non-ELF copy: %v", err)
	}
	// A malformed pyvenv.cfg beside the copy.
	writeFile(t, filepath.Join(v, "pyvenv.cfg"), "home = /usr/bin\xff\n", 0o644)
	if _, err := Resolve(filepath.Join(v, "bin", "python"), isolated(t)); !errors.Is(err, ErrMalformedCfg) {
		t.Errorf("malformed: %v", err)
	}
}

// The path a debugger starts from: /proc/PID/exe of a running copy.
func TestResolveProcExe(t *testing.T) {
	py := testenv.Debian(t).Exe
	v := testenv.Venv(t, py, filepath.Join(t.TempDir(), "v"), "--copies")
	pid := testenv.StartPython(t, filepath.Join(v, "bin", "python"), "")
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	if _, err := os.Readlink(exe); err != nil {
		testenv.Missing(t, "cannot read %s: %v", exe, err)
	}
	res := checkResolve(t, exe, isolated(t), py, viaCfg)
	if res.Env == nil || res.Env.Path != v || res.Env.Kind != KindCopies {
		t.Errorf("env = %+v", res.Env)
	}
}
