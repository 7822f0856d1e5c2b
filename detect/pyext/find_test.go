package pyext

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// fakeLibpython is the start of a libpython.py, enough for the check.
// fakeLibpython passes for CPython's libpython.py (it defines class
// PyObjectPtr).
const fakeLibpython = testenv.FakeLibpython

// tree writes files under a fresh temporary directory: a value starting
// with "->" makes a symlink, a name ending in "/" a directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	testenv.WriteTree(t, dir, files)
	return dir
}

// isolated returns an Input whose gdb data and debug directories are
// empty directories under dir, so the host's files stay out of the test,
// for the user running the test (who owns the files it writes).
func isolated(dir string) Input {
	return Input{
		DataDirs:  []string{filepath.Join(dir, "gdb-data")},
		DebugDirs: []string{filepath.Join(dir, "debug")},
		UID:       os.Getuid(),
	}
}

func mustFind(t *testing.T, in Input) (*Extension, []string) {
	t.Helper()
	got, tried, err := FindGDB(in)
	if err != nil {
		t.Fatalf("FindGDB: %v", err)
	}
	if got == nil {
		t.Fatalf("nothing found; tried:\n%s", strings.Join(tried, "\n"))
	}
	return got, tried
}

// isolatedTree writes files with tree and returns its directory and an
// isolated Input for the interpreter at interp under it.
func isolatedTree(t *testing.T, interp string, files map[string]string) (string, Input) {
	t.Helper()
	dir := tree(t, files)
	in := isolated(dir)
	in.Interpreter = filepath.Join(dir, interp)
	return dir, in
}

// expect runs FindGDB, checks what it finds (see check) and returns it
// with the paths tried.
func expect(t *testing.T, in Input, path, version, source string, match bool, nWarnings int) (*Extension, []string) {
	t.Helper()
	got, tried := mustFind(t, in)
	check(t, got, path, version, source, match, nWarnings)
	return got, tried
}

// fileGID is the group that owns path.
func fileGID(t *testing.T, path string) uint32 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Gid
}

func check(t *testing.T, got *Extension, path, version, source string, match bool, nWarnings int) {
	t.Helper()
	if got.Path != path || got.Version != version || got.Source != source || got.VersionMatch != match || len(got.Warnings) != nWarnings {
		t.Errorf("got %+v\nwant path %s, version %s, source %s, match %v, %d warnings", got, path, version, source, match, nWarnings)
	}
}

func TestFedora(t *testing.T) {
	dir := tree(t, map[string]string{
		"debug/usr/lib64/libpython3.12.so.1.0-3.12.1-1.fc39.x86_64.debug-gdb.py": fakeLibpython,
	})
	in := isolated(dir)
	in.Interpreter = "/nonexistent/usr/bin/python3.12"
	in.Libpython = "/usr/lib64/libpython3.12.so.1.0"
	in.Version = "3.12.1"
	expect(t, in, filepath.Join(dir, "debug/usr/lib64/libpython3.12.so.1.0-3.12.1-1.fc39.x86_64.debug-gdb.py"), "3.12.1", SourceFedora, true, 0)

	// Without a libpython, the usual Fedora place is still searched.
	in.Libpython = ""
	expect(t, in, filepath.Join(dir, "debug/usr/lib64/libpython3.12.so.1.0-3.12.1-1.fc39.x86_64.debug-gdb.py"), "3.12.1", SourceFedora, true, 0)
}

func TestFedoraObjfileDebugName(t *testing.T) {
	dir := tree(t, map[string]string{
		"debug/opt/py/bin/python3.9.debug-gdb.py": fakeLibpython,
	})
	in := isolated(dir)
	in.Interpreter = "/opt/py/bin/python3.9"
	expect(t, in, filepath.Join(dir, "debug/opt/py/bin/python3.9.debug-gdb.py"), "3.9", SourceFedora, true, 0)
}

