package walkerdir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/pywalk"
)

func TestWrite(t *testing.T) {
	home := t.TempDir()
	dir, err := Write(home)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(dir, filepath.Join(home, "pyattach", "walker")+"/") {
		t.Errorf("directory %s not under %s/pyattach/walker", dir, home)
	}
	for n, b := range pywalk.Files() {
		if got, err := os.ReadFile(filepath.Join(dir, n)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("walker file %s not written (%v)", n, err)
		}
	}
	// Named by content: a second run finds the same directory.
	if again, err := Write(home); err != nil || again != dir {
		t.Errorf("second write: %s, %v; want %s", again, err, dir)
	}
	// Without its Complete file (a run that stopped half-way), a
	// damaged file is written again.
	some := ""
	for n := range pywalk.Files() {
		some = n
		break
	}
	if err := os.WriteFile(filepath.Join(dir, some), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, Complete)); err != nil {
		t.Fatalf("no %s after a write: %v", Complete, err)
	}
	if _, err := Write(home); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, some)); !bytes.Equal(got, pywalk.Files()[some]) {
		t.Errorf("%s was not written again", some)
	}
	// A data directory that is a file: a DirError for the hint.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var de *DirError
	if _, err := Write(file); !errors.As(err, &de) {
		t.Errorf("data directory a file: %v, want a *DirError", err)
	}
}
