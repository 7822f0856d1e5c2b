package debugfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// A program linked without a build-id, stripped: its unstripped build
// under a debug directory is found by its loadable segments (ViaContent);
// a stripped copy there is rejected for lacking DWARF, and the
// distribution's /usr/lib/debug is never walked.
func TestLocateTwin(t *testing.T) {
	strip := testenv.Need(t, "strip")
	dir := t.TempDir()
	debugDir := filepath.Join(dir, "debug")
	full := testenv.CC(t, filepath.Join(debugDir, "install", "bin"), "prog", "int main(void) { return 0; }\n", "-g", "-Wl,--build-id=none")
	mod := filepath.Join(dir, "bin", "prog")
	if err := os.MkdirAll(filepath.Dir(mod), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(strip, "-o", mod, full).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	// A stripped copy in the debug directory too, found first or not: it
	// is no twin.
	if out, err := exec.Command(strip, "-o", filepath.Join(debugDir, "a-stripped"), full).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	// Another program is not its twin (with the same layout, it is
	// rejected: its segments differ).
	testenv.CC(t, debugDir, "other", "int main(void) { return 1; }\n", "-g", "-Wl,--build-id=none")

	l := &Locator{DebugDirs: []string{"/usr/lib/debug", debugDir}}
	f, err := l.Locate(Module{Path: mod})
	if err != nil {
		t.Fatal(err)
	}
	if f.Via != ViaContent || f.Path != full || f.Kind != KindDWARF {
		t.Fatalf("found %+v; want content %s dwarf", f, full)
	}
	rejected := false
	for _, r := range f.Rejected {
		if r.Path == filepath.Join(debugDir, "a-stripped") && strings.Contains(r.Reason, "no DWARF") {
			rejected = true
		}
	}
	if !rejected {
		t.Errorf("the stripped copy is not listed as rejected: %+v", f.Rejected)
	}

	// Without the debug directory: nothing.
	l = &Locator{DebugDirs: []string{filepath.Join(dir, "none")}}
	if f, err := l.Locate(Module{Path: mod}); err != nil || f.Via != ViaNone {
		t.Fatalf("no debug directory: %+v, %v", f, err)
	}
}
