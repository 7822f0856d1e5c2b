package doctor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
)

func ext(gdb, version string, match bool) *debugsearch.Info {
	return &debugsearch.Info{Extensions: debugsearch.Extensions{GDB: gdb, GDBVersion: version, GDBVersionMatch: match}}
}

func TestExtensionChecks(t *testing.T) {
	ctx := context.Background()
	res := newResult()

	// Found, of the interpreter's version; gdb is not installed, so
	// nothing more is asked.
	s, fr := newServices(t)
	checks := s.extensionChecks(ctx, res, ext("/x/python3.12-gdb.py", "3.12", true))
	want(t, "found", one(t, checks, "extension"), OK, "/x/python3.12-gdb.py (Python 3.12)", "")
	if len(checks) != 1 || len(fr.calls) != 0 {
		t.Errorf("without gdb: %+v, ran %q", checks, fr.calls)
	}

	checks = s.extensionChecks(ctx, res, ext("/x/python3.10-gdb.py", "3.10", false))
	want(t, "other version", one(t, checks, "extension"), Fail, "/x/python3.10-gdb.py is for Python 3.10, the interpreter is 3.12.99: py-bt would misread frames", "pyattach fetch-extension app/python3.12")
	res13 := newResult()
	res13.Python.Version = "3.13.5"
	checks = s.extensionChecks(ctx, res13, ext("/x/libpython.py", "", false))
	want(t, "unknown version", one(t, checks, "extension"), Fail, "is for an unknown Python version, the interpreter is 3.13.5", "")
	if strings.Contains(checks[0].Summary, "Python ,") {
		t.Errorf("unknown version: %q", checks[0].Summary)
	}

	di := ext("/x/python3.12-gdb.py", "3.12", true)
	di.Extensions.GDBWarnings = []string{"/x/python3.12-gdb.py is CPython 3.12.0's, the interpreter 3.12.99"}
	di.Extensions.GDBTried = []string{"/opt/py/bin/python3.12-gdb.py: refused: writable by other users"}
	checks = s.extensionChecks(ctx, res, di)
	want(t, "warning", one(t, checks, "extension.warning"), Warn, "CPython 3.12.0's", "pyattach fetch-extension app/python3.12")
	want(t, "refused", one(t, checks, "extension.refused"), Warn, "/opt/py/bin/python3.12-gdb.py is not used: writable by other users", "chmod go-w")

	// gdb runs the extension: it fails, or it works but lies outside
	// gdb's auto-load safe-path.
	safePath := "Auto-load files are safe to load from \"$debugdir:$datadir/auto-load\".\n"
	s, fr = newServices(t, rule{match: []string{"/opt/gdb", "source /x/python3.12-gdb.py", "help py-bt"}, out: safePath + "Undefined command: \"py-bt\".  Try \"help\".\n"})
	s.FindDebugger = fakeDebuggers(map[string]string{"gdb": "/opt/gdb"})
	checks = s.extensionChecks(ctx, res, ext("/x/python3.12-gdb.py", "3.12", true))
	want(t, "does not run", one(t, checks, "extension.runs"), Fail, "gdb's Python cannot run /x/python3.12-gdb.py: Undefined command: \"py-bt\".  Try \"help\".", "pyattach fetch-extension")
	want(t, "safe-path", one(t, checks, "extension.safe-path"), Warn, "plain gdb declines to auto-load /x/python3.12-gdb.py", "add-auto-load-safe-path /x/python3.12-gdb.py")
	if len(fr.calls) != 1 || !strings.HasPrefix(fr.calls[0], "/opt/gdb -nx -batch") {
		t.Errorf("gdb ran as %q", fr.calls)
	}
	fr.rules = []rule{{match: []string{"help py-bt"}, out: safePath + "Traceback (most recent call last):\n  File \"/x/python3.12-gdb.py\", line 9\nSyntaxError: invalid syntax\n"}}
	want(t, "traceback", one(t, s.extensionChecks(ctx, res, ext("/x/python3.12-gdb.py", "3.12", true)), "extension.runs"), Fail, "SyntaxError: invalid syntax", "")

	fr.rules = []rule{{match: []string{"help py-bt"}, out: safePath + "Display the current python frame and all the frames within its call stack (if any).\n"}}
	auto := debugsearch.GDBAutoLoadDir + "/usr/bin/python3.12-gdb.py"
	checks = s.extensionChecks(ctx, res, ext(auto, "3.12", true))
	if len(byID(checks, "extension.runs")) != 0 || len(byID(checks, "extension.safe-path")) != 0 {
		t.Errorf("an auto-loaded extension that runs: %+v", checks)
	}
	// A name gdb would not read back is never run.
	fr.calls = nil
	s.extensionChecks(ctx, res, ext("/x/bad\nname-gdb.py", "3.12", true))
	if len(fr.calls) != 0 {
		t.Errorf("gdb ran an extension with a newline in its name: %q", fr.calls)
	}
}

