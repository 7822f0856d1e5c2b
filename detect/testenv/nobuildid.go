package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NoBuildIDBuild is an interpreter made as python-build-standalone's
// are: no GNU build-id note, stripped, and its unstripped twin (also
// without the note) in another directory.
type NoBuildIDBuild struct {
	// Prefix holds bin/pythonX.Y and, for a shared build,
	// lib/libpythonX.Y.so.1.0, both stripped; lib/pythonX.Y links to
	// the original's standard library.
	Prefix string
	// Exe is Prefix/bin/pythonX.Y and Libpython Prefix/lib's libpython
	// ("" for a static build).
	Exe, Libpython string
	// Twin is the directory of the unstripped builds:
	// Twin/bin/pythonX.Y and Twin/lib/libpythonX.Y.so.1.0.
	Twin string
	// Env runs Exe and the venvs made from it: LD_LIBRARY_PATH naming
	// Prefix/lib, so that the copy of libpython is loaded (a pyenv
	// build's RUNPATH names its own lib directory, which
	// LD_LIBRARY_PATH comes before).
	Env []string
}

// NoBuildID makes a NoBuildIDBuild of the pyenv build p: its
// interpreter (and libpython when shared) with .note.gnu.build-id
// removed by objcopy as the twin, and that stripped by strip.
func NoBuildID(t testing.TB, p Python) NoBuildIDBuild {
	t.Helper()
	objcopy := Need(t, "objcopy")
	strip := Need(t, "strip")
	dir := t.TempDir()
	b := NoBuildIDBuild{Prefix: filepath.Join(dir, "prefix"), Twin: filepath.Join(dir, "full")}
	for _, d := range []string{"bin", "lib"} {
		for _, root := range []string{b.Prefix, b.Twin} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	split := func(src, rel string) string {
		twin := filepath.Join(b.Twin, rel)
		out := filepath.Join(b.Prefix, rel)
		if o, err := exec.Command(objcopy, "--remove-section", ".note.gnu.build-id", src, twin).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %s: %v\n%s", src, err, o)
		}
		if o, err := exec.Command(strip, "-o", out, twin).CombinedOutput(); err != nil {
			t.Fatalf("strip %s: %v\n%s", twin, err, o)
		}
		return out
	}
	real, err := filepath.EvalSymlinks(p.Exe)
	if err != nil {
		t.Fatal(err)
	}
	b.Exe = split(real, filepath.Join("bin", filepath.Base(p.Exe)))
	if lib := p.Libpython(); lib != "" {
		b.Libpython = split(lib, filepath.Join("lib", filepath.Base(lib)))
		b.Env = []string{"LD_LIBRARY_PATH=" + filepath.Join(b.Prefix, "lib")}
	}
	stdlib := "python" + p.Minor() + strings.TrimSuffix(p.ABIFlags, "m")
	if err := os.Symlink(filepath.Join(p.Prefix, "lib", stdlib), filepath.Join(b.Prefix, "lib", stdlib)); err != nil {
		t.Fatal(err)
	}
	return b
}