func TestBuildTree(t *testing.T) {
	dir, in := isolatedTree(t, "cpython/python", map[string]string{
		"cpython/python":                "ELF",
		"cpython/python-gdb.py":         fakeLibpython,
		"cpython/Include/patchlevel.h":  "#define PY_MINOR_VERSION 13\n#define PY_VERSION      \t\"3.13.0+\"\n",
		"src/Include/patchlevel.h":      "#define PY_VERSION \"3.14.0a1\"\n",
		"build/python":                  "ELF",
		"build/python-gdb.py":           fakeLibpython,
		"build/Makefile":                "VERSION=\t3.14\nsrcdir=\t\t../src\n",
		"plain/python":                  "ELF",
		"plain/python-gdb.py":           fakeLibpython,
		"plain/Include/patchlevel.h/x/": "",
	})
	in.Version = "3.13.0"
	expect(t, in, filepath.Join(dir, "cpython/python-gdb.py"), "3.13.0", SourceBuildTree, true, 0)

	// An out-of-tree build: the Makefile names the source tree.
	in.Interpreter = filepath.Join(dir, "build/python")
	in.Version = "3.14.0"
	expect(t, in, filepath.Join(dir, "build/python-gdb.py"), "3.14.0a1", SourceBuildTree, true, 0)

	// No version anywhere.
	in.Interpreter = filepath.Join(dir, "plain/python")
	in.Version = "3.13.1"
	expect(t, in, filepath.Join(dir, "plain/python-gdb.py"), "", SourceBuildTree, false, 1)
}

func TestMakeInstallPatchlevel(t *testing.T) {
	dir, in := isolatedTree(t, "prefix/bin/python3.6m", map[string]string{
		"prefix/bin/python3.6m":                     "ELF",
		"prefix/bin/python3.6-gdb.py":               fakeLibpython,
		"prefix/include/python3.6m/patchlevel.h":    "#define PY_VERSION \"3.6.15\"\n",
		"prefix/lib/libpython3.6m.so.1.0":           "ELF",
		"prefix/lib/libpython3.6m.so.1.0-gdb.py/x/": "", // a directory: skipped
	})
	in.Libpython = filepath.Join(dir, "prefix/lib/libpython3.6m.so.1.0")
	in.ABIFlags = "m"
	in.Version = "3.6.15"
	_, tried := expect(t, in, filepath.Join(dir, "prefix/bin/python3.6-gdb.py"), "3.6.15", SourceBeside, true, 0)
	if !containsPrefix(tried, filepath.Join(dir, "prefix/bin/python3.6m-gdb.py")) {
		t.Errorf("python3.6m-gdb.py not tried: %q", tried)
	}
}

func TestBesideLibpython(t *testing.T) {
	dir, in := isolatedTree(t, "opt/app/bin/uwsgi", map[string]string{
		"opt/app/lib/libpython3.10.so.1.0-gdb.py": fakeLibpython,
	})
	in.Libpython = filepath.Join(dir, "opt/app/lib/libpython3.10.so.1.0")
	expect(t, in, filepath.Join(dir, "opt/app/lib/libpython3.10.so.1.0-gdb.py"), "3.10", SourceBeside, true, 0)
}

func TestConfigPaths(t *testing.T) {
	dir, in := isolatedTree(t, "bin/python3.11", map[string]string{
		"ext/3.11.4/libpython.py":    fakeLibpython,
		"cfg/libstdc++.so.6-gdb.py":  "import gdb.printing\n# libstdc++ pretty printers\n",
		"cfg/python3.11-gdb.py":      fakeLibpython,
		"cfg2/libpython.py":          fakeLibpython,
		"nover/whatever-gdb-ext.py":  fakeLibpython,
		"bin/python3.11":             "ELF",
		"unrelated/python3.11-gdb.p": "",
	})
	in.Version = "3.11.4"

	// A file, its version from its directory.
	in.Extra = []string{filepath.Join(dir, "ext/3.11.4/libpython.py")}
	expect(t, in, filepath.Join(dir, "ext/3.11.4/libpython.py"), "3.11.4", SourceConfig, true, 0)

	// A directory of *-gdb.py files: the libstdc++ printers are no match.
	in.Extra = []string{filepath.Join(dir, "cfg")}
	_, tried := expect(t, in, filepath.Join(dir, "cfg/python3.11-gdb.py"), "3.11", SourceConfig, true, 0)
	if !containsPrefix(tried, filepath.Join(dir, "cfg/libstdc++.so.6-gdb.py")+": not CPython's libpython.py") {
		t.Errorf("libstdc++ printers not rejected in tried: %q", tried)
	}

	// A directory holding libpython.py; version unknown.
	in.Extra = []string{filepath.Join(dir, "cfg2")}
	expect(t, in, filepath.Join(dir, "cfg2/libpython.py"), "", SourceConfig, false, 1)

	// A file of any name.
	in.Extra = []string{filepath.Join(dir, "nope"), filepath.Join(dir, "nover/whatever-gdb-ext.py")}
	_, tried = expect(t, in, filepath.Join(dir, "nover/whatever-gdb-ext.py"), "", SourceConfig, false, 1)
	if tried[len(tried)-1] != filepath.Join(dir, "nope") {
		t.Errorf("missing config path not listed last in tried: %q", tried)
	}
}

