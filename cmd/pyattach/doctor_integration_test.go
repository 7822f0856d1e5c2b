package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/detect/testenv"
)

type doctorOut struct {
	Checks []Check `json:"checks"`
}

func runDoctor(t *testing.T, env []string, args ...string) doctorOut {
	t.Helper()
	o, _ := runIn(t, "", env, pyattachBin(t), append([]string{"--offline", "doctor", "--json"}, args...)...)
	var d doctorOut
	if err := json.Unmarshal([]byte(o), &d); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, o)
	}
	return d
}

func findCheck(t *testing.T, d doctorOut, id string) Check {
	t.Helper()
	for _, c := range d.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", id, d.Checks)
	return Check{}
}

// The Debian --copies venv process: doctor warns why plain gdb has no
// py-bt, and both fixes it prints, run as given, make py-bt work.
func TestDoctorVenvCopiesFixesWork(t *testing.T) {
	testenv.Need(t, "gdb")
	py := testenv.NeedFile(t, "/usr/bin/python3.11", "")
	pid := startVenvCopies(t, py)
	c := findCheck(t, runDoctor(t, nil, strconv.Itoa(pid)), "venv")
	if c.Status != "warn" || !strings.Contains(c.Summary, "is a copy of /usr/bin/python3.11") {
		t.Fatalf("venv check: %+v", c)
	}
	lines := strings.Split(c.Fix, "\n")
	if len(lines) != 2 || lines[0] != "pyattach gdb -p "+strconv.Itoa(pid) || !strings.HasPrefix(lines[1], "or plain gdb: ") {
		t.Fatalf("fix: %q", c.Fix)
	}
	bin := pyattachBin(t)
	o, _ := runIn(t, "", nil, "sh", "-c", strings.Replace(lines[0], "pyattach", shquote.Quote(bin), 1)+" -batch -ex py-bt")
	checkPyBt(t, "doctor's pyattach fix", o)
	o, _ = runIn(t, "", nil, "sh", "-c", strings.TrimPrefix(lines[1], "or plain gdb: ")+" -batch -ex py-bt")
	checkPyBt(t, "doctor's plain gdb fix", o)
}

// TestDoctorVenvCopiesSaysPlainGDBHasNoPyBt: `pyattach doctor PID` of a
// process in a `python3 -m venv --copies` venv says, in its text output
// and without --verbose, that plain `gdb -p` has no py-bt there, why (the
// venv's python is a copy of the interpreter), and both fixes.
func TestDoctorVenvCopiesSaysPlainGDBHasNoPyBt(t *testing.T) {
	py := testenv.NeedFile(t, "/usr/bin/python3.11", "")
	venv := makeVenv(t, py, true)
	pid := testenv.StartPython(t, filepath.Join(venv, "bin", "python"), "")
	out, _ := runIn(t, "", nil, pyattachBin(t), "--offline", "doctor", strconv.Itoa(pid))
	p := strconv.Itoa(pid)
	for _, want := range []string{
		`(?m)^WARN  venv +plain gdb -p has no py-bt here: ` + regexp.QuoteMeta(filepath.Join(venv, "bin", "python")) +
			` is a copy of /usr/bin/python3\.11 \(venv made with --copies\), and gdb looks for CPython's extension by the executable's path`,
		`(?m)^      fix: pyattach gdb -p ` + p + `$`,
		`(?m)^           or plain gdb: gdb -iex 'file /usr/bin/python3\.11'( -ex 'source \S+')? -p ` + p + `$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("pyattach doctor %d lacks %s:\n%s", pid, want, out)
		}
	}
}

// A stripped copy of pyenv's libpython with no debug file anywhere.
func TestDoctorStrippedLibpython(t *testing.T) {
	testenv.Need(t, "strip")
	py := testenv.Pyenv(t, "3.11+")
	if py.Libpython() == "" {
		testenv.Missing(t, "pyenv's Python %s has no shared libpython", py.Version)
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib", filepath.Base(py.Libpython()))
	testenv.CopyFile(t, py.Libpython(), lib, 0)
	mustRunIn(t, "strip", "", nil, "strip", "--strip-all", lib)
	// LD_LIBRARY_PATH comes before DT_RUNPATH: the process maps the copy.
	pid := testenv.StartPython(t, py.Exe, "", "LD_LIBRARY_PATH="+filepath.Join(dir, "lib"))
	d := runDoctor(t, nil, strconv.Itoa(pid))
	c := findCheck(t, d, "debug."+filepath.Base(lib))
	if c.Status != "warn" || !strings.Contains(c.Summary, lib+" has no debug information") || !strings.Contains(c.Summary, "pyattach's walker still reads them") || c.Fix == "" {
		t.Errorf("stripped libpython: %+v", c)
	}
	c = findCheck(t, d, "pybt")
	if c.Status != "ok" || !strings.Contains(c.Summary, "pyattach's walker answers") || !strings.Contains(c.Summary, lib+" has no full DWARF") {
		t.Errorf("pybt for a stripped libpython: %+v", c)
	}
}

// A debug build is recognised.
func TestDoctorDebugBuild(t *testing.T) {
	py := testenv.NeedFile(t, "/usr/bin/python3.11d", "")
	c := findCheck(t, runDoctor(t, nil, py), "python.debug-build")
	if c.Status != "ok" || !strings.Contains(c.Summary, "Py_DEBUG") {
		t.Errorf("debug build: %+v", c)
	}
}

// TestDoctorLLDBBothPaths checks doctor's lldb check both ways, on the
// same lldb: with the PYTHONPATH its Python needs (testenv.LLDBEnv) the
// check is ok; with PYTHONPATH emptied (Debian's lldb 14 as installed,
// whose `lldb -P` is wrong) it is a note (pyattach lldb passes the path
// itself), and its fix for plain lldb, run as given, makes `script` work.
func TestDoctorLLDBBothPaths(t *testing.T) {
	testenv.Need(t, "lldb")
	good := testenv.LLDBEnv()
	if good == nil {
		testenv.Missing(t, "no lldb Python package under /usr/lib/llvm-*/lib/python3*/dist-packages (apt-get install python3-lldb-14)")
	}
	if c := findCheck(t, runDoctor(t, good), "lldb"); c.Status != "ok" {
		t.Errorf("with %s: lldb check %+v, want ok", good[0], c)
	}

	c := findCheck(t, runDoctor(t, []string{"PYTHONPATH="}), "lldb")
	if c.Status == "ok" {
		testenv.Missing(t, "this lldb's script command works without PYTHONPATH: the broken path cannot be made here")
	}
	m := regexp.MustCompile(`for plain lldb: (PYTHONPATH=\S+ \S+)$`).FindStringSubmatch(c.Fix)
	if c.Status != "note" || m == nil {
		t.Fatalf("without PYTHONPATH: lldb check %+v", c)
	}
	o, _ := runIn(t, "", []string{"PYTHONPATH="}, "sh", "-c", m[1]+" -b -o 'script print(6*7)'")
	if !regexp.MustCompile(`(?m)^42$`).MatchString(o) {
		t.Errorf("the fix %q did not make script work:\n%s", m[1], o)
	}
}
