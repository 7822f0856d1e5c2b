package doctor

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/elfinfo"
)

func dwarf(path, g, o string, lto bool) debugsearch.Module {
	return debugsearch.Module{Path: path, BuildID: "ab12", Debug: debugfile.Found{Kind: debugfile.KindDWARF, Via: debugfile.ViaBuildID, Path: "/usr/lib/debug/.build-id/ab/12.debug",
		Producer: &elfinfo.Producer{GLevel: g, OLevel: o, LTO: lto}}}
}

func kind(path string, k debugfile.Kind) debugsearch.Module {
	return debugsearch.Module{Path: path, BuildID: "ab12", Debug: debugfile.Found{Kind: k}}
}

// debugChecks on faked findings, for the interpreter (3.12: the walker
// covers it; 3.6: it does not), an extension module and a module that
// does not matter.
func TestDebugChecks(t *testing.T) {
	ctx := context.Background()
	const py = "/opt/py/bin/python3.12"
	ext := "/opt/py/lib/python3.12/site-packages/m.cpython-312-x86_64-linux-gnu.so"
	embedded := dwarf(py, "2", "0", false)
	embedded.Debug.Via = debugfile.ViaEmbedded
	noProducer := dwarf(ext, "2", "0", false)
	noProducer.Debug.Producer = nil
	lines := dwarf(ext, "2", "2", false)
	lines.Debug.Kind = debugfile.KindLineTables
	broken := kind(py, debugfile.KindNone)
	broken.Error = "read: bad ELF header"
	cases := []struct {
		name    string
		version string
		m       debugsearch.Module
		status  string
		summary string
		fix     string
	}{
		{"full DWARF", "3.12.99", dwarf(py, "2", "2", false), OK, py + ": debug information build-id /usr/lib/debug/.build-id/ab/12.debug (-g2 -O2)", ""},
		{"embedded", "3.12.99", embedded, OK, py + ": debug information embedded (-g2 -O0)", ""},
		{"no producer", "3.12.99", noProducer, OK, ext + ": debug information build-id", ""},
		{"-g1, walker", "3.12.99", dwarf(py, "1", "0", false), Warn, "built with -g1: line tables only, no locals: CPython's py-bt cannot read frames (pyattach's walker can)", "rebuild with -g"},
		{"-g1, 3.6", "3.6.15", dwarf(py, "1", "0", false), Fail, "built with -g1: line tables only, no locals: py-bt cannot read frames", "rebuild with -g"},
		{"-g1 extension", "3.6.15", dwarf(ext, "1", "0", false), Warn, "built with -g1", ""},
		{"line tables", "3.12.99", lines, Warn, "line tables only", ""},
		{"-O3, walker", "3.12.99", dwarf(py, "2", "3", false), Note, "optimised with -O3: some Python frames may show as (frame information optimized out) in plain gdb (pyattach's walker reads them)", "python3.Xd"},
		{"LTO, walker", "3.12.99", dwarf(py, "2", "2", true), Note, "optimised with -O2 and LTO", ""},
		{"-O3, 3.6", "3.6.15", dwarf(py, "2", "3", false), Warn, "optimised with -O3: some Python frames may show as (frame information optimized out)", "python3.Xd"},
		{"-O3 extension", "3.12.99", dwarf(ext, "2", "3", false), Warn, "optimised with -O3", ""},
		{"module error", "3.12.99", broken, Warn, py + ": read: bad ELF header", ""},
		{"stripped, walker", "3.12.99", kind(py, debugfile.KindNone), Warn, py + " has no debug information (build-id ab12): native frames show as ??, CPython's py-bt cannot read Python frames; pyattach's walker still reads them", "DEBUGINFOD_URLS"},
		{"stripped, 3.6", "3.6.15", kind(py, debugfile.KindNone), Fail, "has no debug information", "pyattach --debug-dir DIR"},
		{"symtab extension", "3.12.99", kind(ext, debugfile.KindSymtab), Warn, ext + " has a symbol table only (symtab): frames show function names", ""},
		{"minidebuginfo", "3.12.99", kind(py, debugfile.KindMiniDebugInfo), Warn, "has a symbol table only (minidebuginfo)", ""},
	}
	for _, c := range cases {
		s, _ := newServices(t)
		res := newResult()
		res.Python.Version = c.version
		checks := s.debugChecks(ctx, res, &debugsearch.Info{Modules: []debugsearch.Module{c.m, kind("/usr/lib/x86_64-linux-gnu/libc.so.6", debugfile.KindNone)}})
		if len(checks) != 1 {
			t.Errorf("%s: %+v (libc.so.6 does not matter)", c.name, checks)
			continue
		}
		if want := "debug." + filepath.Base(c.m.Path); checks[0].ID != want {
			t.Errorf("%s: id %s, want %s", c.name, checks[0].ID, want)
		}
		want(t, c.name, checks[0], c.status, c.summary, c.fix)
	}
}

