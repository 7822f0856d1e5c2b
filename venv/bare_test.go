package venv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

func TestInPrefix(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"p/bin/python3.12", "p/lib/python3.12/os.py", "app/bin/python3", "app/lib/x.so"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !InPrefix(filepath.Join(dir, "p/bin/python3.12")) {
		t.Error("an interpreter beside lib/python3.12/os.py is not in its prefix")
	}
	if InPrefix(filepath.Join(dir, "app/bin/python3")) {
		t.Error("a bare copy without a standard library is taken as installed")
	}
}

func TestPrefixBin(t *testing.T) {
	testenv.Cases(t, "PrefixBin", PrefixBin, map[string]string{
		"/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0": "/root/.pyenv/versions/3.12.1/bin",
		"/opt/py/lib64/libpython3.9.so.1.0":                     "/opt/py/bin",
		"/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0":        "",
	})
}
