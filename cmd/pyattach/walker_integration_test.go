package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// homeEnv puts HOME and the XDG directories in a directory of the
// test's own, to be added to the environment.
func homeEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
}

// TestWalkerStrippedThroughPyattach: an interpreter with no symbol table,
// no DWARF and no CPython extension (uv's, Docker's) has no py-bt in plain
// gdb or lldb; through pyattach gdb and pyattach lldb it has, from the
// walker, with frames and line numbers. A static one (Debian's) and a
// shared libpython (pyenv's).
func TestWalkerStrippedThroughPyattach(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	bin := pyattachBin(t)
	for _, py := range []string{testenv.Debian(t).Exe, testenv.Pyenv(t, "3.11+").Exe} {
		py := py
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(py))), func(t *testing.T) {
			exe, env := testenv.Stripped(t, py)
			pid := strconv.Itoa(testenv.StartPython(t, exe, "", env...))
			out, _ := runIn(t, "", nil, gdb, "-nx", "-batch", "-p", pid, "-ex", "py-bt")
			if !strings.Contains(out, `Undefined command: "py-bt"`) {
				t.Errorf("plain gdb was expected to lack py-bt:\n%s", out)
			}
			henv := homeEnv(t)
			out, err := runIn(t, "", henv, bin, "--offline", "gdb", "-nx", "-batch", "-p", pid, "-ex", "py-bt")
			if err != nil {
				t.Fatalf("pyattach gdb: %v\n%s", err, out)
			}
			checkPyBt(t, "pyattach gdb, stripped", out)
			out, err = runIn(t, "", henv, bin, "--offline", "--fast", "gdb", "-nx", "-batch", "-p", pid, "-ex", "py-bt")
			if err != nil {
				t.Fatalf("pyattach --fast gdb: %v\n%s", err, out)
			}
			checkPyBt(t, "pyattach --fast gdb, stripped", out)
			out, err = runIn(t, "", henv, bin, "--offline", "lldb", "-b", "-p", pid, "-o", "py-bt")
			if err != nil {
				t.Fatalf("pyattach lldb: %v\n%s", err, out)
			}
			checkPyBt(t, "pyattach lldb, stripped", out)
		})
	}
}

// TestWalkerLLDBPyBt: lldb had no py-bt at all; pyattach lldb has, on
// Debian's python3.11 in a --copies venv (every thread with "py-bt all").
func TestWalkerLLDBPyBt(t *testing.T) {
	testenv.Need(t, "lldb")
	py := testenv.Debian(t).Exe
	venv := makeVenv(t, py, true)
	pid := strconv.Itoa(testenv.StartPython(t, filepath.Join(venv, "bin", "python"), ""))
	henv := homeEnv(t)
	out, err := runIn(t, "", henv, pyattachBin(t), "--offline", "lldb", "-b", "-p", pid, "-o", "py-bt all")
	if err != nil {
		t.Fatalf("pyattach lldb: %v\n%s", err, out)
	}
	checkPyBt(t, "pyattach lldb py-bt all", out)
	if !strings.Contains(out, "thread #1, tid "+pid) {
		t.Errorf("py-bt all does not name the main thread:\n%s", out)
	}
}

// TestWalkerInitGDB: a project's .gdbinit from pyattach init loads the
// walker, so a plain "gdb -p" in the project has py-bt for a stripped
// interpreter.
func TestWalkerInitGDB(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	py := testenv.Debian(t).Exe
	exe, env := testenv.Stripped(t, py)
	project := t.TempDir()
	henv := homeEnv(t)
	if out, err := runIn(t, project, henv, pyattachBin(t), "--offline", "init", "--gdb", "--trust", "--python", exe, project); err != nil {
		t.Fatalf("pyattach init: %v\n%s", err, out)
	}
	pid := strconv.Itoa(testenv.StartPython(t, exe, "", env...))
	out, _ := runIn(t, project, henv, gdb, "-batch", "-p", pid, "-ex", "py-bt")
	checkPyBt(t, "plain gdb with the project's .gdbinit", out)
}

// TestWalkerFastReadsNoDWARF: pyattach --fast gdb reads no debug
// information (gdb -readnever, CPython's extension not loaded) and py-bt
// still prints every frame, from the walker, even where the DWARF is
// installed (Debian's python3.11 with python3.11-dbg, in a --copies venv).
func TestWalkerFastReadsNoDWARF(t *testing.T) {
	testenv.Need(t, "gdb")
	py := testenv.Debian(t).Exe
	venv := makeVenv(t, py, true)
	pid := strconv.Itoa(testenv.StartPython(t, filepath.Join(venv, "bin", "python"), ""))
	henv := homeEnv(t)
	out, err := runIn(t, "", henv, pyattachBin(t), "--offline", "--print", "--fast", "gdb", "-p", pid)
	if err != nil || !strings.Contains(out, " -readnever -ix ") || !strings.Contains(out, "\nset auto-load python-scripts off\n") {
		t.Errorf("--fast does not start gdb with -readnever and CPython's extension off: %v\n%s", err, out)
	}
	out, err = runIn(t, "", henv, pyattachBin(t), "--offline", "--fast", "gdb", "-batch", "-p", pid, "-ex", "py-bt", "-ex", "maint info symtabs")
	if err != nil {
		t.Fatalf("pyattach --fast gdb: %v\n%s", err, out)
	}
	checkPyBt(t, "pyattach --fast gdb", out)
	if strings.Contains(out, "{ symtab ") || strings.Contains(out, "<built-in method") {
		t.Errorf("gdb read DWARF, or CPython's extension answered:\n%s", out)
	}
}

// TestWalkerAttachInside: pyattach gdb with no target starts gdb with the
// walker, and "attach PID" inside it gets py-bt (the version read from
// the process: Py_Version, _Py_DebugOffsets), for a stripped 3.11+
// interpreter with no CPython extension.
func TestWalkerAttachInside(t *testing.T) {
	testenv.Need(t, "gdb")
	py := testenv.Pyenv(t, "3.11+").Exe
	exe, env := testenv.Stripped(t, py)
	pid := strconv.Itoa(testenv.StartPython(t, exe, "", env...))
	henv := homeEnv(t)
	out, err := runIn(t, "", henv, pyattachBin(t), "--offline", "gdb", "-nx", "-batch", "-ex", "attach "+pid, "-ex", "py-bt")
	if err != nil {
		t.Fatalf("pyattach gdb, then attach: %v\n%s", err, out)
	}
	checkPyBt(t, "attach inside pyattach gdb", out)
}