func TestVersionMismatch(t *testing.T) {
	dir, in := isolatedTree(t, "bin/python3.11", map[string]string{
		"bin/python3.11":        "ELF",
		"cfg/python3.10-gdb.py": fakeLibpython,
	})
	in.Version = "3.11.2"
	in.Extra = []string{filepath.Join(dir, "cfg")}
	got, _ := expect(t, in, filepath.Join(dir, "cfg/python3.10-gdb.py"), "3.10", SourceConfig, false, 1)
	if want := "version 3.10 does not match interpreter 3.11.2"; got.Warnings[0] != want {
		t.Errorf("warning %q, want %q", got.Warnings[0], want)
	}
}

func TestMicroMismatch(t *testing.T) {
	dir, in := isolatedTree(t, "versions/3.12.0/bin/python3.12", map[string]string{
		"versions/3.12.0/bin/python3.12":        "ELF",
		"versions/3.12.0/bin/python3.12-gdb.py": fakeLibpython,
	})
	in.Version = "3.12.1"
	got, _ := expect(t, in, filepath.Join(dir, "versions/3.12.0/bin/python3.12-gdb.py"), "3.12.0", SourceBeside, true, 1)
	if !strings.Contains(got.Warnings[0], "3.12.0 is not the interpreter's exact version 3.12.1") {
		t.Errorf("warning %q", got.Warnings[0])
	}
}

func TestExactBeatsMinor(t *testing.T) {
	dir, in := isolatedTree(t, "plain/bin/python3.12", map[string]string{
		"plain/bin/python3.12":                 "ELF",
		"plain/bin/python3.12-gdb.py":          fakeLibpython,
		"cfg/python3.11-gdb.py":                fakeLibpython,
		"cache/extensions/3.12.0/libpython.py": fakeLibpython,
		"cache/extensions/3.12.1/libpython.py": fakeLibpython,
	})
	in.Version = "3.12.1"
	in.Extra = []string{filepath.Join(dir, "cfg")}
	in.CacheDir = filepath.Join(dir, "cache")
	_, tried := expect(t, in, filepath.Join(dir, "cache/extensions/3.12.1/libpython.py"), "3.12.1", SourceFetched, true, 0)
	want := filepath.Join(dir, "plain/bin/python3.12-gdb.py") + ": version 3.12, beaten by " + filepath.Join(dir, "cache/extensions/3.12.1/libpython.py")
	if !containsPrefix(tried, want) {
		t.Errorf("tried %q\nlacks %q", tried, want)
	}
	if !containsPrefix(tried, filepath.Join(dir, "cfg/python3.11-gdb.py")+": version 3.11, ") {
		t.Errorf("tried %q lacks the 3.11 config file", tried)
	}
	for _, tr := range tried {
		if strings.Contains(tr, "3.12.0") {
			t.Errorf("looked past an exact match: %q", tr)
		}
	}

	// Without the exact one, the first minor match wins over a later
	// micro mismatch, and that over another X.Y.
	os.RemoveAll(filepath.Join(dir, "cache/extensions/3.12.1"))
	expect(t, in, filepath.Join(dir, "plain/bin/python3.12-gdb.py"), "3.12", SourceBeside, true, 0)
	os.Remove(filepath.Join(dir, "plain/bin/python3.12-gdb.py"))
	expect(t, in, filepath.Join(dir, "cache/extensions/3.12.0/libpython.py"), "3.12.0", SourceFetched, true, 1)
}

