package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/target"
)

// runJSONEnv runs `pyattach resolve --json TARGET` in-process with env.
func runJSONEnv(t testing.TB, tgt string, env []string) *target.Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"resolve", "--json", tgt}, nil, &stdout, &stderr, env); code != 0 {
		t.Fatalf("pyattach resolve --json %s: exit %d\n%s", tgt, code, stderr.String())
	}
	var r target.Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout.String())
	}
	return &r
}

// A bare copy of Debian's python3.11 (no pyvenv.cfg, no orig-prefix.txt,
// no lib/python3.11 beside it), as an app vendors it in <app>/bin/python3:
// by path and by PID it is mapped back to /usr/bin/python3.11 by its equal
// build-id, and debuginfo finds Debian's gdb extension for it.
func TestRealBareCopyDebian(t *testing.T) {
	py := need(t, "/usr/bin/python3.11")
	id := readelfID(t, py)
	app := t.TempDir()
	exe := filepath.Join(app, "bin", "python3")
	copyFile(t, py, exe)
	// The version the interpreter reports itself, not one machine's.
	out, err := exec.Command(py, "-c", "import platform; print(platform.python_version())").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := wantPython{interpreter: py, version: strings.TrimSpace(string(out)), static: true, venvKind: "none"}

	r := runJSON(t, exe)
	checkResult(t, "path", r, want)
	if r.Exe != exe || r.Via != "candidates" || r.ExeBuildID != id {
		t.Errorf("path: exe %s via %s exe_build_id %s, want %s candidates %s", r.Exe, r.Via, r.ExeBuildID, exe, id)
	}

	pid := startPython(t, exe)
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
	home, _ := os.UserHomeDir()
	versions, _ := filepath.Glob(filepath.Join(home, ".pyenv", "versions", "[23].*"))
	if len(versions) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no pyenv versions under %s", filepath.Join(home, ".pyenv"))
		}
		t.Skip("no pyenv versions")
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "PYENV_ROOT" && k != "PYENV_VERSION" && k != "PATH" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+t.TempDir(), "PATH=/usr/bin:/bin")
	for _, prefix := range versions {
		full := filepath.Base(prefix)
		parts := strings.Split(full, ".")
		if len(parts) != 3 {
			continue
		}
		mm := parts[0] + "." + parts[1]
		t.Run(full, func(t *testing.T) {
			orig := filepath.Join(prefix, "bin", "python"+mm)
			flags := ""
			if mm == "3.6" || mm == "3.7" {
				flags = "m"
			}
			lib := filepath.Join(prefix, "lib", "libpython"+mm+flags+".so.1.0")
			if _, err := os.Stat(lib); err != nil {
				t.Skipf("%s is not a shared-libpython build", prefix)
			}
			exe := filepath.Join(t.TempDir(), "app", "python")
			copyFile(t, orig, exe)
			want := wantPython{interpreter: orig, version: full, abiFlags: flags, libpython: lib, venvKind: "none"}
			runEnv := append(env, "LD_LIBRARY_PATH="+filepath.Dir(lib))

			r := runJSONEnv(t, exe, runEnv)
			checkResult(t, "path", r, want)
			if r.Via != "candidates" || r.ExeBuildID != readelfID(t, orig) {
				t.Errorf("path: via %s exe_build_id %s", r.Via, r.ExeBuildID)
			}

			pid := startPython(t, exe, "PYTHONHOME="+prefix, "LD_LIBRARY_PATH="+filepath.Dir(lib))
			r = runJSONEnv(t, strconv.Itoa(pid), env)
			checkResult(t, "pid", r, want)
			if r.Via != "candidates" || r.Exe != exe {
				t.Errorf("pid: via %s exe %s", r.Via, r.Exe)
			}
		})
	}
}
