package elfinfo

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

func digestOf(t *testing.T, b []byte) (string, error) {
	t.Helper()
	f, err := NewFile(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	return LoadDigest(f, bytes.NewReader(b))
}

// TestLoadDigestStrip: a file with its build-id note removed, then
// stripped, has the digest of the unstripped note-less file, and its
// cached ContentOf answer; another program's differs.
func TestLoadDigestStrip(t *testing.T) {
	objcopy := testenv.Need(t, "objcopy")
	strip := testenv.Need(t, "strip")
	dir := t.TempDir()
	src := testenv.CC(t, dir, "prog", "int main(void) { return 0; }\n", "-g", "-Wl,--build-id=sha1")
	full := filepath.Join(dir, "full")
	stripped := filepath.Join(dir, "stripped")
	if out, err := exec.Command(objcopy, "--remove-section", ".note.gnu.build-id", src, full).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	if out, err := exec.Command(strip, "-o", stripped, full).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	a, err := ContentOf(full)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ContentOf(stripped)
	if err != nil {
		t.Fatal(err)
	}
	if a.Digest != b.Digest || a.Size == b.Size {
		t.Fatalf("full %+v, stripped %+v: want one digest, two sizes", a, b)
	}
	again, err := ContentOf(stripped)
	if err != nil || again != b {
		t.Fatalf("cached: %+v, %v; want %+v", again, err, b)
	}
	if id, err := ReadBuildIDFile(stripped); !errors.Is(err, ErrNoBuildID) {
		t.Fatalf("build-id %q, %v left", id, err)
	}
	other, err := ContentOf("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if other.Digest == a.Digest {
		t.Fatal("/bin/sh has the digest of prog")
	}
	raw, err := os.ReadFile(stripped)
	if err != nil {
		t.Fatal(err)
	}
	// A changed byte inside the code changes the digest.
	f, _ := NewFile(bytes.NewReader(raw))
	for _, p := range f.Progs {
		if p.Type == 1 && p.Flags&1 != 0 && p.Filesz > 0 {
			raw[p.Off+p.Filesz/2] ^= 1
			break
		}
	}
	if d, err := digestOf(t, raw); err != nil || d == b.Digest {
		t.Fatalf("a changed text byte: %s, %v", d, err)
	}
	// Cut inside a segment: a one-line format error.
	_, err = digestOf(t, raw[:len(raw)/2])
	checkFormatError(t, err, -1)
	if err == nil {
		t.Fatal("a truncated file was hashed")
	}
}

func FuzzLoadDigest(f *testing.F) {
	if b, err := os.ReadFile("/bin/true"); err == nil {
		f.Add(b)
		f.Add(b[:len(b)/3])
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ef, err := NewFile(bytes.NewReader(b))
		if err != nil {
			return
		}
		d, err := LoadDigest(ef, bytes.NewReader(b))
		checkFormatError(t, err, -1, ErrNoLoad)
		if err == nil && len(d) != 64 {
			t.Fatalf("digest %q", d)
		}
		d2, err2 := LoadDigest(ef, bytes.NewReader(b))
		if d != d2 || (err == nil) != (err2 == nil) || err != nil && !errors.Is(err2, ErrCorrupt) && !errors.Is(err2, ErrNoLoad) {
			t.Fatalf("two digests differ: %q %v, %q %v", d, err, d2, err2)
		}
	})
}
