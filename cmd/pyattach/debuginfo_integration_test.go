package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/detect/testenv"
)

// mainJSON runs pyattach ARGS in-process with pyattach's directories in
// the test's temporary tree, fails the test on a non-zero exit, and
// decodes its standard output into a T. It also returns that output.
func mainJSON[T any](t testing.TB, args ...string) (*T, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Main(args, nil, &stdout, &stderr, testEnv(t)); code != 0 {
		t.Fatalf("pyattach %v: exit %d\n%s", args, code, stderr.String())
	}
	v := new(T)
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("pyattach %v: bad JSON: %v\n%s", args, err, stdout.String())
	}
	return v, stdout.String()
}

func debugJSON(t testing.TB, args ...string) *debugsearch.Info {
	t.Helper()
	di, _ := mainJSON[debugsearch.Info](t, append([]string{"--offline", "debuginfo", "--json"}, args...)...)
	return di
}

func moduleOf(t testing.TB, di *debugsearch.Info, path string) debugsearch.Module {
	t.Helper()
	for _, m := range di.Modules {
		if m.Path == path {
			return m
		}
	}
	t.Fatalf("module %s not in %+v", path, di.Modules)
	return debugsearch.Module{}
}

// Debian's python3.11 with python3.11-dbg: the debug file through the
// build-id tree, the extension from gdb's auto-load directory; the same
// answers for a --copies venv of it and for a running copy.
func TestDebuginfoDebianPython(t *testing.T) {
	py := testenv.NeedFile(t, "/usr/bin/python3.11", "")
	id := testenv.ReadelfBuildID(t, py)
	dbg := filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
	testenv.NeedFile(t, dbg, "")
	ext := testenv.NeedFile(t, "/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py", "")
	venv := makeVenv(t, py, true)
	pid := testenv.StartPython(t, filepath.Join(venv, "bin", "python"), "")
	for _, tc := range []struct{ target, module string }{
		{py, py},
		{venv, filepath.Join(venv, "bin", "python")},
		{strconv.Itoa(pid), filepath.Join(venv, "bin", "python")},
	} {
		di := debugJSON(t, tc.target)
		m := moduleOf(t, di, tc.module)
		if m.BuildID != id || m.Debug.Via != "build-id" || m.Debug.Path != dbg || m.Debug.Kind != "dwarf" {
			t.Errorf("%s: module %+v, want build-id %s", tc.target, m, dbg)
		}
		if m.DebugLink == nil || m.DebugLink.Name != id[2:]+".debug" {
			t.Errorf("%s: debuglink %+v", tc.target, m.DebugLink)
		}
		if di.Extensions.GDB != ext || !di.Extensions.GDBVersionMatch || di.Interpreter != py {
			t.Errorf("%s: extensions %+v interpreter %s", tc.target, di.Extensions, di.Interpreter)
		}
	}
}

// pyenv 3.12 in a --copies venv: libpython carries its DWARF; the
// extension sits beside the real interpreter.
func TestDebuginfoPyenvVenv(t *testing.T) {
	py := testenv.Pyenv(t, "3.12")
	prefix := py.Prefix
	exe := testenv.NeedFile(t, filepath.Join(prefix, "bin", "python3.12"), "")
	venv := makeVenv(t, exe, true)
	di := debugJSON(t, venv)
	lib := filepath.Join(prefix, "lib", "libpython3.12.so.1.0")
	m := moduleOf(t, di, lib)
	if m.Debug.Via != "embedded" || m.Debug.Kind != "dwarf" || m.BuildID != testenv.ReadelfBuildID(t, lib) {
		t.Errorf("libpython: %+v", m)
	}
	if want := filepath.Join(prefix, "bin", "python3.12-gdb.py"); di.Extensions.GDB != want || di.Extensions.GDBVersion != py.Version || !di.Extensions.GDBVersionMatch {
		t.Errorf("extension %+v, want %s", di.Extensions, want)
	}
	if di.Modules[0].Path != filepath.Join(venv, "bin", "python") {
		t.Errorf("modules[0] = %s", di.Modules[0].Path)
	}
}