// No extension: where it was looked for, and the fix that brings it.
func TestMissingExtension(t *testing.T) {
	ctx := context.Background()
	s, _ := newServices(t)
	bin := t.TempDir()
	res := newResult()
	res.Exe, res.Interpreter = filepath.Join(bin, "python3.12"), filepath.Join(bin, "python3.12")
	di := &debugsearch.Info{Extensions: debugsearch.Extensions{GDBTried: []string{
		filepath.Join(bin, "python3.12-gdb.py"),
		"/usr/share/gdb/auto-load" + res.Interpreter + "-gdb.py",
		"/tmp/python-build.2024/Python-3.12.99/python-gdb.py",
		"/home/u/ext/python3.12-gdb.py",
	}}}
	c := one(t, s.extensionChecks(ctx, res, di), "extension")
	want(t, "walker covers 3.12", c, Warn, "no CPython gdb extension (python3.12-gdb.py, libpython.py) for Python 3.12.99: plain gdb has no py-bt (pyattach's walker gives pyattach gdb and lldb one); looked beside the binary, the distribution's debug package, the make install build tree (sysconfig abs_builddir), the config file's extensions, pyattach's cache",
		"pyattach fetch-extension app/python3.12 (downloads CPython's libpython.py of Python 3.12.99 into pyattach's cache); or rebuild and keep the build tree at /tmp/python-build.2024/Python-3.12.99")
	wantDetails := []string{
		"beside the binary: " + filepath.Join(bin, "python3.12-gdb.py"),
		"the distribution's debug package: /usr/share/gdb/auto-load" + res.Interpreter + "-gdb.py",
		"the make install build tree (sysconfig abs_builddir): /tmp/python-build.2024/Python-3.12.99, named by sysconfig, has no python-gdb.py",
		"the config file's extensions: /home/u/ext/python3.12-gdb.py",
		"pyattach's cache: " + filepath.Join(s.CacheDir, "extensions", "3.12.99", "libpython.py"),
	}
	if len(c.Details) != len(wantDetails) {
		t.Fatalf("details %q", c.Details)
	}
	for i, w := range wantDetails {
		if !strings.HasPrefix(c.Details[i], w) {
			t.Errorf("detail %d: %q, want %q", i, c.Details[i], w)
		}
	}

	old := newResult()
	old.Python.Version = "3.6.15"
	c = one(t, s.extensionChecks(ctx, old, &debugsearch.Info{}), "extension")
	want(t, "3.6", c, Fail, "for Python 3.6.15: py-bt is undefined", "pyattach fetch-extension")
	if !strings.Contains(strings.Join(c.Details, "\n"), "no installed sysconfig data names a build tree") {
		t.Errorf("details %q", c.Details)
	}

	// A distribution's interpreter: its package that ships the extension.
	deb := &target.Result{Target: "python3.11", Exe: "/usr/bin/python3.11", Interpreter: "/usr/bin/python3.11", Libpython: "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", Python: target.Python{Version: "3.11.99"}}
	distro(t, s.HostRoot, "debian_version")
	writeFile(t, filepath.Join(s.HostRoot, "var/lib/dpkg/info/libpython3.11-stdlib:amd64.list"), "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0\n")
	want(t, "Debian", one(t, s.extensionChecks(ctx, deb, &debugsearch.Info{}), "extension"), Warn, "no CPython gdb extension", "sudo apt-get install python3.11-dbg (it ships the extension gdb auto-loads)")
	s, _ = newServices(t)
	distro(t, s.HostRoot, "fedora-release")
	want(t, "Fedora", one(t, s.extensionChecks(ctx, deb, &debugsearch.Info{}), "extension"), Warn, "no CPython gdb extension", "sudo dnf debuginfo-install python3 (its debuginfo package ships the extension)")
	// In a container, the container's own -dbg package would not help:
	// pyattach never runs its files (issue 18); a checked fetched copy does.
	root := t.TempDir()
	ctr := *deb
	ctr.Container, ctr.Root = true, root
	distro(t, root, "debian_version")
	writeFile(t, filepath.Join(root, "var/lib/dpkg/info/python3.11-minimal:amd64.list"), "/usr/bin/python3.11\n")
	ce := one(t, s.extensionChecks(ctx, &ctr, &debugsearch.Info{}), "extension")
	want(t, "container", ce, Warn, "no CPython gdb extension", "pyattach fetch-extension python3.11 (CPython's libpython.py of Python 3.11.99, checked by its SHA-256")
	if strings.Contains(ce.Fix, "apt-get") {
		t.Errorf("container: fix %q installs the container's package, which pyattach would not run", ce.Fix)
	}
}
