package saferead

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// tempDir is a directory only root or the test's user can change.
var tempDir = testenv.PrivateTempDir

func TestCheckTrusted(t *testing.T) {
	uid := os.Geteuid()
	d := tempDir(t)
	ok := filepath.Join(d, "ok.py")
	os.WriteFile(ok, []byte("x"), 0o644)
	if err := CheckTrusted(ok, uid); err != nil {
		t.Fatalf("own 0644 file: %v", err)
	}
	ww := filepath.Join(d, "ww.py")
	os.WriteFile(ww, []byte("x"), 0o644)
	os.Chmod(ww, 0o666)
	if err := CheckTrusted(ww, uid); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "writable by its group and by others") {
		t.Fatalf("0666 file: %v", err)
	}
	gw := filepath.Join(d, "gw")
	os.Mkdir(gw, 0o775)
	os.Chmod(gw, 0o775)
	inGW := filepath.Join(gw, "x.py")
	os.WriteFile(inGW, []byte("x"), 0o644)
	if err := CheckTrusted(inGW, uid); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), gw+" is writable by its group") {
		t.Fatalf("file in a group-writable dir: %v", err)
	}
	sticky := filepath.Join(d, "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	inSticky := filepath.Join(sticky, "x.py")
	os.WriteFile(inSticky, []byte("x"), 0o644)
	if err := CheckTrusted(inSticky, uid); err != nil {
		t.Fatalf("own file in a sticky dir: %v", err)
	}
	// A link of ours to a good file is followed; a relative link with ..
	link := filepath.Join(d, "link.py")
	os.Symlink("sticky/../ok.py", link)
	if err := CheckTrusted(link, uid); err != nil {
		t.Fatalf("own link: %v", err)
	}
	// A link of ours to a bad file is not.
	bad := filepath.Join(d, "bad.py")
	os.Symlink(ww, bad)
	if err := CheckTrusted(bad, uid); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("link to a 0666 file: %v", err)
	}
	if err := CheckTrusted(filepath.Join(d, "missing"), uid); err == nil || errors.Is(err, ErrUntrusted) {
		t.Fatalf("missing file: %v", err)
	}
	// Through the kernel's /proc/self/root link.
	if err := CheckTrusted("/proc/self/root"+ok, uid); err != nil {
		t.Fatalf("through /proc/self/root: %v", err)
	}
}

func TestCheckTrustedOtherOwner(t *testing.T) {
	testenv.NeedRoot(t, "to give files away")
	d := tempDir(t)
	f := filepath.Join(d, "theirs.py")
	os.WriteFile(f, []byte("x"), 0o644)
	if err := os.Lchown(f, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	err := CheckTrusted(f, 0)
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Fatalf("file of uid 65534: %v", err)
	}
	// As that user, it is theirs: fine.
	if err := CheckTrusted(f, 65534); err != nil {
		t.Fatalf("as its owner: %v", err)
	}
	// A link owned by another user is never followed, even to a good file.
	good := filepath.Join(d, "good.py")
	os.WriteFile(good, []byte("x"), 0o644)
	l := filepath.Join(d, "l.py")
	os.Symlink(good, l)
	if err := os.Lchown(l, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := CheckTrusted(l, 0); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "symbolic link owned by uid 65534") {
		t.Fatalf("link of uid 65534: %v", err)
	}
}
