package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Golden checks got against the golden file; with update it writes got
// there instead. pkg is the package's directory from the module root
// (./gdbgen), for the command that rewrites the file.
func Golden(t testing.TB, file, got string, update bool, pkg string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test %s -update to create it)", err, pkg)
	}
	if got != string(want) {
		t.Errorf("%s differs from the generated text (go test %s -update rewrites it):\n--- got\n%s--- want\n%s", file, pkg, got, want)
	}
}