func TestContainerRoot(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	testenv.WriteTree(t, root, map[string]string{
		"usr/bin/python3.11": "ELF",
		"usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py": fakeLibpython,
		// An absolute link must resolve inside the root, not on the host.
		"usr/share/gdb/auto-load/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0-gdb.py": "->/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py",
		"usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0":                                "ELF",
		"var/lib/dpkg/info/python3.11-dbg:amd64.list":                                  "/.\n/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py\n",
		"var/lib/dpkg/status":     "Package: python3.11\nVersion: 3.11.2-6\n\nPackage: python3.11-dbg\nStatus: install ok installed\nVersion: 3.11.9-1ubuntu1\n\n",
		"opt/venv/bin/python3.11": "->/usr/bin/python3.11",
	})
	in := Input{
		Interpreter: "/usr/bin/python3.11",
		Version:     "3.11.9",
		Root:        root,
		UID:         os.Getuid(),
	}
	got, _ := expect(t, in, "/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py", "3.11.9", SourceDebian, true, 0)
	if want := filepath.Join(root, "usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py"); got.HostPath != want {
		t.Errorf("host path %q, want %q", got.HostPath, want)
	}

	// Through libpython's absolute symlink (the interpreter's own file
	// is gone).
	os.Remove(filepath.Join(root, "usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py"))
	testenv.WriteTree(t, root, map[string]string{"usr/share/gdb/auto-load/usr/bin/real-gdb.py": fakeLibpython})
	os.Remove(filepath.Join(root, "usr/share/gdb/auto-load/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0-gdb.py"))
	testenv.WriteTree(t, root, map[string]string{"usr/share/gdb/auto-load/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0-gdb.py": "->/usr/share/gdb/auto-load/usr/bin/real-gdb.py"})
	in.Interpreter = "/opt/venv/bin/python3.11"
	in.Libpython = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
	in.DataDirs = []string{"/usr/share/gdb"}
	in.DebugDirs = []string{filepath.Join(dir, "nodebug")}
	got, _ = mustFind(t, in)
	if got.Path != "/usr/share/gdb/auto-load/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0-gdb.py" ||
		got.HostPath != filepath.Join(root, "usr/share/gdb/auto-load/usr/bin/real-gdb.py") || got.Version != "3.11" {
		t.Errorf("got %+v", got)
	}
}

func TestContainerFallsBackToHost(t *testing.T) {
	dir := tree(t, map[string]string{
		"root/usr/bin/python3.8":                      "ELF",
		"host/gdb/auto-load/usr/bin/python3.8-gdb.py": fakeLibpython,
	})
	in := Input{
		Interpreter: "/usr/bin/python3.8",
		Root:        filepath.Join(dir, "root"),
		DataDirs:    []string{filepath.Join(dir, "host/gdb")},
		DebugDirs:   []string{filepath.Join(dir, "nodebug")},
		UID:         os.Getuid(),
	}
	got, tried := expect(t, in, filepath.Join(dir, "host/gdb/auto-load/usr/bin/python3.8-gdb.py"), "3.8", SourceDebian, true, 0)
	if got.HostPath != "" {
		t.Errorf("host path %q for a host file", got.HostPath)
	}
	// The in-root place was looked at first.
	if len(tried) == 0 || !strings.HasPrefix(tried[0], filepath.Join(dir, "root", dir, "host/gdb/auto-load")) {
		t.Errorf("tried %q does not start inside the root", tried)
	}
}