// The program that embeds libpython (uwsgi) without debug information
// is a warning that says what is lost; libpython without it fails only
// where the walker cannot read the frames instead.
func TestDebugChecksEmbedded(t *testing.T) {
	s, _ := newServices(t)
	res := &target.Result{Target: "1234", Exe: "/usr/bin/uwsgi-core", Interpreter: "/usr/lib/libpython3.11.so.1.0",
		Libpython: "/usr/lib/libpython3.11.so.1.0", Embedded: true, Python: target.Python{Version: "3.11.99"}}
	di := &debugsearch.Info{Modules: []debugsearch.Module{kind("/usr/bin/uwsgi-core", debugfile.KindNone), kind("/usr/lib/libpython3.11.so.1.0", debugfile.KindNone)}}
	checks := s.debugChecks(context.Background(), res, di)
	want(t, "uwsgi-core", one(t, checks, "debug.uwsgi-core"), Warn, "(the program embedding Python) has no debug information: its own native frames show as ?? or without lines; py-bt does not need it", "")
	want(t, "libpython, walker", one(t, checks, "debug.libpython3.11.so.1.0"), Warn, "pyattach's walker still reads them", "")
	res.Python.Version = "3.6.15"
	checks = s.debugChecks(context.Background(), res, di)
	want(t, "libpython of 3.6", one(t, checks, "debug.libpython3.11.so.1.0"), Fail, "has no debug information", "")
	want(t, "uwsgi-core of 3.6", one(t, checks, "debug.uwsgi-core"), Warn, "py-bt does not need it", "")
}

