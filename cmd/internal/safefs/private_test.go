package safefs

import (
	"errors"
	"github.com/pyattach/pyattach/detect/saferead"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/testenv"
)

// tempDir is a directory only root or the test's user can change.
var tempDir = testenv.PrivateTempDir

func needRoot(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t, "to give files to uid 65534")
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestPrivateDirCreates(t *testing.T) {
	d := tempDir(t)
	base := filepath.Join(d, "home", ".cache") // neither exists
	got, err := PrivateDir(base, "pyattach", "scripts")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "pyattach", "scripts"); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	for _, p := range []string{filepath.Join(d, "home"), base, filepath.Join(base, "pyattach"), got} {
		if m := mode(t, p); m != 0o700 {
			t.Errorf("%s: mode %o, want 700", p, m)
		}
	}
	// Again: nothing changes, no error.
	if _, err := PrivateDir(base, "pyattach", "scripts"); err != nil {
		t.Fatal(err)
	}
}

// An existing pyattach directory with a wider mode is tightened; the
// base directory above it (not pyattach's) is left alone.
func TestSecurityPrivateDirTightens(t *testing.T) {
	d := tempDir(t)
	base := filepath.Join(d, "cache")
	os.Mkdir(base, 0o755)
	own := filepath.Join(base, "pyattach")
	os.Mkdir(own, 0o755)
	os.Chmod(own, 0o777)
	if _, err := PrivateDir(base, "pyattach"); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, own); m != 0o700 {
		t.Errorf("pyattach dir: mode %o, want 700", m)
	}
	if m := mode(t, base); m != 0o755 {
		t.Errorf("base dir: mode %o, want 755 (not pyattach's to change)", m)
	}
}

// A pyattach directory owned by another user is refused, and the error
// says who owns it.
func TestSecurityPrivateDirOtherOwner(t *testing.T) {
	needRoot(t)
	d := tempDir(t)
	own := filepath.Join(d, "pyattach")
	os.Mkdir(own, 0o700)
	os.Chown(own, 65534, 65534)
	_, err := PrivateDir(d, "pyattach", "scripts")
	var ue *saferead.UntrustedError
	if !errors.Is(err, saferead.ErrUntrusted) || !errors.As(err, &ue) {
		t.Fatalf("error %v, want an *saferead.UntrustedError", err)
	}
	if !strings.Contains(err.Error(), "owned by uid 65534 (nobody)") {
		t.Errorf("error %q does not name the owner", err)
	}
	if _, err := os.Lstat(filepath.Join(own, "scripts")); !os.IsNotExist(err) {
		t.Errorf("scripts made inside another user's directory: %v", err)
	}
}