// TestSecurityRefusesUntrusted: gdb runs the extension, so a file that
// another user could change is refused, not merely warned about, and
// tried says why.
func TestSecurityRefusesUntrusted(t *testing.T) {
	dir := tree(t, map[string]string{
		"a/bin/python3.11":        "ELF",
		"a/bin/python3.11-gdb.py": fakeLibpython,
	})
	ext := filepath.Join(dir, "a/bin/python3.11-gdb.py")
	in := isolated(dir)
	in.Interpreter = filepath.Join(dir, "a/bin/python3.11")
	refused := func(want string) {
		t.Helper()
		got, tried, err := FindGDB(in)
		if err != nil {
			t.Fatal(err)
		}
		if got != nil {
			t.Errorf("found %s, want it refused (%s)", got.Path, want)
		}
		if !slices.Contains(tried, ext+": "+want) {
			t.Errorf("tried %q does not hold %q", tried, ext+": "+want)
		}
	}

	os.Chmod(ext, 0o664)
	refused(fmt.Sprintf("refused: it is writable by its group (gid %d), and gdb would run it", fileGID(t, ext)))
	os.Chmod(ext, 0o644)
	os.Chmod(filepath.Dir(ext), 0o757)
	refused("refused: " + filepath.Dir(ext) + " is writable by others, and gdb would run it")
	os.Chmod(filepath.Dir(ext), os.ModeSticky|0o777) // sticky: no one else can replace it
	expect(t, in, ext, "3.11", SourceBeside, true, 0)
	os.Chmod(filepath.Dir(ext), 0o755)

	testenv.NeedRoot(t, "to give the extension to another uid")
	if err := os.Chown(ext, 65534, -1); err != nil {
		t.Fatal(err)
	}
	refused("refused: it is owned by uid 65534, and gdb would run it")
	// A link of another user's to a good file is refused too.
	os.Chown(ext, 0, -1)
	os.Rename(ext, ext+".real")
	os.Symlink(filepath.Base(ext)+".real", ext)
	os.Lchown(ext, 65534, -1)
	refused("refused: it is a symbolic link owned by uid 65534, and gdb would run it")
	// The same files are fine for their owner.
	os.Chown(ext+".real", 65534, -1)
	in.UID = 65534
	expect(t, in, ext, "3.11", SourceBeside, true, 0)
}

// TestSecurityRefusesUntrustedStubTarget: a trusted stub that leads to
// a file another user owns is refused.
func TestSecurityRefusesUntrustedStubTarget(t *testing.T) {
	testenv.NeedRoot(t, "to give the stub's target to another uid")
	dir := tree(t, map[string]string{
		"a/bin/python3.11":        "ELF",
		"other/libpython.py":      fakeLibpython,
		"a/bin/python3.11-gdb.py": "",
	})
	ext := filepath.Join(dir, "a/bin/python3.11-gdb.py")
	target := filepath.Join(dir, "other/libpython.py")
	os.WriteFile(ext, []byte("exec(open("+strconv.Quote(target)+").read())\n"), 0o644)
	os.Chown(target, 65534, -1)
	in := isolated(dir)
	in.Interpreter = filepath.Join(dir, "a/bin/python3.11")
	in.UID = 0
	got, tried, _ := FindGDB(in)
	if got != nil {
		t.Fatalf("found %+v through a stub, want the target refused", got)
	}
	want := ext + ": it leads to " + target + ": refused: it is owned by uid 65534, and gdb would run it"
	if !slices.Contains(tried, want) {
		t.Errorf("tried %q does not hold %q", tried, want)
	}
}

func TestRejectsOtherFiles(t *testing.T) {
	dir, in := isolatedTree(t, "bin/python3.11", map[string]string{
		"bin/python3.11":        "ELF",
		"bin/python3.11-gdb.py": "print('hello')\n",
		"bin/python-gdb.py":     "<html><body>404</body></html>",
	})
	got, tried, err := FindGDB(in)
	if err != nil || got != nil {
		t.Fatalf("FindGDB = %+v, %v; want nothing", got, err)
	}
	for _, p := range []string{"bin/python3.11-gdb.py", "bin/python-gdb.py"} {
		if !containsPrefix(tried, filepath.Join(dir, p)+": not CPython's libpython.py") {
			t.Errorf("%s not rejected in tried %q", p, tried)
		}
	}
}

