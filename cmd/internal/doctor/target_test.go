package doctor

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
)

// Run with each way resolving or collecting can end.
func TestRunTarget(t *testing.T) {
	ctx := context.Background()
	s, _ := newServices(t)
	s.Resolve = func(context.Context, string) (*target.Result, error) {
		return nil, &target.NotPythonError{PID: 100, Comm: "bash", Exe: "/usr/bin/bash",
			Children: []target.Child{{PID: 101, Comm: "python3.12", Cmdline: "python3.12 app.py"}, {PID: 102, Cmdline: "python3.12 b.py"}}}
	}
	checks := Run(ctx, s, "100")
	want(t, "launcher", one(t, checks, "target"), Fail, "process 100 (bash) is a launcher, not Python; its Python children: 101 (python3.12 app.py), 102 (python3.12 b.py)", "pyattach doctor 101")
	one(t, checks, "ptrace")
	if !Failed(checks) {
		t.Error("a failed target is not Failed")
	}
	// The checks come by what they cost (failures first), then in their
	// fixed order, whatever finishes first.
	var ids []string
	for _, c := range checks {
		ids = append(ids, c.Status+":"+c.ID)
	}
	if got := strings.Join(ids, " "); got != "fail:gdb fail:target ok:ptrace skip:lldb skip:debuginfod" {
		t.Errorf("order %s", got)
	}

	s.Resolve = func(context.Context, string) (*target.Result, error) {
		return nil, &target.NotPythonError{PID: 100, Comm: "sleep", Exe: "/usr/bin/sleep"}
	}
	want(t, "not Python", one(t, Run(ctx, s, "100"), "target"), Fail, "process 100 (sleep, /usr/bin/sleep) is not a Python process", "ps -ef | grep -i python")

	s.Resolve = func(context.Context, string) (*target.Result, error) {
		return nil, errors.New("open /nope:\nno such file")
	}
	s.Hint = func(err error) string { return "hint for: " + err.Error() }
	checks = Run(ctx, s, "/nope")
	want(t, "error", one(t, checks, "target"), Fail, "open /nope: no such file", "hint for: open /nope:")
	if len(byID(checks, "ptrace")) != 0 {
		t.Errorf("ptrace checked for a target that does not resolve: %+v", checks)
	}
	s.Hint = nil
	if c := one(t, Run(ctx, s, "/nope"), "target"); c.Fix != "" {
		t.Errorf("no Hint service, fix %q", c.Fix)
	}

	s.Resolve = func(context.Context, string) (*target.Result, error) { return newResult(), nil }
	s.DebugInfo = func(context.Context, string, *target.Result) (*debugsearch.Info, error) {
		return nil, errors.New("read /opt/py/bin/python3.12: bad ELF")
	}
	checks = Run(ctx, s, "app/python3.12")
	want(t, "debug info fails", one(t, checks, "debug"), Fail, "read /opt/py/bin/python3.12: bad ELF", "")
	want(t, "resolved", one(t, checks, "target"), OK, "/opt/py/bin/python3.12: Python 3.12.99, runtime linked into the executable", "")

	// Everything collected: every kind of check answers once.
	s.DebugInfo = func(context.Context, string, *target.Result) (*debugsearch.Info, error) {
		return &debugsearch.Info{}, nil
	}
	s.Sources = func(context.Context, *target.Result, *debugsearch.Info) (*SourceMap, error) { return &SourceMap{}, nil }
	checks = Run(ctx, s, "app/python3.12")
	for _, id := range []string{"gdb", "lldb", "ptrace", "target", "venv", "extension", "pybt", "sources", "debuginfod"} {
		one(t, checks, id)
	}
}

// Run without a target checks the tools and ptrace only, and passes when
// nothing fails.
func TestRunNoTarget(t *testing.T) {
	s, _ := newServices(t,
		rule{match: []string{"/opt/gdb"}, out: "GNU gdb (GDB) 13.1\nPYTHON=3.11.99\n"},
		rule{match: []string{"script print(6*7)"}, out: "42\n"})
	s.FindDebugger = fakeDebuggers(map[string]string{"gdb": "/opt/gdb", "lldb": "/opt/lldb"})
	s.Resolve = func(context.Context, string) (*target.Result, error) {
		t.Error("Resolve called without a target")
		return nil, errors.New("no")
	}
	checks := Run(context.Background(), s, "")
	if len(checks) != 4 || Failed(checks) {
		t.Errorf("checks %+v", checks)
	}
}

