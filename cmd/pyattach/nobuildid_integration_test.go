package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/testenv"
)

// timeSleepLine is a native frame of time.sleep with its file and line,
// which only the twin's DWARF gives: lldb names time_sleep, gdb the
// function inlined into it, pysleep.
var timeSleepLine = regexp.MustCompile(`(time_sleep|pysleep)[^\n]* at [^\n]*timemodule\.c:\d+`)

// An interpreter made as python-build-standalone's are (uv installs
// them): the newest pyenv build from 3.11 on, its interpreter and
// libpython without a GNU build-id, stripped, with their unstripped twins
// in another directory (testenv.NoBuildID). A symlinked and a --copies
// venv of it resolve to it (the copy proved by content); debuginfo finds
// the twins by their loadable segments under --debug-dir; pyattach gdb's
// and lldb's bt show time_sleep at timemodule.c:LINE from them, which
// they do not without the twin, and py-bt works.
func TestRealNoBuildID(t *testing.T) {
	py := testenv.Pyenv(t, "3.11+")
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	b := testenv.NoBuildID(t, py)
	if b.Libpython == "" {
		t.Fatalf("%s: a static build; this test follows the shared libpython", py.Exe)
	}
	// The venvs' pythons, the processes and pyattach load the copied
	// libpython (the build's RUNPATH names the original's directory).
	for _, kv := range b.Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	if out := mustRunIn(t, "ldd", "", nil, testenv.Need(t, "ldd"), b.Exe); !strings.Contains(out, b.Libpython) {
		t.Fatalf("%s does not load %s:\n%s", b.Exe, b.Libpython, out)
	}

	links := makeVenv(t, b.Exe, false)
	copies := makeVenv(t, b.Exe, true)
	r := runJSON(t, links)
	if r.Interpreter != b.Exe || r.Via != "symlink" || r.BuildID != "" || r.Libpython != b.Libpython || r.LibpythonBuildID != "" || r.Python.Version != py.Version {
		t.Errorf("symlinked venv: interpreter %s via %s build-id %q libpython %s (%q) python %s; want %s symlink, no build-ids, %s, %s",
			r.Interpreter, r.Via, r.BuildID, r.Libpython, r.LibpythonBuildID, r.Python.Version, b.Exe, b.Libpython, py.Version)
	}
	r = runJSON(t, copies)
	if r.Interpreter != b.Exe || r.Via != "pyvenv.cfg" || r.MatchedBy != "content" || r.Libpython != b.Libpython || r.Venv.Kind != "copies" {
		t.Errorf("--copies venv: interpreter %s via %s matched_by %q libpython %s venv %s; want %s pyvenv.cfg content %s copies",
			r.Interpreter, r.Via, r.MatchedBy, r.Libpython, r.Venv.Kind, b.Exe, b.Libpython)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"resolve", copies}, nil, &stdout, &stderr, testEnv(t)); code != 0 {
		t.Fatalf("resolve %s: exit %d\n%s", copies, code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "matched by content") {
		t.Errorf("resolve %s does not say the copy was matched by content:\n%s", copies, stdout.String())
	}

	exe := filepath.Join(copies, "bin", "python")
	pid := testenv.StartPython(t, exe, "")
	spid := strconv.Itoa(pid)
	if r := runJSON(t, spid); r.Interpreter != b.Exe || r.MatchedBy != "content" || r.Libpython != b.Libpython {
		t.Errorf("process of the --copies venv: interpreter %s matched_by %q libpython %s; want %s content %s", r.Interpreter, r.MatchedBy, r.Libpython, b.Exe, b.Libpython)
	}
	di := debugJSON(t, "--debug-dir", b.Twin, spid)
	twins := map[string]string{
		exe:         filepath.Join(b.Twin, "bin", filepath.Base(b.Exe)),
		b.Libpython: filepath.Join(b.Twin, "lib", filepath.Base(b.Libpython)),
	}
	for mod, twin := range twins {
		m := moduleOf(t, di, mod)
		if m.Debug.Via != debugfile.ViaContent || m.Debug.Path != twin || m.Debug.Kind != debugfile.KindDWARF {
			t.Errorf("debuginfo: %s: %s %s %s; want content %s dwarf", mod, m.Debug.Via, m.Debug.Path, m.Debug.Kind, twin)
		}
	}

	bin := pyattachBin(t)
	env := homeEnv(t)
	gdb := []string{"gdb", "-nx", "-batch", "-p", spid, "-ex", "bt", "-ex", "py-bt"}
	lldb := []string{"lldb", "-b", "-p", spid, "-o", "bt", "-o", "py-bt"}
	lenv := append(append([]string(nil), env...), testenv.LLDBEnv()...)
	// Without the twin the frames have no lines: the test can fail.
	if out := mustRunIn(t, "pyattach gdb without the twin", "", env, bin, append([]string{"--offline"}, gdb...)...); timeSleepLine.MatchString(out) {
		t.Fatalf("gdb shows time_sleep's line without the twin:\n%s", out)
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{{"gdb", env, gdb}, {"lldb", lenv, lldb}} {
		out := mustRunIn(t, "pyattach "+c.name, "", c.env, bin, append([]string{"--offline", "--debug-dir", b.Twin}, c.args...)...)
		if !timeSleepLine.MatchString(out) {
			t.Errorf("pyattach %s: bt shows no time_sleep at timemodule.c:LINE:\n%s", c.name, out)
		}
		checkPyBt(t, "pyattach "+c.name, out)
		if strings.Contains(out, "cannot add") || strings.Contains(out, "does not match any existing module") {
			t.Errorf("pyattach %s: a twin was not added:\n%s", c.name, out)
		}
		if c.name == "lldb" {
			// The executable's twin has another name (python3.X for
			// bin/python): lldb takes it only with --shlib.
			for mod, twin := range twins {
				if want := "symbol file '" + twin + "' has been added to '" + mod + "'"; !strings.Contains(out, want) {
					t.Errorf("pyattach lldb: no %q:\n%s", want, out)
				}
			}
		}
	}
}