func TestStub(t *testing.T) {
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{
		"share/python3.11/libpython.py": fakeLibpython,
		"bin/python3.11":                "ELF",
		"bin/python3.11-gdb.py":         "import os\nexec(open(\"" + filepath.Join(dir, "share/python3.11/libpython.py") + "\").read())\n",
		"lib/libpython3.11.so.1.0":      "ELF",
		"lib/libpython3.11.so.1.0-gdb.py": "import sys\nsys.path.insert(0, \"../share/python3.11\")\n" +
			"from libpython import *\n",
		"bad/bin/python3.11":        "ELF",
		"bad/bin/python3.11-gdb.py": "exec(open('stub2.py').read())\n",
		"bad/bin/stub2.py":          "exec(open('" + filepath.Join(dir, "share/python3.11/libpython.py") + "').read())\n",
	})
	in := isolated(dir)
	in.Interpreter = filepath.Join(dir, "bin/python3.11")
	got, _ := expect(t, in, filepath.Join(dir, "share/python3.11/libpython.py"), "3.11", SourceBeside, true, 0)
	if got.Stub != filepath.Join(dir, "bin/python3.11-gdb.py") {
		t.Errorf("stub %q", got.Stub)
	}

	// An import through sys.path, relative to the stub's directory.
	in.Interpreter = filepath.Join(dir, "nobin/python3.11")
	in.Libpython = filepath.Join(dir, "lib/libpython3.11.so.1.0")
	got, _ = expect(t, in, filepath.Join(dir, "share/python3.11/libpython.py"), "3.11", SourceBeside, true, 0)
	if got.Stub != filepath.Join(dir, "lib/libpython3.11.so.1.0-gdb.py") {
		t.Errorf("stub %q", got.Stub)
	}

	// A stub is followed once, not twice.
	in.Interpreter = filepath.Join(dir, "bad/bin/python3.11")
	in.Libpython = ""
	got, tried, _ := FindGDB(in)
	if got != nil {
		t.Errorf("found %+v through two stubs", got)
	}
	if !containsPrefix(tried, filepath.Join(dir, "bad/bin/python3.11-gdb.py")+": not CPython's libpython.py and none of the files it names is") {
		t.Errorf("tried %q", tried)
	}
}

