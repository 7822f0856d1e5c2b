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

// runJSON runs `pyattach resolve --json TARGET` in-process.
func runJSON(t testing.TB, tgt string) *target.Result {
	t.Helper()
	return runJSONEnv(t, tgt, os.Environ())
}

// runJSONEnv runs `pyattach resolve --json TARGET` in-process with env.
func runJSONEnv(t testing.TB, tgt string, env []string) *target.Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	// pyattach's own directories are the test's, whatever env says.
	for _, kv := range testEnv(t) {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "XDG_") || k == "DEBUGINFOD_CACHE_PATH" {
			env = environ.Env(env).With(k, v)
		}
	}
	if code := Main([]string{"resolve", "--json", tgt}, nil, &stdout, &stderr, env); code != 0 {
		t.Fatalf("pyattach resolve --json %s: exit %d\n%s", tgt, code, stderr.String())
	}
	var r target.Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout.String())
	}
	return &r
}

// makeVenv makes a venv of python, with --copies when copies is set.
func makeVenv(t testing.TB, python string, copies bool) string {
	t.Helper()
	var args []string
	if copies {
		args = append(args, "--copies")
	}
	return testenv.Venv(t, python, filepath.Join(t.TempDir(), "venv"), args...)
}

type wantPython struct {
	interpreter, version, abiFlags, libpython string
	debug, static                             bool
	venvKind                                  string
}

func checkResult(t *testing.T, how string, r *target.Result, w wantPython) {
	t.Helper()
	id := testenv.ReadelfBuildID(t, w.interpreter)
	if r.Interpreter != w.interpreter || r.BuildID != id {
		t.Errorf("%s: interpreter %s (%s), want %s (%s)", how, r.Interpreter, r.BuildID, w.interpreter, id)
	}
	if r.Python.Version != w.version || r.Python.ABIFlags != w.abiFlags || r.Python.DebugBuild != w.debug {
		t.Errorf("%s: python %+v, want version %s abi %q debug %v", how, r.Python, w.version, w.abiFlags, w.debug)
	}
	if r.Static != w.static || r.Libpython != w.libpython {
		t.Errorf("%s: static %v libpython %q, want %v %q", how, r.Static, r.Libpython, w.static, w.libpython)
	}
	if w.libpython != "" && r.LibpythonBuildID != testenv.ReadelfBuildID(t, w.libpython) {
		t.Errorf("%s: libpython build-id %s, readelf says %s", how, r.LibpythonBuildID, testenv.ReadelfBuildID(t, w.libpython))
	}
	if r.Venv.Kind != w.venvKind {
		t.Errorf("%s: venv kind %q, want %q", how, r.Venv.Kind, w.venvKind)
	}
}

// checkModules checks that a PID result lists the interpreter's and
// libc's files with the build-ids readelf gives.
func checkModules(t *testing.T, r *target.Result, files ...string) {
	t.Helper()
	for _, f := range files {
		found := false
		for _, m := range r.Modules {
			if m.Path == f {
				found = true
				if want := testenv.ReadelfBuildID(t, f); m.BuildID != want {
					t.Errorf("module %s: build-id %s, readelf %s", f, m.BuildID, want)
				}
			}
		}
		if !found {
			t.Errorf("module %s not listed among %d modules", f, len(r.Modules))
		}
	}
}

func libc(t testing.TB) string {
	p, err := filepath.EvalSymlinks("/lib/x86_64-linux-gnu/libc.so.6")
	if err != nil {
		t.Skip("no x86_64 glibc")
	}
	return p
}

