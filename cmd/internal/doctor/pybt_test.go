package doctor

import (
	"context"
	"errors"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
)

// pybtCheck on faked findings: who answers py-bt, and why.
func TestPybtCheck(t *testing.T) {
	res := func(v, lib string) *target.Result {
		return &target.Result{Target: "1234", Interpreter: "/usr/bin/python3", Exe: "/usr/bin/python3", Libpython: lib, Python: target.Python{Version: v}}
	}
	with := func(di *debugsearch.Info, mods ...debugsearch.Module) *debugsearch.Info {
		di.Modules = mods
		return di
	}
	cases := []struct {
		name   string
		res    *target.Result
		di     *debugsearch.Info
		status string
		want   string
		fix    string
	}{
		{"no extension, walker covers", res("3.12.99", ""), &debugsearch.Info{},
			OK, "pyattach's walker answers in pyattach gdb and pyattach lldb (from memory): no CPython extension was found", "pyattach init --gdb --trust"},
		{"no extension, 3.6", res("3.6.15", ""), &debugsearch.Info{},
			Fail, "no py-bt for Python 3.6.15: no CPython extension was found, and pyattach's walker covers 3.7 and later", "pyattach fetch-extension 1234 (downloads"},
		{"matching extension, full DWARF", res("3.11.99", ""), with(ext("/x/python3.11-gdb.py", "3.11", true), dwarf("/usr/bin/python3", "2", "2", true)),
			OK, "py-bt: CPython's extension /x/python3.11-gdb.py answers (it reads this build's frames); pyattach's walker stands in", ""},
		{"matching extension, 3.6", res("3.6.15", ""), with(ext("/x/python3.6-gdb.py", "3.6", true), dwarf("/usr/bin/python3", "2", "0", false)),
			OK, "py-bt: CPython's extension /x/python3.6-gdb.py answers; pyattach's walker does not cover Python 3.6.15", ""},
		{"3.13 -O2: CPython's cannot read the frame", res("3.13.5", "/usr/lib/libpython3.13.so.1.0"), with(ext("/x/python3.13-gdb.py", "3.13", true), dwarf("/usr/lib/libpython3.13.so.1.0", "2", "2", false)),
			OK, "walker answers in pyattach gdb and pyattach lldb (from memory): Python 3.13 built with -O2: its eval loop's frame is optimised out", ""},
		{"3.13 -O0 reads", res("3.13.5", "/usr/lib/libpython3.13.so.1.0"), with(ext("/x/python3.13-gdb.py", "3.13", true), dwarf("/usr/lib/libpython3.13.so.1.0", "2", "0", false)),
			OK, "CPython's extension /x/python3.13-gdb.py answers", ""},
		{"-g1", res("3.12.99", ""), with(ext("/x/python3.12-gdb.py", "3.12", true), dwarf("/usr/bin/python3", "1", "0", false)),
			OK, "/usr/bin/python3 was built with -g1", ""},
		{"extension of another version", res("3.12.99", ""), ext("/x/python3.10-gdb.py", "3.10", false),
			OK, "the CPython extension found is for Python 3.10", ""},
		{"extension of another version, 3.6", res("3.6.15", ""), ext("/x/python3.10-gdb.py", "3.10", false),
			Fail, "no py-bt for Python 3.6.15: the CPython extension found is for Python 3.10", "pyattach fetch-extension 1234"},
		{"stripped", res("3.11.99", ""), with(ext("/x/python3.11-gdb.py", "3.11", true), kind("/usr/bin/python3", debugfile.KindSymtab)),
			OK, "/usr/bin/python3 has no full DWARF", ""},
	}
	for _, c := range cases {
		s, _ := newServices(t)
		want(t, c.name, s.pybtCheck(c.res, c.di), c.status, c.want, c.fix)
	}
}

func TestSourceChecks(t *testing.T) {
	ctx := context.Background()
	s, _ := newServices(t)
	if checks := s.sourceChecks(ctx, newResult(), &debugsearch.Info{}); len(checks) != 0 {
		t.Errorf("no Sources service: %+v", checks)
	}
	answer := func(m *SourceMap, err error) {
		s.Sources = func(context.Context, *target.Result, *debugsearch.Info) (*SourceMap, error) { return m, err }
	}
	answer(nil, &SourceRootsError{Err: errors.New("--source x: /x is not a directory")})
	want(t, "bad root", one(t, s.sourceChecks(ctx, newResult(), &debugsearch.Info{}), "sources"), Warn, "--source x: /x is not a directory", "")
	answer(nil, errors.New("read DWARF of\n/x: truncated"))
	want(t, "no mapping", one(t, s.sourceChecks(ctx, newResult(), &debugsearch.Info{}), "sources"), Skip, "read DWARF of /x: truncated", "")
	answer(&SourceMap{Modules: 3, Rules: 2}, nil)
	want(t, "all found", one(t, s.sourceChecks(ctx, newResult(), &debugsearch.Info{}), "sources"), OK, "the sources of 3 modules are found (2 rules)", "")
	answer(&SourceMap{Modules: 3, Unresolved: []SourceGroup{
		{Prefix: "/project/build/_deps/echion-src", Files: 12, Hint: "pyattach --source echion=DIR"},
		{Prefix: "/tmp/python-build.1/Python-3.12.99", Files: 400, Hint: "pyattach --source DIR"},
	}}, nil)
	checks := byID(s.sourceChecks(ctx, newResult(), &debugsearch.Info{}), "sources")
	if len(checks) != 2 {
		t.Fatalf("%+v", checks)
	}
	want(t, "missing", checks[0], Warn, "12 source files under /project/build/_deps/echion-src are not on this machine (list and source list show \"No such file or directory\")", "pyattach --source echion=DIR")
	want(t, "missing 2", checks[1], Warn, "400 source files under /tmp/python-build.1/Python-3.12.99", "pyattach --source DIR")

	// A distribution's CPython: a note, list in those frames is all
	// that is lost.
	answer(&SourceMap{Modules: 1, Unresolved: []SourceGroup{
		{Prefix: "/build/reproducible-path/python3.11-3.11.99", Files: 309, Hint: "apt-get source python3.11", Shipped: true},
	}}, nil)
	want(t, "shipped", one(t, s.sourceChecks(ctx, newResult(), &debugsearch.Info{}), "sources"), Note, "309 source files under /build/reproducible-path/python3.11-3.11.99 are not on this machine: list in those native frames shows \"No such file or directory\"; py-bt and py-list do not need them", "apt-get source python3.11")
	// No module names a source file (a stripped build): nothing found,
	// nothing missing.
	answer(&SourceMap{}, nil)
	want(t, "no modules", one(t, s.sourceChecks(ctx, newResult(), &debugsearch.Info{}), "sources"), Note, "no module's debug information names source files", "")
}