func TestNothingFound(t *testing.T) {
	dir := t.TempDir()
	in := isolated(dir)
	in.Interpreter = filepath.Join(dir, "bin/python3.12")
	got, tried, err := FindGDB(in)
	if got != nil || err != nil || len(tried) == 0 {
		t.Errorf("FindGDB = %+v, %q, %v; want nil, some tried paths, nil", got, tried, err)
	}
	if _, _, err := FindGDB(Input{}); err == nil {
		t.Error("no error for an empty input")
	}
	if _, _, err := FindGDB(Input{Interpreter: "python3"}); err == nil {
		t.Error("no error for a relative interpreter path")
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

func TestGlobMetacharactersInDirs(t *testing.T) {
	dir := tree(t, map[string]string{
		"d[1]*/debug/usr/lib64/libpython3.12.so.1.0-3.12.1-1.fc39.x86_64.debug-gdb.py": fakeLibpython,
		"d[1]*/cfg/python3.12-gdb.py": fakeLibpython,
	})
	base := filepath.Join(dir, "d[1]*")
	in := isolated(base)
	in.Interpreter = "/nonexistent/bin/python3.12"
	in.Libpython = "/usr/lib64/libpython3.12.so.1.0"
	in.Version = "3.12.1"
	expect(t, in, filepath.Join(base, "debug/usr/lib64/libpython3.12.so.1.0-3.12.1-1.fc39.x86_64.debug-gdb.py"), "3.12.1", SourceFedora, true, 0)

	in.DebugDirs = []string{filepath.Join(dir, "none")}
	in.Extra = []string{filepath.Join(base, "cfg")}
	expect(t, in, filepath.Join(base, "cfg/python3.12-gdb.py"), "3.12", SourceConfig, true, 0)
}

// make install puts no python3.X-gdb.py beside the binary: it stays in
// the build tree as python-gdb.py, which the installed sysconfig data
// names ('abs_builddir').
func TestMakeInstallSysconfigBuildDir(t *testing.T) {
	dir := tree(t, map[string]string{
		"usr/local/bin/python3.13t":   "ELF",
		"build/python-gdb.py":         fakeLibpython,
		"build/Makefile":              "VERSION=\t3.13\nsrcdir=\t\t.\n",
		"build/Include/patchlevel.h":  "#define PY_VERSION \"3.13.5\"\n",
		"usr/local/include/x/":        "",
		"usr/local/lib/python3.13t/x": "",
	})
	sysconfig := "# system configuration generated and used by the sysconfig module\nbuild_time_vars = {'ABIFLAGS': 't',\n 'abs_builddir': '" + filepath.Join(dir, "build") + "',\n 'abs_srcdir': '" + filepath.Join(dir, "build") + "'}\n"
	testenv.WriteTree(t, dir, map[string]string{"usr/local/lib/python3.13t/_sysconfigdata_t_linux_x86_64-linux-gnu.py": sysconfig})
	in := isolated(dir)
	in.Interpreter = filepath.Join(dir, "usr/local/bin/python3.13t")
	in.ABIFlags = "t"
	in.Version = "3.13.5"
	_, tried := expect(t, in, filepath.Join(dir, "build/python-gdb.py"), "3.13.5", SourceBuildTree, true, 0)

	// Without the sysconfig data, nothing is found (and nothing fetched).
	os.Remove(filepath.Join(dir, "usr/local/lib/python3.13t/_sysconfigdata_t_linux_x86_64-linux-gnu.py"))
	if got, tried2, _ := FindGDB(in); got != nil {
		t.Errorf("found %s without the sysconfig data (tried %q, before %q)", got.Path, tried2, tried)
	}
}

// TestSecurityForeignRoot: for a foreign target (a container) nothing
// under its root is accepted, however it is owned and whatever version
// it claims, and tried says why; on the host only the interpreter's
// exact version serves.
func TestSecurityForeignRoot(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	testenv.WriteTree(t, root, map[string]string{
		"usr/bin/python3.11": "ELF",
		"usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py": fakeLibpython,
		"usr/lib/debug/usr/bin/python3.11-gdb.py":           fakeLibpython,
		"usr/bin/python3.11-gdb.py":                         fakeLibpython,
	})
	testenv.WriteTree(t, dir, map[string]string{
		"host/minor/python3.11-gdb.py":           fakeLibpython,
		"host/versions/3.11.9/libpython.py":      fakeLibpython,
		"host/versions/3.11.8/python3.11-gdb.py": fakeLibpython,
	})
	in := Input{
		Interpreter: "/usr/bin/python3.11",
		Version:     "3.11.9",
		Root:        root,
		DataDirs:    []string{"/usr/share/gdb"},
		DebugDirs:   []string{"/usr/lib/debug"},
		Foreign:     true,
		UID:         os.Getuid(),
	}
	// Only the container's files: nothing.
	found, tried, err := FindGDB(in)
	if err != nil || found != nil {
		t.Fatalf("foreign root: found %+v, %v; want nothing", found, err)
	}
	for _, p := range []string{"usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py", "usr/lib/debug/usr/bin/python3.11-gdb.py", "usr/bin/python3.11-gdb.py"} {
		if want := filepath.Join(root, p) + ": " + RefusedInRoot; !slices.Contains(tried, want) {
			t.Errorf("tried lacks %q:\n%s", want, strings.Join(tried, "\n"))
		}
	}
	// The same tree for a target of the user's own: the root's file.
	in.Foreign = false
	if found, _, _ := FindGDB(in); found == nil || found.HostPath != filepath.Join(root, "usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py") {
		t.Errorf("not foreign: found %+v, want the root's extension", found)
	}
	in.Foreign = true

	// Host files of the same X.Y but another or unknown micro version
	// are refused; the exact version is used.
	in.Extra = []string{filepath.Join(dir, "host/minor/python3.11-gdb.py"), filepath.Join(dir, "host/versions/3.11.8/python3.11-gdb.py")}
	found, tried, _ = FindGDB(in)
	if found != nil {
		t.Errorf("foreign target, no exact version: found %+v", found)
	}
	if !containsPrefix(tried, filepath.Join(dir, "host/versions/3.11.8/python3.11-gdb.py")+": refused for this target: version 3.11.8 is not the interpreter's exact version 3.11.9") {
		t.Errorf("tried does not say why 3.11.8 was refused:\n%s", strings.Join(tried, "\n"))
	}
	in.Extra = append(in.Extra, filepath.Join(dir, "host/versions/3.11.9"))
	expect(t, in, filepath.Join(dir, "host/versions/3.11.9/libpython.py"), "3.11.9", SourceConfig, true, 0)
}
