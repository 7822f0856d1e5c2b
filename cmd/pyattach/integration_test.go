package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/target"
)

// need returns path when it exists; otherwise it skips the test, or
// fails it in CI, where a missing tool is an error.
func need(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", path, err)
		}
		t.Skipf("%s not installed", path)
	}
	return path
}

// appPy sleeps inside nested functions after saying it is ready. It runs
// under Python 2.7 and 3.x alike.
const appPy = `import sys, time
def inner():
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(600)
def middle():
    inner()
def outer():
    middle()
outer()
`

// startPython runs appPy under exe and returns its PID once it is ready.
func startPython(t testing.TB, exe string, env ...string) int {
	t.Helper()
	return startPythonCode(t, exe, appPy, env...)
}

// startPythonCode runs code as app.py under exe and returns its PID once
// it has printed its first line.
func startPythonCode(t testing.TB, exe, code string, env ...string) int {
	t.Helper()
	dir := t.TempDir()
	app := filepath.Join(dir, "app.py")
	if err := os.WriteFile(app, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, app)
	cmd.Env = append(os.Environ(), env...)
	line := startReady(t, cmd, 30*time.Second)
	if line == "" {
		t.Fatalf("%s app.py printed nothing", exe)
	}
	return cmd.Process.Pid
}

// startReady starts cmd in its own process group, kills the group when
// the test ends, and returns the first line the process prints on stdout
// (its "ready" signal) once it has printed it.
func startReady(t testing.TB, cmd *exec.Cmd, limit time.Duration) string {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	type result struct {
		line string
		err  error
	}
	ready := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		ready <- result{line, err}
	}()
	select {
	case r := <-ready:
		if r.err != nil {
			t.Fatalf("%s exited before it was ready: %v\n%s", cmd.Path, r.err, stderr.String())
		}
		return r.line
	case <-time.After(limit):
		t.Fatalf("%s not ready after %v\n%s", cmd.Path, limit, stderr.String())
	}
	return ""
}

// runJSON runs `pyattach resolve --json TARGET` in-process.
func runJSON(t testing.TB, tgt string) *target.Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"resolve", "--json", tgt}, nil, &stdout, &stderr, testEnv(t))
	if code != 0 {
		t.Fatalf("pyattach resolve --json %s: exit %d\n%s", tgt, code, stderr.String())
	}
	var r target.Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout.String())
	}
	return &r
}

var buildIDLine = regexp.MustCompile(`Build ID: ([0-9a-f]+)`)

// readelfID is the build-id as readelf prints it: the oracle.
func readelfID(t testing.TB, path string) string {
	t.Helper()
	out, err := exec.Command("readelf", "-n", path).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", path, err)
	}
	m := buildIDLine.FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s: readelf shows no build-id", path)
	}
	return string(m[1])
}

func makeVenv(t testing.TB, python string, copies bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "venv")
	args := []string{"-m", "venv", "--without-pip"}
	if copies {
		args = append(args, "--copies")
	}
	if out, err := exec.Command(python, append(args, dir)...).CombinedOutput(); err != nil {
		t.Fatalf("%s -m venv: %v\n%s", python, err, out)
	}
	return dir
}

type wantPython struct {
	interpreter, version, abiFlags, libpython string
	debug, static                             bool
	venvKind                                  string
}

