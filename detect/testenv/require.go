package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
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