// Debian's /usr/bin/python3.11 in a --copies venv: the case that breaks
// gdb's auto-load. By path and by PID it resolves to /usr/bin/python3.11.
func TestRealDebianVenvCopies(t *testing.T) {
	deb := testenv.Debian(t)
	py := deb.Exe
	testenv.NeedFile(t, "/usr/lib/python3.11/venv/__init__.py", "apt-get install python3.11-venv")
	venv := makeVenv(t, py, true)
	want := wantPython{interpreter: py, version: deb.Version, static: true, venvKind: "copies"}

	r := runJSON(t, venv)
	checkResult(t, "venv dir", r, want)
	if r.Exe != filepath.Join(venv, "bin", "python") || r.Via != "pyvenv.cfg" || r.Venv.Home != "/usr/bin" {
		t.Errorf("exe %s via %s home %s", r.Exe, r.Via, r.Venv.Home)
	}
	checkResult(t, "copy path", runJSON(t, filepath.Join(venv, "bin", "python")), want)

	pid := testenv.StartPython(t, filepath.Join(venv, "bin", "python"), "")
	r = runJSON(t, strconv.Itoa(pid))
	checkResult(t, "pid", r, want)
	if r.PID != pid || r.Container || r.ExeDeleted {
		t.Errorf("pid %d container %v deleted %v", r.PID, r.Container, r.ExeDeleted)
	}
	checkModules(t, r, filepath.Join(venv, "bin", "python"), libc(t))

	// A venv made with symlinks resolves through the link.
	lv := makeVenv(t, py, false)
	r = runJSON(t, lv)
	checkResult(t, "symlink venv", r, wantPython{interpreter: py, version: deb.Version, static: true, venvKind: "symlinks"})
}

// Debian's debug build: ABI flag d, Py_DEBUG.
func TestRealDebianDebugBuild(t *testing.T) {
	dbg := testenv.DebianDebug(t)
	py := dbg.Exe
	want := wantPython{interpreter: py, version: dbg.Version, abiFlags: "d", debug: true, static: true, venvKind: "none"}
	checkResult(t, "path", runJSON(t, py), want)
	pid := testenv.StartPython(t, py, "")
	checkResult(t, "pid", runJSON(t, strconv.Itoa(pid)), want)
}

// Every pyenv version on the machine, in a --copies venv (a Python 2
// virtualenv for 2.7), by path and by PID.
func TestRealPyenvVersions(t *testing.T) {
	for _, p := range testenv.PyenvAll(t) {
		if strings.ContainsAny(p.ABIFlags, "dt") {
			continue
		}
		prefix, full, mm, flags := p.Prefix, p.Version, p.Minor(), p.ABIFlags
		t.Run(full, func(t *testing.T) {
			t.Parallel()
			exe := filepath.Join(prefix, "bin", "python"+mm)
			lib := filepath.Join(prefix, "lib", "libpython"+mm+flags+".so.1.0")
			want := wantPython{interpreter: exe, version: full, abiFlags: flags, libpython: lib, venvKind: "copies"}

			var venv string
			if strings.HasPrefix(full, "2.") {
				venv = makePy2Virtualenv(t, prefix, mm)
			} else {
				venv = makeVenv(t, exe, true)
			}
			checkResult(t, "venv dir", runJSON(t, venv), want)
			pid := testenv.StartPython(t, filepath.Join(venv, "bin", "python"), "")
			r := runJSON(t, strconv.Itoa(pid))
			checkResult(t, "pid", r, want)
			checkModules(t, r, lib, libc(t))
		})
	}
}

// makePy2Virtualenv lays out a Python 2 virtualenv as virtualenv did: a
// copied bin/python and lib/pythonX.Y/orig-prefix.txt naming the base.
func makePy2Virtualenv(t testing.TB, prefix, mm string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "venv2")
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "lib", "python"+mm), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(prefix, "bin", "python"+mm))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "python"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib", "python"+mm, "orig-prefix.txt"), []byte(prefix), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A deleted interpreter: copy python3.11 away, run it, delete it.
func TestRealDeletedExe(t *testing.T) {
	deb := testenv.Debian(t)
	py := deb.Exe
	exe := filepath.Join(t.TempDir(), "python3.11")
	testenv.CopyFile(t, py, exe, 0o755)
	pid := testenv.StartPython(t, exe, "")
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	r := runJSON(t, strconv.Itoa(pid))
	if !r.ExeDeleted || r.Exe != exe || r.BuildID != testenv.ReadelfBuildID(t, py) || r.Python.Version != deb.Version {
		t.Errorf("deleted exe: %+v", r)
	}
	if r.ReadFrom != "/proc/"+strconv.Itoa(pid)+"/exe" {
		t.Errorf("read_from %q", r.ReadFrom)
	}
}
