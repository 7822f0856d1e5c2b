package main

import (
	"path/filepath"
	"regexp"
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

// startStripped runs testenv.WaitingApp with a stripped copy of py
// (testenv.Stripped) and returns that copy and the process's PID.
func startStripped(t *testing.T, py string) (exe string, pid int) {
	t.Helper()
	exe, env := testenv.Stripped(t, py)
	return exe, testenv.StartPython(t, exe, "", env...)
}

// TestWalkerStrippedThroughPyattach: an interpreter with no symbol table,
// no DWARF and no CPython extension (uv's, Docker's) has no py-bt in plain
// gdb or lldb; through pyattach gdb and pyattach lldb it has, from the
// walker, with frames and line numbers. A static one (Debian's) and a
// shared libpython (pyenv's).
func TestWalkerStrippedThroughPyattach(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	for _, py := range []string{testenv.Debian(t).Exe, testenv.Pyenv(t, "3.11+").Exe} {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(py))), func(t *testing.T) {
			_, pid := startStripped(t, py)
			checkPlainGDBLacksPyBt(t, gdb, pid)
			henv := homeEnv(t)
			pyattachPyBt(t, "pyattach gdb, stripped", "", henv, gdbPyBt(pid, "--offline")...)
			pyattachPyBt(t, "pyattach --fast gdb, stripped", "", henv, gdbPyBt(pid, "--offline", "--fast")...)
			pyattachPyBt(t, "pyattach lldb, stripped", "", henv, "--offline", "lldb", "-b", "-p", strconv.Itoa(pid), "-o", "py-bt")
		})
	}
}

// TestWalkerLLDBPyBt: lldb had no py-bt at all; pyattach lldb has, on
// Debian's python3.11 in a --copies venv (every thread with "py-bt all").
func TestWalkerLLDBPyBt(t *testing.T) {
	testenv.Need(t, "lldb")
	pid := strconv.Itoa(startVenvCopies(t, testenv.Debian(t).Exe))
	out := pyattachPyBt(t, "pyattach lldb py-bt all", "", homeEnv(t), "--offline", "lldb", "-b", "-p", pid, "-o", "py-bt all")
	if !regexp.MustCompile(`(?m)^\* 1 Thread ` + pid + ` "[^"]+", interpreter 0, .*\nTraceback`).MatchString(out) {
		t.Errorf("py-bt all does not head the main thread's stack with its py-threads line:\n%s", out)
	}
}

// TestWalkerInitGDB: a project's .gdbinit from pyattach init loads the
// walker, so a plain "gdb -p" in the project has py-bt for a stripped
// interpreter.
func TestWalkerInitGDB(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	exe, pid := startStripped(t, testenv.Debian(t).Exe)
	project := t.TempDir()
	henv := homeEnv(t)
	mustRunIn(t, "pyattach init", project, henv, pyattachBin(t), "--offline", "init", "--gdb", "--trust", "--python", exe, project)
	out, _ := runIn(t, project, henv, gdb, "-batch", "-p", strconv.Itoa(pid), "-ex", "py-bt")
	checkPyBt(t, "plain gdb with the project's .gdbinit", out)
}

// TestWalkerFastReadsNoDWARF: pyattach --fast gdb reads no debug
// information (gdb -readnever, CPython's extension not loaded) and py-bt
// still prints every frame, from the walker, even where the DWARF is
// installed (Debian's python3.11 with python3.11-dbg, in a --copies venv).
func TestWalkerFastReadsNoDWARF(t *testing.T) {
	testenv.Need(t, "gdb")
	pid := strconv.Itoa(startVenvCopies(t, testenv.Debian(t).Exe))
	henv := homeEnv(t)
	out, err := runIn(t, "", henv, pyattachBin(t), "--offline", "--print", "--fast", "gdb", "-p", pid)
	if err != nil || !strings.Contains(out, " -readnever -ix ") || !strings.Contains(out, "\nset auto-load python-scripts off\n") {
		t.Errorf("--fast does not start gdb with -readnever and CPython's extension off: %v\n%s", err, out)
	}
	// CPython's extension defines PyBacktrace in gdb's __main__ when it
	// is loaded (the walker's py-bt also shows <built-in method ...>).
	out = pyattachPyBt(t, "pyattach --fast gdb", "", henv, "--offline", "--fast", "gdb", "-batch", "-p", pid, "-ex", "py-bt", "-ex", "maint info symtabs",
		"-ex", "python print('cpython extension loaded:', hasattr(__import__('__main__'), 'PyBacktrace'))")
	if strings.Contains(out, "{ symtab ") || !strings.Contains(out, "cpython extension loaded: False") {
		t.Errorf("gdb read DWARF, or CPython's extension answered:\n%s", out)
	}
}

// TestWalkerAttachInside: pyattach gdb with no target starts gdb with the
// walker, and "attach PID" inside it gets py-bt (the version read from
// the process: Py_Version, _Py_DebugOffsets), for a stripped 3.11+
// interpreter with no CPython extension.
func TestWalkerAttachInside(t *testing.T) {
	testenv.Need(t, "gdb")
	_, pid := startStripped(t, testenv.Pyenv(t, "3.11+").Exe)
	pyattachPyBt(t, "attach inside pyattach gdb", "", homeEnv(t), "--offline", "gdb", "-nx", "-batch", "-ex", "attach "+strconv.Itoa(pid), "-ex", "py-bt")
}
