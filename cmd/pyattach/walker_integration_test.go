package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// strippedPython copies py (and the libpython it loads, when shared) with
// every symbol table and debug section removed but the dynamic symbols,
// as uv's and Docker's builds ship, and returns the copy and the
// environment that runs it.
func strippedPython(t *testing.T, py string) (string, []string) {
	t.Helper()
	strip := needTool(t, "strip")
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin", filepath.Base(py))
	os.MkdirAll(filepath.Dir(exe), 0o755)
	if out, err := exec.Command(strip, "--strip-all", "-o", exe, py).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	prefix, err := exec.Command(py, "-c", "import sys; print(sys.base_prefix)").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PYTHONHOME=" + strings.TrimSpace(string(prefix))}
	libdir, _ := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_config_var('LIBDIR') or '')").Output()
	ldlib, _ := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_config_var('LDLIBRARY') or '')").Output()
	lib := filepath.Join(strings.TrimSpace(string(libdir)), strings.TrimSpace(string(ldlib)))
	if strings.HasSuffix(lib, ".so") {
		real, err := filepath.EvalSymlinks(lib)
		if err == nil {
			soname := filepath.Base(real)
			out := filepath.Join(dir, "lib", soname)
			os.MkdirAll(filepath.Dir(out), 0o755)
			if b, err := exec.Command(strip, "--strip-all", "-o", out, real).CombinedOutput(); err != nil {
				t.Fatalf("strip: %v\n%s", err, b)
			}
			// The name the executable asks for (libpython3.12.so.1.0).
			if m, _ := filepath.Glob(lib + ".*"); len(m) > 0 && filepath.Base(m[0]) != soname {
				os.Symlink(soname, filepath.Join(dir, "lib", filepath.Base(m[0])))
			}
			env = append(env, "LD_LIBRARY_PATH="+filepath.Dir(out))
		}
	}
	return exe, env
}

// pyenvPython is a pyenv 3.11+ interpreter with a shared libpython, the
// newest found, or "" (a failure in CI).
func pyenvPython(t *testing.T) string {
	home, _ := os.UserHomeDir()
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		root = filepath.Join(home, ".pyenv")
	}
	m, _ := filepath.Glob(filepath.Join(root, "versions", "3.1[1-9].*", "bin", "python3"))
	if len(m) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no pyenv 3.11+ version found; CI machines have them")
		}
		t.Skip("no pyenv 3.11+ version")
	}
	return m[len(m)-1]
}

// TestWalkerStrippedThroughPyattach: an interpreter with no symbol table,
// no DWARF and no CPython extension (uv's, Docker's) has no py-bt in plain
// gdb or lldb; through pyattach gdb and pyattach lldb it has, from the
// walker, with frames and line numbers. A static one (Debian's) and a
// shared libpython (pyenv's).
func TestWalkerStrippedThroughPyattach(t *testing.T) {
	gdb := needTool(t, "gdb")
	needTool(t, "lldb")
	bin := pyattachBin(t)
	for _, py := range []string{need(t, "/usr/bin/python3.11"), pyenvPython(t)} {
		py := py
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(py))), func(t *testing.T) {
			exe, env := strippedPython(t, py)
			pid := strconv.Itoa(startPython(t, exe, env...))
			out, _ := runIn(t, "", nil, gdb, "-nx", "-batch", "-p", pid, "-ex", "py-bt")
			if !strings.Contains(out, `Undefined command: "py-bt"`) {
				t.Errorf("plain gdb was expected to lack py-bt:\n%s", out)
			}
			home := t.TempDir()
			henv := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
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
	needTool(t, "lldb")
	py := need(t, "/usr/bin/python3.11")
	venv := makeVenv(t, py, true)
	pid := strconv.Itoa(startPython(t, filepath.Join(venv, "bin", "python")))
	home := t.TempDir()
	henv := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
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
	gdb := needTool(t, "gdb")
	py := need(t, "/usr/bin/python3.11")
	exe, env := strippedPython(t, py)
	project := t.TempDir()
	home := t.TempDir()
	henv := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
	if out, err := runIn(t, project, henv, pyattachBin(t), "--offline", "init", "--gdb", "--trust", "--python", exe, project); err != nil {
		t.Fatalf("pyattach init: %v\n%s", err, out)
	}
	pid := strconv.Itoa(startPython(t, exe, env...))
	out, _ := runIn(t, project, henv, gdb, "-batch", "-p", pid, "-ex", "py-bt")
	checkPyBt(t, "plain gdb with the project's .gdbinit", out)
}

// TestWalkerFastReadsNoDWARF: pyattach --fast gdb reads no debug
// information (gdb -readnever, CPython's extension not loaded) and py-bt
// still prints every frame, from the walker, even where the DWARF is
// installed (Debian's python3.11 with python3.11-dbg, in a --copies venv).
func TestWalkerFastReadsNoDWARF(t *testing.T) {
	needTool(t, "gdb")
	py := need(t, "/usr/bin/python3.11")
	venv := makeVenv(t, py, true)
	pid := strconv.Itoa(startPython(t, filepath.Join(venv, "bin", "python")))
	home := t.TempDir()
	henv := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
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
	needTool(t, "gdb")
	py := pyenvPython(t)
	exe, env := strippedPython(t, py)
	pid := strconv.Itoa(startPython(t, exe, env...))
	home := t.TempDir()
	henv := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
	out, err := runIn(t, "", henv, pyattachBin(t), "--offline", "gdb", "-nx", "-batch", "-ex", "attach "+pid, "-ex", "py-bt")
	if err != nil {
		t.Fatalf("pyattach gdb, then attach: %v\n%s", err, out)
	}
	checkPyBt(t, "attach inside pyattach gdb", out)
}
