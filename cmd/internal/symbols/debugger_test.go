package symbols

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/testenv"
)

// runGDB runs the venv's python under gdb, stops in fixture_add and
// prints the backtrace's first frame and the current source.
func runGDB(t *testing.T, f *fixture, gdb, debugDirs string) string {
	t.Helper()
	return runDebugger(t, "gdb", gdb, "-nx", "-batch",
		"-iex", "set debuginfod enabled off",
		"-iex", "set debug-file-directory "+debugDirs,
		"-iex", "set breakpoint pending on",
		"-ex", "break fixture_add",
		"-ex", "run",
		"-ex", "bt 1",
		"-ex", "info source",
		"-ex", "kill",
		"--args", filepath.Join(f.venv, "bin", "python"), "-c", "import mypkg._fixture as f; f.add(1, 2)")
}

// runDebugger runs the debugger at path with args, without debuginfod
// or the user's site-packages, and returns its output; a debugger that
// fails is logged, one that hangs fails the test.
func runDebugger(t *testing.T, name, path string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=", "PYTHONNOUSERSITE=1", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s timed out:\n%s", name, out)
	}
	if err != nil {
		t.Logf("%s: %v", name, err)
	}
	return string(out)
}

// TestGDBFindsStoreSymbols is the end-to-end check: the stripped
// extension gets file and line information in gdb exactly when the store
// is one of gdb's debug-file directories.
func TestGDBFindsStoreSymbols(t *testing.T) {
	f := getFixture(t)
	gdb := testenv.Need(t, "gdb")
	s := &Store{Dir: filepath.Join(t.TempDir(), "pyattach debug")}
	mustInstall(t, s, f.zip, mustDist(t, f.zip, f.site))

	withLine := regexp.MustCompile(`fixture_add \(a=1, b=2\) at \S*/_fixture\.c:\d+`)
	sourceFile := regexp.MustCompile(`(?m)^Current source file is \S*_fixture\.c$`)
	out := runGDB(t, f, gdb, "/usr/lib/debug:"+s.Dir)
	if !withLine.MatchString(out) {
		t.Fatalf("with the store, gdb shows no source line for fixture_add:\n%s", out)
	}
	if !sourceFile.MatchString(out) {
		t.Fatalf("info source names no _fixture.c:\n%s", out)
	}

	// Without the store the same breakpoint is hit (the symbol table
	// stays in the stripped .so) but there is no file or line.
	out = runGDB(t, f, gdb, "/usr/lib/debug")
	if !strings.Contains(out, "fixture_add") {
		t.Fatalf("without the store, gdb did not stop in fixture_add:\n%s", out)
	}
	if withLine.MatchString(out) || sourceFile.MatchString(out) || strings.Contains(out, "_fixture.c:") {
		t.Fatalf("without the store, gdb still finds _fixture.c (the test proves nothing):\n%s", out)
	}
}

// runLLDB is runGDB for lldb. The search path is set with -O, before
// the target is created: lldb reads target.debug-file-search-paths when
// a module is loaded, and a setting made after the target exists is not
// seen by the modules of that target.
func runLLDB(t *testing.T, f *fixture, lldb string, debugDirs ...string) string {
	t.Helper()
	args := []string{"-b", "--no-lldbinit"}
	for _, d := range debugDirs {
		args = append(args, "-O", "settings append target.debug-file-search-paths '"+d+"'")
	}
	args = append(args,
		"-o", "breakpoint set -n fixture_add",
		"-o", "run",
		"-o", "bt 1",
		"-o", "kill",
		"--", filepath.Join(f.venv, "bin", "python"), "-c", "import mypkg._fixture as f; f.add(1, 2)")
	return runDebugger(t, "lldb", lldb, args...)
}

// TestLLDBFindsStoreSymbols is TestGDBFindsStoreSymbols for lldb, whose
// target.debug-file-search-paths entries are searched for
// .build-id/xx/rest.debug as well.
func TestLLDBFindsStoreSymbols(t *testing.T) {
	f := getFixture(t)
	lldb := testenv.Need(t, "lldb")
	s := &Store{Dir: filepath.Join(t.TempDir(), "pyattach debug")}
	mustInstall(t, s, f.zip, mustDist(t, f.zip, f.site))
	withLine := regexp.MustCompile(`fixture_add\(a=1, b=2\) at _fixture\.c:\d+`)
	out := runLLDB(t, f, lldb, s.Dir)
	if !withLine.MatchString(out) {
		t.Fatalf("with the store, lldb shows no source line for fixture_add:\n%s", out)
	}
	out = runLLDB(t, f, lldb)
	if !strings.Contains(out, "`fixture_add") {
		t.Fatalf("without the store, lldb did not stop in fixture_add:\n%s", out)
	}
	if strings.Contains(out, "_fixture.c:") {
		t.Fatalf("without the store, lldb still finds _fixture.c (the test proves nothing):\n%s", out)
	}
}