// A symbolic link planted by uid 65534 in place of the scripts
// directory, of pyattach's directory, or of the base directory is never
// followed: nothing is created at its target, and the error names the
// link's owner.
func TestSecurityPrivateDirPlantedLink(t *testing.T) {
	needRoot(t)
	for _, at := range []string{"scripts", "pyattach", "base"} {
		t.Run(at, func(t *testing.T) {
			d := tempDir(t)
			target := filepath.Join(d, "attacker")
			os.Mkdir(target, 0o700) // the link's target is root's own: only the link is foreign
			base := filepath.Join(d, "cache")
			var link string
			switch at {
			case "scripts":
				os.MkdirAll(filepath.Join(base, "pyattach"), 0o700)
				link = filepath.Join(base, "pyattach", "scripts")
			case "pyattach":
				os.MkdirAll(base, 0o700)
				link = filepath.Join(base, "pyattach")
			case "base":
				link = base
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(link, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			_, err := PrivateDir(base, "pyattach", "scripts")
			if !errors.Is(err, saferead.ErrUntrusted) {
				t.Fatalf("error %v, want saferead.ErrUntrusted", err)
			}
			if !strings.Contains(err.Error(), "symbolic link owned by uid 65534") {
				t.Errorf("error %q does not name the link's owner", err)
			}
			ents, _ := os.ReadDir(target)
			for _, e := range ents {
				t.Errorf("written through the link: %s", e.Name())
			}
		})
	}
}

func TestPrivateDirNotWritable(t *testing.T) {
	d := tempDir(t)
	file := filepath.Join(d, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := PrivateDir(filepath.Join(file, "cache"), "pyattach"); err == nil {
		t.Fatal("no error for a base under a file")
	}
	if _, err := PrivateDir("relative", "pyattach"); err == nil {
		t.Fatal("no error for a relative base")
	}
	if _, err := PrivateDir(d, "../x"); err == nil {
		t.Fatal("no error for an element with a slash")
	}
}

func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFile(t *testing.T) {
	d := tempDir(t)
	p := filepath.Join(d, "f")
	if err := WriteFile(p, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o604); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q", b)
	}
	if m := mode(t, p); m != 0o604 {
		t.Errorf("mode %o, want 604", m)
	}
	if left := temps(t, d); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// A failing rename (onto a non-empty directory) leaves no temporary file.
	os.MkdirAll(filepath.Join(d, "dir", "x"), 0o700)
	if err := WriteFile(filepath.Join(d, "dir"), []byte("x"), 0o644); err == nil {
		t.Fatal("no error renaming over a directory")
	}
	if left := temps(t, d); len(left) != 0 {
		t.Errorf("temporary files left after an error: %v", left)
	}
	if err := WriteFile(filepath.Join(d, "missing", "f"), nil, 0o644); err == nil {
		t.Fatal("no error for a missing directory")
	}
}

func TestCreateTemp(t *testing.T) {
	d := tempDir(t)
	tf, err := CreateTemp(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(tf.Name()), TempPrefix+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("name %s does not carry the writer's pid", tf.Name())
	}
	tf.WriteString("data")
	tf.Cleanup()
	tf.Cleanup()
	if left := temps(t, d); len(left) != 0 {
		t.Errorf("Cleanup left %v", left)
	}
	tf, _ = CreateTemp(d)
	tf.WriteString("data")
	if err := tf.Commit(filepath.Join(d, "done")); err != nil {
		t.Fatal(err)
	}
	tf.Cleanup() // after Commit: keeps the file
	if b, _ := os.ReadFile(filepath.Join(d, "done")); string(b) != "data" {
		t.Errorf("committed %q", b)
	}
	if left := temps(t, d); len(left) != 0 {
		t.Errorf("Commit left %v", left)
	}
}

func TestRename(t *testing.T) {
	d := tempDir(t)
	sub := filepath.Join(d, "sub")
	os.Mkdir(sub, 0o700)
	tf, err := CreateTemp(d)
	if err != nil {
		t.Fatal(err)
	}
	tf.WriteString("data")
	tf.Sync()
	tf.Close()
	if err := Rename(tf.Name(), filepath.Join(sub, "f")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(sub, "f")); string(b) != "data" {
		t.Errorf("renamed %q", b)
	}
	if left := temps(t, d); len(left) != 0 {
		t.Errorf("Rename left %v", left)
	}
	if err := Rename(filepath.Join(sub, "f"), filepath.Join(d, "missing", "f")); err == nil {
		t.Error("no error renaming into a missing directory")
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	return cmd.Process.Pid
}

func TestSecuritySweep(t *testing.T) {
	d := tempDir(t)
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if age > 0 {
			old := time.Now().Add(-age)
			os.Chtimes(p, old, old)
		}
		return p
	}
	dead := mk(TempPrefix+strconv.Itoa(deadPID(t))+"-aaaa", 0)
	live := mk(TempPrefix+strconv.Itoa(os.Getpid())+"-bbbb", 0)
	liveOld := mk(TempPrefix+strconv.Itoa(os.Getpid())+"-cccc", StaleAge+time.Hour)
	legacy := mk(TempPrefix+"123456789", 0)
	legacyOld := mk(TempPrefix+"987654321", StaleAge+time.Hour)
	other := mk("debuginfo", 0)
	removed := Sweep(d)
	gone := map[string]bool{}
	for _, p := range removed {
		gone[p] = true
	}
	for p, want := range map[string]bool{dead: true, live: false, liveOld: true, legacy: false, legacyOld: true, other: false} {
		_, err := os.Lstat(p)
		if exists := err == nil; exists == want {
			t.Errorf("%s: exists %v after Sweep, want removed %v", filepath.Base(p), exists, want)
		}
		if gone[p] != want {
			t.Errorf("%s: reported removed %v, want %v", filepath.Base(p), gone[p], want)
		}
	}
	if os.Geteuid() == 0 {
		// Another user's file of our pattern is never touched.
		theirs := mk(TempPrefix+strconv.Itoa(deadPID(t))+"-dddd", 0)
		os.Lchown(theirs, 65534, 65534)
		Sweep(d)
		if _, err := os.Lstat(theirs); err != nil {
			t.Errorf("another user's temporary file removed: %v", err)
		}
	}
}
