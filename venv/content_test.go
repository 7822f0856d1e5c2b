package venv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// A --copies venv of an interpreter without a build-id (as
// python-build-standalone's are) is matched by content: size and
// loadable segments. A copy whose code differs, at the same size, is a
// copy of nothing, and the error says what was compared.
func TestResolveCopyByContent(t *testing.T) {
	dir := t.TempDir()
	base := testenv.CC(t, filepath.Join(dir, "base", "bin"), "python3.12", "int main(void) { return 0; }\n", "-Wl,--build-id=none")
	if _, err := elfinfo.ReadBuildIDFile(base); !errors.Is(err, elfinfo.ErrNoBuildID) {
		t.Fatalf("%s: build-id read: %v", base, err)
	}
	os.Remove(base + ".c")
	venvDir := filepath.Join(dir, "venv")
	writeFile(t, filepath.Join(venvDir, "pyvenv.cfg"), "home = "+filepath.Dir(base)+"\nversion = 3.12.1\n", 0o644)
	cp := filepath.Join(venvDir, "bin", "python")
	testenv.CopyFile(t, base, cp, 0o755)

	res := checkResolve(t, cp, isolated(t), base, viaCfg)
	if res.MatchedBy != MatchedByContent || res.BuildID != "" {
		t.Errorf("matched by %q, build-id %q; want content and none", res.MatchedBy, res.BuildID)
	}

	// The same size, one byte of code changed.
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elfinfo.NewFile(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == 1 && p.Flags&1 != 0 && p.Filesz > 0 {
			b[p.Off+p.Filesz/2] ^= 0xff
			break
		}
	}
	if err := os.WriteFile(cp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(cp, isolated(t))
	var nm *NoMatchError
	if !errors.As(err, &nm) {
		t.Fatalf("changed copy: %v; want a NoMatchError", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "no build-id; compared by size and loadable segments") || !strings.Contains(msg, base+" has no build-id, ") || !strings.Contains(msg, "recreate the venv") {
		t.Errorf("changed copy: %s", msg)
	}
}
