package main

import (
	"context"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debuginfo"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/elfinfo"
)

// pybtCheck on faked findings: who answers py-bt, and why.
func TestPybtCheck(t *testing.T) {
	full := func(path, o string, lto bool) debuginfo.Module {
		return debuginfo.Module{Path: path, Debug: debugfile.Found{Kind: debugfile.KindDWARF, Producer: &elfinfo.Producer{GLevel: "2", OLevel: o, LTO: lto}}}
	}
	res := func(v, lib string) *target.Result {
		return &target.Result{Target: "1234", Interpreter: "/usr/bin/python3", Exe: "/usr/bin/python3", Libpython: lib, Python: target.Python{Version: v}}
	}
	cases := []struct {
		name   string
		res    *target.Result
		di     *debuginfo.Info
		status string
		want   string
	}{
		{"no extension, walker covers", res("3.12.1", ""), &debuginfo.Info{},
			"ok", "pyattach's walker answers in pyattach gdb and pyattach lldb (from memory): no CPython extension was found"},
		{"no extension, 3.6", res("3.6.15", ""), &debuginfo.Info{},
			"fail", "no py-bt for Python 3.6.15: no CPython extension was found"},
		{"matching extension, full DWARF", res("3.11.2", ""),
			&debuginfo.Info{Extensions: debuginfo.Extensions{GDB: "/x/python3.11-gdb.py", GDBVersion: "3.11", GDBVersionMatch: true}, Modules: []debuginfo.Module{full("/usr/bin/python3", "2", true)}},
			"ok", "py-bt: CPython's extension /x/python3.11-gdb.py answers"},
		{"3.13 -O2: CPython's cannot read the frame", res("3.13.5", "/usr/lib/libpython3.13.so.1.0"),
			&debuginfo.Info{Extensions: debuginfo.Extensions{GDB: "/x/python3.13-gdb.py", GDBVersion: "3.13", GDBVersionMatch: true}, Modules: []debuginfo.Module{full("/usr/lib/libpython3.13.so.1.0", "2", false)}},
			"ok", "walker answers in pyattach gdb and pyattach lldb (from memory): Python 3.13 built with -O2: its eval loop's frame is optimised out"},
		{"extension of another version", res("3.12.1", ""),
			&debuginfo.Info{Extensions: debuginfo.Extensions{GDB: "/x/python3.10-gdb.py", GDBVersion: "3.10"}},
			"ok", "the CPython extension found is for Python 3.10"},
		{"stripped", res("3.11.2", ""),
			&debuginfo.Info{Extensions: debuginfo.Extensions{GDB: "/x/python3.11-gdb.py", GDBVersion: "3.11", GDBVersionMatch: true}, Modules: []debuginfo.Module{{Path: "/usr/bin/python3", Debug: debugfile.Found{Kind: debugfile.KindSymtab}}}},
			"ok", "/usr/bin/python3 has no full DWARF"},
	}
	for _, c := range cases {
		got := pybtCheck(c.res, c.di)
		if got.Status != c.status || !strings.Contains(got.Summary, c.want) {
			t.Errorf("%s: %s %q, want %s and %q", c.name, got.Status, got.Summary, c.status, c.want)
		}
	}
}

// debugChecks on faked findings: the program that embeds libpython
// (uwsgi) without debug information is a warning that says what is
// lost; libpython without it fails only where the walker cannot read
// the frames instead.
func TestDebugChecksEmbedded(t *testing.T) {
	none := func(p string) debuginfo.Module {
		return debuginfo.Module{Path: p, BuildID: "ab12", Debug: debugfile.Found{Kind: debugfile.KindNone}}
	}
	res := &target.Result{Target: "1234", Exe: "/usr/bin/uwsgi-core", Interpreter: "/usr/lib/libpython3.11.so.1.0",
		Libpython: "/usr/lib/libpython3.11.so.1.0", Embedded: true, Python: target.Python{Version: "3.11.2"}}
	di := &debuginfo.Info{Modules: []debuginfo.Module{none("/usr/bin/uwsgi-core"), none("/usr/lib/libpython3.11.so.1.0")}}
	checks := debugChecks(res, di)
	byID := map[string]Check{}
	for _, c := range checks {
		byID[c.ID] = c
	}
	if c := byID["debug.uwsgi-core"]; c.Status != statusWarn || !strings.Contains(c.Summary, "py-bt does not need it") {
		t.Errorf("uwsgi-core: %+v", c)
	}
	if c := byID["debug.libpython3.11.so.1.0"]; c.Status != statusWarn || !strings.Contains(c.Summary, "pyattach's walker still reads them") {
		t.Errorf("libpython, walker covers 3.11: %+v", c)
	}
	res.Python.Version = "3.6.15"
	for _, c := range debugChecks(res, di) {
		if c.ID == "debug.libpython3.11.so.1.0" && c.Status != statusFail {
			t.Errorf("libpython of 3.6 without debug information: %+v", c)
		}
		if c.ID == "debug.uwsgi-core" && c.Status != statusWarn {
			t.Errorf("uwsgi-core of 3.6: %+v", c)
		}
	}
}

// An extension of an unknown version never reads "is for Python ,".
func TestExtensionCheckUnknownVersion(t *testing.T) {
	res := &target.Result{Target: "1234", Python: target.Python{Version: "3.13.5"}}
	di := &debuginfo.Info{Extensions: debuginfo.Extensions{GDB: "/x/libpython.py"}}
	for _, c := range extensionChecks(context.Background(), res, di, &App{Env: []string{"PATH=/nonexistent"}}) {
		if c.ID == "extension" && (!strings.Contains(c.Summary, "is for an unknown Python version, the interpreter is 3.13.5") || strings.Contains(c.Summary, "Python ,")) {
			t.Errorf("extension of unknown version: %+v", c)
		}
	}
}
