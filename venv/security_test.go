package venv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// A real venv made by python3.11 -m venv in a directory whose name holds
// a newline: its pyvenv.cfg "command" line is broken across two lines,
// which CPython's site.py ignores, and so does pyattach: the copy
// resolves to the system interpreter.
func TestSecurityVenvNewlineInPath(t *testing.T) {
	py := testenv.Debian(t).Exe
	v := testenv.Venv(t, py, filepath.Join(t.TempDir(), "x\ny", "venv"), "--copies")
	cfg, err := os.ReadFile(filepath.Join(v, "pyvenv.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "\ny/venv\n") {
		t.Fatalf("pyvenv.cfg does not hold the broken line this test is about:\n%s", cfg)
	}
	res := checkResolve(t, filepath.Join(v, "bin", "python"), isolated(t), py, viaCfg)
	if res.BuildID != buildID(t, py) || res.Env == nil || res.Env.Kind != KindCopies || res.Env.Path != v {
		t.Errorf("%+v, env %+v", res, res.Env)
	}
}
