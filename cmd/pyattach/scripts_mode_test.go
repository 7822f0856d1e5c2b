package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptsExecutable: README tells users to run scripts/*.sh
// (make-debug-zip.sh, test.sh ...) as commands: each has its run bit,
// in this checkout and in git's index (what a clone or archive gets).
func TestScriptsExecutable(t *testing.T) {
	dir := filepath.Join("..", "..", "scripts")
	names, err := filepath.Glob(filepath.Join(dir, "*.sh"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no scripts under %s: %v", dir, err)
	}
	for _, n := range names {
		st, err := os.Stat(n)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s is not executable (%v): git update-index --chmod=+x %s", n, st.Mode().Perm(), filepath.Join("scripts", filepath.Base(n)))
		}
	}
	// Outside a git checkout (a source archive) the file modes above are
	// all there is.
	out, err := exec.Command("git", "-C", dir, "ls-files", "-s", "--", ".").Output()
	if err != nil {
		t.Logf("git ls-files: %v: index not checked", err)
		return
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && strings.HasSuffix(f[3], ".sh") && f[0] != "100755" {
			t.Errorf("scripts/%s has mode %s in git's index: git update-index --chmod=+x scripts/%s", f[3], f[0], f[3])
		}
	}
}
