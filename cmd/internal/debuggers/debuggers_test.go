package debuggers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// An lldb laid out like Debian's lldb 14: bin/lldb, and its Python package
// under lib/python3.X/dist-packages, which `lldb -P` may or may not name.
func fakeLLDB(t *testing.T) (lldb, pkgDir string) {
	t.Helper()
	root := t.TempDir()
	lldb = filepath.Join(root, "bin", "lldb")
	pkgDir = filepath.Join(root, "lib", "python3.11", "dist-packages")
	for _, f := range []string{lldb, filepath.Join(pkgDir, "lldb", "__init__.py")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return lldb, pkgDir
}

func answer(out string, err error) Runner {
	return func(ctx context.Context, env []string, name string, args ...string) (string, error) {
		if len(args) != 1 || args[0] != "-P" {
			return "", errors.New("unexpected arguments")
		}
		if _, ok := ctx.Deadline(); !ok {
			return "", errors.New("no deadline")
		}
		return out, err
	}
}

func TestLLDBPythonDir(t *testing.T) {
	lldb, pkg := fakeLLDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10e9)
	defer cancel()
	// -P names the right directory: nothing to add.
	if got := LLDBPythonDir(ctx, answer(pkg+"\n", nil), nil, lldb); got != "" {
		t.Errorf("with a right -P: %q, want \"\"", got)
	}
	// -P names a directory without the package (Debian's lldb 14).
	if got := LLDBPythonDir(ctx, answer("/usr/lib/python3/dist-packages\n", nil), nil, lldb); got != pkg {
		t.Errorf("with a wrong -P: %q, want %q", got, pkg)
	}
	// lldb -P fails: the package is still found beside the binary.
	if got := LLDBPythonDir(ctx, answer("", errors.New("exit status 1")), nil, lldb); got != pkg {
		t.Errorf("with a failing -P: %q, want %q", got, pkg)
	}
	// No package anywhere.
	if err := os.RemoveAll(filepath.Join(pkg, "lldb")); err != nil {
		t.Fatal(err)
	}
	if got := LLDBPythonDir(ctx, answer("/nowhere\n", nil), nil, lldb); got != "" {
		t.Errorf("without a package: %q, want \"\"", got)
	}
}

func TestRunKillsAtDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 1)
	defer cancel()
	if _, err := Run(ctx, nil, "/bin/sleep", "5"); err == nil {
		t.Fatal("a command past its deadline returned no error")
	}
}
