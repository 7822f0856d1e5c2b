package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// A bare copy of Debian's python3.11 (no pyvenv.cfg, no orig-prefix.txt,
// no lib/python3.11 beside it), as an app vendors it in <app>/bin/python3:
// by path and by PID it is mapped back to /usr/bin/python3.11 by its equal
// build-id, and debuginfo finds Debian's gdb extension for it.
func TestRealBareCopyDebian(t *testing.T) {
	deb := testenv.Debian(t)
	py := deb.Exe
	id := testenv.ReadelfBuildID(t, py)
	app := t.TempDir()
	exe := filepath.Join(app, "bin", "python3")
	testenv.CopyFile(t, py, exe, 0o755)
	// The version the interpreter reports itself, not one machine's.
	want := wantPython{interpreter: py, version: deb.Version, static: true, venvKind: "none"}

	r := runJSON(t, exe)
	checkResult(t, "path", r, want)
	if r.Exe != exe || r.Via != "candidates" || r.ExeBuildID != id {
		t.Errorf("path: exe %s via %s exe_build_id %s, want %s candidates %s", r.Exe, r.Via, r.ExeBuildID, exe, id)
	}

	pid := testenv.StartPython(t, exe, "")
	r = runJSON(t, strconv.Itoa(pid))
	checkResult(t, "pid", r, want)
	if r.Exe != exe || r.Via != "candidates" || r.ExeBuildID != id {
		t.Errorf("pid: exe %s via %s exe_build_id %s", r.Exe, r.Via, r.ExeBuildID)
	}

	ext := "/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py"
	if _, err := os.Stat(ext); err == nil {
		for _, tgt := range []string{exe, strconv.Itoa(pid)} {
			if di := debugJSON(t, tgt); di.Extensions.GDB != ext {
				t.Errorf("debuginfo %s: gdb extension %q, want %s", tgt, di.Extensions.GDB, ext)
			}
		}
	}
}

// A bare copy of every pyenv interpreter, run from a directory with no
// lib/pythonX.Y beside it, with PYTHONHOME naming its prefix. pyenv is
// hidden from the candidate search (HOME is elsewhere, no PYENV_ROOT): only
// the libpython the copy loads (its RUNPATH, or LD_LIBRARY_PATH) leads
// to the original, which must be found by path and by PID.
func TestRealBareCopyPyenv(t *testing.T) {
	versions := testenv.PyenvAll(t)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "PYENV_ROOT" && k != "PYENV_VERSION" && k != "PATH" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+t.TempDir(), "PATH=/usr/bin:/bin")
	shared := 0
	for _, p := range versions {
		if strings.ContainsAny(p.ABIFlags, "dt") {
			continue
		}
		prefix, full, mm, flags := p.Prefix, p.Version, p.Minor(), p.ABIFlags
		lib := filepath.Join(prefix, "lib", "libpython"+mm+flags+".so.1.0")
		if _, err := os.Stat(lib); err != nil {
			// A static build's copy loads no libpython, the one thing
			// this test follows back to the original: the subtest's
			// name says why it checks nothing.
			t.Run(full+"_static_libpython_loads_no_library_to_follow", func(t *testing.T) {})
			continue
		}
		shared++
		t.Run(full, func(t *testing.T) {
			orig := filepath.Join(prefix, "bin", "python"+mm)
			exe := filepath.Join(t.TempDir(), "app", "python")
			testenv.CopyFile(t, orig, exe, 0o755)
			want := wantPython{interpreter: orig, version: full, abiFlags: flags, libpython: lib, venvKind: "none"}
			runEnv := append(env, "LD_LIBRARY_PATH="+filepath.Dir(lib))

			r := runJSONEnv(t, exe, runEnv)
			checkResult(t, "path", r, want)
			if r.Via != "candidates" || r.ExeBuildID != testenv.ReadelfBuildID(t, orig) {
				t.Errorf("path: via %s exe_build_id %s", r.Via, r.ExeBuildID)
			}

			pid := testenv.StartPython(t, exe, "", "PYTHONHOME="+prefix, "LD_LIBRARY_PATH="+filepath.Dir(lib))
			r = runJSONEnv(t, strconv.Itoa(pid), env)
			checkResult(t, "pid", r, want)
			if r.Via != "candidates" || r.Exe != exe {
				t.Errorf("pid: via %s exe %s", r.Via, r.Exe)
			}
		})
	}
	if shared == 0 {
		testenv.Missing(t, "no pyenv build with a shared libpython (env PYTHON_CONFIGURE_OPTS=--enable-shared pyenv install)")
	}
}