// The fix for missing debug information names the package of the
// distribution that runs the module: the host's (a fake host root, dpkg
// answered by the fake runner) or the container's (its dpkg database).
func TestMissingDebugFix(t *testing.T) {
	ctx := context.Background()
	deb := func(interp string) *target.Result {
		return &target.Result{Target: "x", Exe: interp, Interpreter: interp, Python: target.Python{Version: "3.11.99"}}
	}
	libc := kind("/usr/lib/x86_64-linux-gnu/libfoo.so.1", debugfile.KindNone)

	s, fr := newServices(t, rule{match: []string{"dpkg -S /usr/lib/x86_64-linux-gnu/libfoo.so.1"}, out: "libfoo1:amd64: /usr/lib/x86_64-linux-gnu/libfoo.so.1\n"})
	want(t, "no distribution", Check{Fix: s.missingDebugFix(ctx, libc, deb("/usr/bin/python3.11"))}, "", "", "install its debug file into a debug directory (pyattach --debug-dir DIR)")
	if len(fr.calls) != 0 {
		t.Errorf("dpkg ran on a machine that is not Debian: %q", fr.calls)
	}
	distro(t, s.HostRoot, "debian_version")
	want(t, "Debian interpreter", Check{Fix: s.missingDebugFix(ctx, kind("/usr/bin/python3.11", debugfile.KindNone), deb("/usr/bin/python3.11"))}, "", "", "sudo apt-get install python3.11-dbg")
	want(t, "Debian debug interpreter", Check{Fix: s.missingDebugFix(ctx, kind("/usr/bin/python3.11d", debugfile.KindNone), deb("/usr/bin/python3.11d"))}, "", "", "sudo apt-get install python3.11-dbg")
	want(t, "Debian library", Check{Fix: s.missingDebugFix(ctx, libc, deb("/usr/bin/python3.11"))}, "", "", "sudo apt-get install libfoo1-dbgsym (from the debug archive")
	if len(fr.calls) != 1 || fr.calls[0] != "dpkg -S /usr/lib/x86_64-linux-gnu/libfoo.so.1" {
		t.Errorf("dpkg calls %q", fr.calls)
	}
	fr.rules = []rule{{match: []string{"dpkg"}, out: "dpkg-query: no path found", err: errors.New("exit status 1")}}
	want(t, "Debian, no owner", Check{Fix: s.missingDebugFix(ctx, libc, deb("/usr/bin/python3.11"))}, "", "", "install a split debug package (pyattach symbols install)")

	s, _ = newServices(t)
	distro(t, s.HostRoot, "fedora-release")
	want(t, "Fedora interpreter", Check{Fix: s.missingDebugFix(ctx, kind("/usr/bin/python3.12", debugfile.KindNone), deb("/usr/bin/python3.12"))}, "", "", "sudo dnf debuginfo-install python3")
	want(t, "Fedora library", Check{Fix: s.missingDebugFix(ctx, libc, deb("/usr/bin/python3.12"))}, "", "", "sudo dnf install 'debuginfo(build-id)=ab12'")

	uv := kind("/home/u/.local/share/uv/python/cpython-3.12.99-linux-x86_64-gnu/bin/python3.12", debugfile.KindSymtab)
	want(t, "uv", Check{Fix: s.missingDebugFix(ctx, uv, deb(uv.Path))}, "", "", "python-build-standalone (uv) interpreters ship stripped")

	// A container: its distribution, its dpkg database, installed there.
	root := t.TempDir()
	ctr := &target.Result{Target: "77", Exe: "/usr/bin/python3.13", Interpreter: "/usr/bin/python3.13", Container: true, Root: root, Python: target.Python{Version: "3.13.5"}}
	in := "in the container (podman exec or docker exec CONTAINER ...): "
	s, fr = newServices(t)
	distro(t, s.HostRoot, "fedora-release") // the host's distribution does not count
	want(t, "container, unknown", Check{Fix: s.missingDebugFix(ctx, kind("/usr/bin/python3.13", debugfile.KindNone), ctr)}, "", "", in+"install its debug file under /usr/lib/debug there")
	distro(t, root, "debian_version")
	writeFile(t, filepath.Join(root, "var/lib/dpkg/info/python3.13-minimal:amd64.list"), "/.\n/usr/bin/python3.13\n")
	writeFile(t, filepath.Join(root, "var/lib/dpkg/info/libfoo1:amd64.list"), "/usr/lib/x86_64-linux-gnu/libfoo.so.1\n")
	want(t, "container, Debian python", Check{Fix: s.missingDebugFix(ctx, kind("/usr/bin/python3.13", debugfile.KindNone), ctr)}, "", "", in+"apt-get install python3.13-dbg")
	want(t, "container, Debian library", Check{Fix: s.missingDebugFix(ctx, libc, ctr)}, "", "", in+"apt-get install libfoo1-dbgsym")
	want(t, "container, Debian, no owner", Check{Fix: s.missingDebugFix(ctx, kind("/opt/x.so", debugfile.KindNone), ctr)}, "", "", in+"install its debug file under /usr/lib/debug there")
	if len(fr.calls) != 0 {
		t.Errorf("the host's dpkg asked about a container's file: %q", fr.calls)
	}
	froot := t.TempDir()
	ctr.Root = froot
	distro(t, froot, "fedora-release")
	want(t, "container, Fedora", Check{Fix: s.missingDebugFix(ctx, libc, ctr)}, "", "", in+"dnf install 'debuginfo(build-id)=ab12'")
	if strings.Contains(s.missingDebugFix(ctx, libc, ctr), "sudo") {
		t.Error("a container's fix says sudo")
	}
}
