package bundle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/dump"
	"github.com/pyattach/pyattach/cmd/internal/sources"
	"github.com/pyattach/pyattach/detect/srcmap"
)

// TestFrameFiles: each file once, in the order the threads name them,
// the exception's traceback included; native frames' files likewise.
func TestFrameFiles(t *testing.T) {
	var o dump.Output
	err := json.Unmarshal([]byte(`{"threads": [
		{"frames": [{"file": "/app/a.py"}, {"file": "/app/b.py"}], "exception": {"frames": [{"file": "/app/c.py"}, {"file": "/app/a.py"}]},
		 "native": [{"file": "Python/ceval.c"}, {"file": null}, {"file": ""}]},
		{"frames": [{"file": "/app/b.py"}], "native": [{"file": "Python/ceval.c"}, {"file": "Modules/main.c"}]}
	]}`), &o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := FrameFiles(&o), []string{"/app/a.py", "/app/b.py", "/app/c.py"}; !slices.Equal(got, want) {
		t.Errorf("FrameFiles = %q, want %q", got, want)
	}
	if got, want := NativeFrameFiles(&o), []string{"Python/ceval.c", "Modules/main.c"}; !slices.Equal(got, want) {
		t.Errorf("NativeFrameFiles = %q, want %q", got, want)
	}
}

// TestChooseNativeSources: a file is taken only from under a --source
// tree, through the longest rule; the others say why not.
func TestChooseNativeSources(t *testing.T) {
	tree := t.TempDir()
	ceval := filepath.Join(tree, "Python", "ceval.c")
	if err := os.MkdirAll(filepath.Dir(ceval), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ceval, []byte("/* c */\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &sources.Result{
		Files: []string{"/build/cpython/Python/ceval.c", "/build/cpython/Modules/main.c", "/etc/shadow"},
		Rules: []sources.Rule{{From: "/build", To: "/nowhere"}, {From: "/build/cpython", To: tree}},
	}
	roots := []srcmap.Root{{Dir: tree}}
	got := ChooseNativeSources([]string{"Python/ceval.c", "Modules/main.c", "lost.c", "/etc/shadow"}, m, roots)
	want := []NativeSource{
		{Path: "/build/cpython/Python/ceval.c", Local: ceval},
		{Path: "/build/cpython/Modules/main.c", Reason: "under no --source tree"},
		{Path: "lost.c", Reason: "no file table of the interpreter's modules names it with its directory"},
		{Path: "/etc/shadow", Reason: "under no --source tree"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ChooseNativeSources =\n%+v\nwant\n%+v", got, want)
	}
	if got := ChooseNativeSources([]string{"Python/ceval.c"}, m, nil); len(got) != 1 || got[0].Local != "" || got[0].Reason == "" {
		t.Errorf("no source roots: %+v", got)
	}
}