func checkResult(t *testing.T, how string, r *target.Result, w wantPython) {
	t.Helper()
	id := readelfID(t, w.interpreter)
	if r.Interpreter != w.interpreter || r.BuildID != id {
		t.Errorf("%s: interpreter %s (%s), want %s (%s)", how, r.Interpreter, r.BuildID, w.interpreter, id)
	}
	if r.Python.Version != w.version || r.Python.ABIFlags != w.abiFlags || r.Python.DebugBuild != w.debug {
		t.Errorf("%s: python %+v, want version %s abi %q debug %v", how, r.Python, w.version, w.abiFlags, w.debug)
	}
	if r.Static != w.static || r.Libpython != w.libpython {
		t.Errorf("%s: static %v libpython %q, want %v %q", how, r.Static, r.Libpython, w.static, w.libpython)
	}
	if w.libpython != "" && r.LibpythonBuildID != readelfID(t, w.libpython) {
		t.Errorf("%s: libpython build-id %s, readelf says %s", how, r.LibpythonBuildID, readelfID(t, w.libpython))
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
				if want := readelfID(t, f); m.BuildID != want {
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
	py := need(t, "/usr/bin/python3.11")
	need(t, "/usr/lib/python3.11/venv/__init__.py")
	venv := makeVenv(t, py, true)
	want := wantPython{interpreter: py, version: "3.11.2", static: true, venvKind: "copies"}

	r := runJSON(t, venv)
	checkResult(t, "venv dir", r, want)
	if r.Exe != filepath.Join(venv, "bin", "python") || r.Via != "pyvenv.cfg" || r.Venv.Home != "/usr/bin" {
		t.Errorf("exe %s via %s home %s", r.Exe, r.Via, r.Venv.Home)
	}
	checkResult(t, "copy path", runJSON(t, filepath.Join(venv, "bin", "python")), want)

	pid := startPython(t, filepath.Join(venv, "bin", "python"))
	r = runJSON(t, strconv.Itoa(pid))
	checkResult(t, "pid", r, want)
	if r.PID != pid || r.Container || r.ExeDeleted {
		t.Errorf("pid %d container %v deleted %v", r.PID, r.Container, r.ExeDeleted)
	}
	checkModules(t, r, filepath.Join(venv, "bin", "python"), libc(t))

	// A venv made with symlinks resolves through the link.
	lv := makeVenv(t, py, false)
	r = runJSON(t, lv)
	checkResult(t, "symlink venv", r, wantPython{interpreter: py, version: "3.11.2", static: true, venvKind: "symlinks"})
}

// Debian's debug build: ABI flag d, Py_DEBUG.
func TestRealDebianDebugBuild(t *testing.T) {
	py := need(t, "/usr/bin/python3.11d")
	want := wantPython{interpreter: py, version: "3.11.2", abiFlags: "d", debug: true, static: true, venvKind: "none"}
	checkResult(t, "path", runJSON(t, py), want)
	pid := startPython(t, py)
	checkResult(t, "pid", runJSON(t, strconv.Itoa(pid)), want)
}

// Every pyenv version on the machine, in a --copies venv (a Python 2
// virtualenv for 2.7), by path and by PID.
func TestRealPyenvVersions(t *testing.T) {
	home, _ := os.UserHomeDir()
	root := filepath.Join(home, ".pyenv", "versions")
	versions, _ := filepath.Glob(filepath.Join(root, "[23].*"))
	if len(versions) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no pyenv versions under %s; CI machines have 2.7 and 3.6 to 3.13", root)
		}
		t.Skip("no pyenv versions")
	}
	for _, prefix := range versions {
		full := filepath.Base(prefix)
		parts := strings.Split(full, ".")
		if len(parts) != 3 {
			continue
		}
		mm := parts[0] + "." + parts[1]
		t.Run(full, func(t *testing.T) {
			t.Parallel()
			exe := filepath.Join(prefix, "bin", "python"+mm)
			flags := ""
			if mm == "3.6" || mm == "3.7" {
				flags = "m"
			}
			lib := filepath.Join(prefix, "lib", "libpython"+mm+flags+".so.1.0")
			want := wantPython{interpreter: exe, version: full, abiFlags: flags, libpython: lib, venvKind: "copies"}

			var venv string
			if parts[0] == "2" {
				venv = makePy2Virtualenv(t, prefix, mm)
			} else {
				venv = makeVenv(t, exe, true)
			}
			checkResult(t, "venv dir", runJSON(t, venv), want)
			pid := startPython(t, filepath.Join(venv, "bin", "python"))
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
	py := need(t, "/usr/bin/python3.11")
	dir := t.TempDir()
	data, err := os.ReadFile(py)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "python3.11")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	pid := startPython(t, exe)
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	r := runJSON(t, strconv.Itoa(pid))
	if !r.ExeDeleted || r.Exe != exe || r.BuildID != readelfID(t, py) || r.Python.Version != "3.11.2" {
		t.Errorf("deleted exe: %+v", r)
	}
	if r.ReadFrom != "/proc/"+strconv.Itoa(pid)+"/exe" {
		t.Errorf("read_from %q", r.ReadFrom)
	}
}