func TestTargetFacts(t *testing.T) {
	res := newResult()
	res.Static, res.Libpython = false, "/opt/py/lib/libpython3.12.so.1.0"
	res.Shim, res.ShimVersion = "/home/u/.pyenv/shims/python", "3.12.99"
	res.Embedded, res.Exe = true, "/usr/bin/uwsgi"
	res.Container, res.Root = true, "/proc/77/root"
	res.ExeDeleted, res.PID = true, 77
	res.Python.DebugBuild, res.Python.FreeThreaded = true, true
	checks := targetFacts(res)
	want(t, "target", one(t, checks, "target"), OK, "/opt/py/bin/python3.12: Python 3.12.99, libpython /opt/py/lib/libpython3.12.so.1.0", "")
	want(t, "shim", one(t, checks, "target.shim"), OK, "/home/u/.pyenv/shims/python is a pyenv shim; pyenv runs /opt/py/bin/python3.12 (3.12.99)", "")
	want(t, "embedded", one(t, checks, "target.embedded"), OK, "/usr/bin/uwsgi embeds Python through /opt/py/lib/libpython3.12.so.1.0", "")
	want(t, "container", one(t, checks, "target.container"), Warn, "its files are read under /proc/77/root", "lldb 14 cannot")
	want(t, "deleted", one(t, checks, "target.deleted"), Warn, "the executable /usr/bin/uwsgi was deleted or replaced", "pyattach gdb -p 77 (it reads the running binary through /proc/77/exe)")
	want(t, "debug build", one(t, checks, "python.debug-build"), OK, "a debug build (Py_DEBUG, ABI flag d)", "")
	want(t, "free-threaded", one(t, checks, "python.free-threaded"), OK, "a free-threaded build (ABI flag t)", "")

	if checks := targetFacts(newResult()); len(checks) != 1 {
		t.Errorf("a plain interpreter: %+v", checks)
	}
}

func TestVenvCheck(t *testing.T) {
	res := newResult()
	res.Exe, res.Interpreter = "/p/.venv/bin/python3", "/usr/bin/python3.11"
	res.Venv = target.Venv{Path: "/p/.venv", Kind: "copies"}
	auto := &debugsearch.Info{Extensions: debugsearch.Extensions{GDB: debugsearch.GDBAutoLoadDir + "/usr/bin/python3.11-gdb.py"}}
	c := venvCheck(res, auto)
	want(t, "copies", c, Warn, "plain gdb -p has no py-bt here: /p/.venv/bin/python3 is a copy of /usr/bin/python3.11 (venv made with --copies)", "pyattach gdb -p PID\nor plain gdb: gdb -iex 'file /usr/bin/python3.11' -p PID")
	if strings.Contains(c.Fix, "source") {
		t.Errorf("gdb auto-loads %s by the interpreter's path, yet the fix sources it: %q", auto.Extensions.GDB, c.Fix)
	}
	res.PID = 4242
	other := &debugsearch.Info{Extensions: debugsearch.Extensions{GDB: "/home/u/ext/python3.11-gdb.py"}}
	want(t, "copies, a PID", venvCheck(res, other), Warn, "copy", "pyattach gdb -p 4242\nor plain gdb: gdb -iex 'file /usr/bin/python3.11' -ex 'source /home/u/ext/python3.11-gdb.py' -p 4242")

	res.Venv.Kind = "symlinks"
	want(t, "symlinks", venvCheck(res, other), OK, "/p/.venv is a symlinked venv: gdb reaches /usr/bin/python3.11 through it", "")
	res.Venv.Kind = "conda"
	want(t, "conda", venvCheck(res, other), OK, "a conda environment", "")
	res.Venv.Kind = ""
	want(t, "none", venvCheck(res, other), OK, "not in a virtualenv", "")
}

// The fake host root stands for the machine's distribution.
func distro(t *testing.T, root, name string) {
	t.Helper()
	writeFile(t, filepath.Join(root, "etc", name), "13\n")
}
