package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// InCI reports whether CI=true: there a missing tool, file or privilege
// fails a test instead of skipping it.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing is the one rule for a requirement the machine does not meet:
// it skips the test, or fails it under CI=true.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (required under CI=true)", msg)
	}
	t.Skip(msg)
}

// Platform skips a test that cannot run on this operating system or
// architecture, also under CI=true: no package or setup gives a machine
// what it lacks there. why says what the test needs that this platform
// does not have.
func Platform(t testing.TB, why string) {
	t.Helper()
	t.Skipf("not on %s/%s: %s", runtime.GOOS, runtime.GOARCH, why)
}

// Short skips a test under go test -short, a quick run its caller chose;
// why says what makes the test long.
func Short(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("skipped with -short: %s", why)
	}
}

// Need returns the path of tool: a bare name is looked up on PATH, a
// name with a slash must be an executable file. When it is missing,
// Missing decides.
func Need(t testing.TB, tool string) string {
	t.Helper()
	p, err := lookTool(tool)
	if err != nil {
		Missing(t, "%s not available: %v", tool, err)
	}
	return p
}

func lookTool(tool string) (string, error) {
	if !strings.ContainsRune(tool, '/') {
		return exec.LookPath(tool)
	}
	fi, err := os.Stat(tool)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", tool)
	}
	return tool, nil
}

// NeedFile returns path when it exists. When it does not, Missing
// decides; hint says what provides it ("apt-get install python3.11-dbg").
func NeedFile(t testing.TB, path, hint string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if hint != "" {
			Missing(t, "%v (%s)", err, hint)
		}
		Missing(t, "%v", err)
	}
	return path
}

// NeedRoot requires an effective uid of 0; why says what needs it.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "needs root: %s", why)
	}
}

// Nobody prepares a run of this test binary as user and group nobody
// (65534), through setpriv: dir is a new directory anyone can enter,
// holding a copy of the binary (the original may sit where nobody cannot
// read it), removed when the test ends. run starts the copy with
// -test.run=^$ in dir, with env added (HelperMain reads it to act as a
// helper), and returns what it printed on stdout; a failure fails the
// test. Only root can do this: NeedRoot decides elsewhere.
func Nobody(t testing.TB) (dir string, run func(env ...string) []byte) {
	t.Helper()
	NeedRoot(t, "to run a helper as nobody")
	setpriv := Need(t, "setpriv")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err = os.MkdirTemp("", "testenv-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	CopyFile(t, self, bin, 0o755)
	run = func(env ...string) []byte {
		t.Helper()
		var out []byte
		var err error
		for range 20 {
			c := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^$")
			c.Dir = dir
			c.Env = append(os.Environ(), env...)
			// Retry while the copy is still open for writing in a child
			// forked by another test.
			out, err = c.Output()
			var ee *exec.ExitError
			if err == nil || !errors.As(err, &ee) || !strings.Contains(string(ee.Stderr), "busy") {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("helper as nobody: %v: %s", err, ee.Stderr)
			}
			t.Fatalf("helper as nobody: %v", err)
		}
		return out
	}
	return dir, run
}

// HelperEnv is the environment variable that makes a test binary act as
// a helper: run it (see Nobody) with HelperEnv=mode, and the TestMain of
// its package, HelperMain, runs the helper for mode.
const HelperEnv = "PYATTACH_TEST_HELPER"

// HelperMain is the TestMain of a package whose tests run the test
// binary as a helper: when HelperEnv holds mode, the binary runs helper
// and exits with its status instead of running the tests.
func HelperMain(m *testing.M, mode string, helper func() int) {
	if os.Getenv(HelperEnv) == mode {
		os.Exit(helper())
	}
	os.Exit(m.Run())
}
