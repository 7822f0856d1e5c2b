package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// echionSrc stands in for a file of echion that dd-trace-py vendors
// through CMake FetchContent. The comment line is what the debuggers
// must print back.
const echionSrc = `#include <Python.h>

static int echion_frame_depth(int depth)
{
    int doubled = depth * 2; // pyattach-echion-marker
    return doubled + 1;
}

static PyObject *read_frame(PyObject *self, PyObject *arg)
{
    return PyLong_FromLong(echion_frame_depth((int)PyLong_AsLong(arg)));
}

static PyMethodDef methods[] = {
    {"read_frame", read_frame, METH_O, "read a frame"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_echion", NULL, -1, methods};

extern "C" PyMODINIT_FUNC PyInit__echion(void)
{
    return PyModule_Create(&module);
}
`

// The build directory dd-trace-py's wheels record, as in the seed
// document: a manylinux container's /project/build/... tree.
const echionBuildDir = "/project/build/cmake.linux-x86_64-cpython-311/ddtrace.internal.datadog.profiling.stack_v2._stack_v2/_deps/echion-src"

// An extension built like dd-trace-py's (C++, -fdebug-prefix-map onto
// /project/build/..., split into a debug zip, installed with symbols
// install) is loaded by a running Python; with --source echion=DIR,
// gdb's list and lldb's source list print its source lines.
func TestSourceMapEchionLikeExtension(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	gxx := testenv.Need(t, "g++")
	testenv.Need(t, "objcopy")
	testenv.Need(t, "zip")
	py := testenv.NeedFile(t, "/usr/bin/python3.11", "")
	testenv.NeedFile(t, "/usr/include/python3.11/Python.h", "")
	_ = gdb

	work := t.TempDir()
	checkout := filepath.Join(work, "checkout") // the user's clone of echion
	if err := os.MkdirAll(filepath.Join(checkout, "echion"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "echion", "frame.cc"), []byte(echionSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	venv := makeVenv(t, py, true)
	sp := filepath.Join(venv, "lib", "python3.11", "site-packages")
	so := filepath.Join(sp, "mypkg", "_echion.cpython-311-x86_64-linux-gnu.so")
	os.MkdirAll(filepath.Dir(so), 0o755)
	os.WriteFile(filepath.Join(sp, "mypkg", "__init__.py"), nil, 0o644)
	cmd := exec.Command(gxx, "-g", "-O0", "-fPIC", "-shared", "-I/usr/include/python3.11",
		"-fdebug-prefix-map="+checkout+"="+echionBuildDir, "-o", so, "echion/frame.cc")
	cmd.Dir = checkout
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	di := filepath.Join(sp, "mypkg-1.0.0.dist-info")
	os.MkdirAll(di, 0o755)
	os.WriteFile(filepath.Join(di, "RECORD"), []byte("mypkg/__init__.py,,\nmypkg/_echion.cpython-311-x86_64-linux-gnu.so,,\nmypkg-1.0.0.dist-info/RECORD,,\n"), 0o644)
	os.WriteFile(filepath.Join(di, "WHEEL"), []byte("Wheel-Version: 1.0\nTag: cp311-cp311-linux_x86_64\n"), 0o644)
	out := filepath.Join(work, "dist")
	mustRunIn(t, "make-debug-zip.sh", "", nil, "bash", filepath.Join("..", "..", "scripts", "make-debug-zip.sh"), sp, out)
	env := homeEnv(t)
	bin := pyattachBin(t)
	mustRunIn(t, "symbols install", "", env, bin, "symbols", "install", "--venv", venv, filepath.Join(out, "mypkg-1.0.0-cp311-cp311-linux_x86_64-debug-symbols.zip"))

	// A process that has loaded the extension.
	app := filepath.Join(work, "app.py")
	os.WriteFile(app, []byte("import sys, time\nimport mypkg._echion as e\ne.read_frame(3)\nsys.stdout.write('ready\\n'); sys.stdout.flush()\ntime.sleep(600)\n"), 0o644)
	pid := startPythonScript(t, filepath.Join(venv, "bin", "python"), app)

	o := mustRunIn(t, "srcmap", "", env, bin, "--offline", "--source", "echion="+checkout, "srcmap", "--json", strconv.Itoa(pid))
	if !strings.Contains(o, `"from": "`+echionBuildDir+`"`) || !strings.Contains(o, `"to": "`+checkout+`"`) {
		t.Errorf("srcmap has no echion rule:\n%s", o)
	}

	o = mustRunIn(t, "pyattach gdb", "", env, bin, "--offline", "--source", "echion="+checkout, "gdb", "-nx", "-batch", "-p", strconv.Itoa(pid), "-ex", "list echion_frame_depth")
	if !strings.Contains(o, "pyattach-echion-marker") {
		t.Errorf("gdb list did not print echion's source:\n%s", o)
	}
	// Without the source root, gdb cannot: the test can fail.
	o, _ = runIn(t, "", env, bin, "--offline", "gdb", "-nx", "-batch", "-p", strconv.Itoa(pid), "-ex", "list echion_frame_depth")
	if strings.Contains(o, "pyattach-echion-marker") {
		t.Errorf("gdb printed the source without a source root:\n%s", o)
	}

	testenv.Need(t, "lldb")
	o = mustRunIn(t, "pyattach lldb", "", env, bin, "--offline", "--source", "echion="+checkout, "lldb", "-b", "-p", strconv.Itoa(pid), "-o", "source list -n echion_frame_depth")
	if !strings.Contains(o, "pyattach-echion-marker") {
		t.Errorf("lldb source list did not print echion's source:\n%s", o)
	}
}

// startPythonScript runs a script that prints "ready" once set up.
func startPythonScript(t testing.TB, exe, script string) int {
	t.Helper()
	data, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	// startPython writes testenv.WaitingApp; reuse its process handling with our code.
	return testenv.StartPython(t, exe, string(data))
}

// pyenv 3.12: libpython's DWARF names /tmp/python-build.<stamp>/Python-3.12.X;
// a CPython 3.12.X tree made for the test (the files at their relative
// paths) is found by srcmap, and gdb then locates timemodule.c in it.
func TestSourceMapPyenvBuildTree(t *testing.T) {
	testenv.Need(t, "gdb")
	py := testenv.Pyenv(t, "3.12")
	prefix := py.Prefix
	exe := testenv.NeedFile(t, filepath.Join(prefix, "bin", "python3.12"), "")
	tree := filepath.Join(t.TempDir(), "cpython-"+py.Version)
	for _, f := range []string{"Modules/timemodule.c", "Python/ceval.c", "Objects/object.c", "Include/object.h"} {
		p := filepath.Join(tree, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("/* "+f+" (a stand-in made by the test) */\n"), 0o644)
	}
	venv := makeVenv(t, exe, true)
	bin := pyattachBin(t)
	o := mustRunIn(t, "srcmap", "", nil, bin, "--offline", "--source", tree, "srcmap", "--json", venv)
	if !regexp.MustCompile(`"from": "/tmp/python-build\.[^"]*/Python-` + regexp.QuoteMeta(py.Version) + `",\s+"to": "` + regexp.QuoteMeta(tree) + `",\s+"resolved": 4,`).MatchString(o) {
		t.Errorf("no rule mapping the pyenv build tree onto %s with 4 files resolved:\n%s", tree, o)
	}
	pid := testenv.StartPython(t, filepath.Join(venv, "bin", "python"), "")
	o = mustRunIn(t, "pyattach gdb", "", nil, bin, "--offline", "--source", tree, "gdb", "-nx", "-batch", "-p", strconv.Itoa(pid), "-ex", "frame function time_sleep", "-ex", "info source")
	if !strings.Contains(o, "Located in "+filepath.Join(tree, "Modules", "timemodule.c")) {
		t.Errorf("gdb did not locate timemodule.c in the tree:\n%s", o)
	}
}

// cpythonDebianSources returns CPython's upstream source tree of Debian's
// python3.11 (the orig tarball of `apt-get source python3.11`, which
// scripts/test.sh makes available), downloaded once into the user's
// cache.
func cpythonDebianSources(t *testing.T) string {
	t.Helper()
	cacheRoot, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	ver := testenv.Debian(t).Version // upstream's version: the orig tarball's
	cache := filepath.Join(cacheRoot, "pyattach-test", "python3.11-src")
	tree := filepath.Join(cache, "Python-"+ver)
	if _, err := os.Stat(filepath.Join(tree, "Modules", "timemodule.c")); err == nil {
		return tree
	}
	testenv.Need(t, "apt-get")
	testenv.Need(t, "tar")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	// The orig tarball is enough; apt-get may fail on the Debian parts.
	out, _ := runIn(t, cache, nil, "apt-get", "source", "--download-only", "-qq", "python3.11")
	origs, _ := filepath.Glob(filepath.Join(cache, "python3.11_"+ver+".orig.tar.*"))
	if len(origs) == 0 {
		testenv.Missing(t, "no CPython %s sources: apt-get source python3.11 gave no orig tarball (scripts/test.sh adds deb-src entries):\n%s", ver, out)
	}
	tmp, err := os.MkdirTemp(cache, "extract")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	mustRunIn(t, "tar", "", nil, "tar", "xf", origs[0], "-C", tmp)
	if err := os.Rename(filepath.Join(tmp, "Python-"+ver), tree); err != nil {
		t.Fatal(err)
	}
	return tree
}

// Debian's python3.11 with the upstream CPython sources of its version
// (3.11.X): its DWARF says
// /build/reproducible-path/python3.11-3.11.X/build-static with names
// like ../Modules/timemodule.c; srcmap maps that onto the tree, and gdb's
// info source on a Python frame locates the file in it.
func TestSourceMapDebianUpstreamSources(t *testing.T) {
	testenv.Need(t, "gdb")
	py := testenv.NeedFile(t, "/usr/bin/python3.11", "")
	id := testenv.ReadelfBuildID(t, py)
	testenv.NeedFile(t, filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug"), "")
	tree := cpythonDebianSources(t)
	pid := startVenvCopies(t, py)
	bin := pyattachBin(t)
	o := mustRunIn(t, "srcmap", "", nil, bin, "--offline", "--source", "cpython="+tree, "srcmap", "--json", strconv.Itoa(pid))
	build := "/build/reproducible-path/python3.11-" + testenv.Debian(t).Version
	if !strings.Contains(o, `"from": "`+build+`/build-static"`) ||
		!strings.Contains(o, `"from": "`+build+`",`) {
		t.Errorf("srcmap lacks the Debian build tree rules:\n%s", o)
	}
	o = mustRunIn(t, "pyattach gdb", "", nil, bin, "--offline", "--source", "cpython="+tree, "gdb", "-nx", "-batch", "-p", strconv.Itoa(pid), "-ex", "frame function time_sleep", "-ex", "info source")
	if !regexp.MustCompile(`Located in ` + regexp.QuoteMeta(tree) + `/(\w+/\.\./)?Modules/timemodule\.c`).MatchString(o) {
		t.Errorf("gdb did not locate timemodule.c in %s:\n%s", tree, o)
	}
}
