package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the name of every temporary file pyattach writes:
// .pyattach-tmp-<pid>-<random>, pid being the writer's process id, so
// that Sweep can tell a live writer's file from one left by a killed run.
const TempPrefix = ".pyattach-tmp-"

// StaleAge is how long a temporary file may go unmodified before Sweep
// removes it even though a process with its writer's pid is alive (the
// pid may have been reused).
const StaleAge = 24 * time.Hour

// TempFile is a temporary file in the directory of the file it will
// become. Commit renames it into place; Cleanup, safe to defer and to
// call after Commit, removes it when Commit did not happen.
type TempFile struct {
	*os.File
	done bool
}

// CreateTemp creates a new temporary file (mode 0600) in dir, named
// TempPrefix<pid>-<random>, after sweeping dir of stale ones.
func CreateTemp(dir string) (*TempFile, error) {
	Sweep(dir)
	var b [8]byte
	for try := 0; ; try++ {
		rand.Read(b[:])
		name := filepath.Join(dir, TempPrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			return &TempFile{File: f}, nil
		}
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return nil, err
		}
	}
}

// Commit flushes the file to disk, closes it, renames it to name (in
// the same file system, normally the same directory) and flushes that
// directory, so that name holds either its old content or all of the
// new, even after a crash. On failure the temporary file is removed.
func (t *TempFile) Commit(name string) error {
	if t.done {
		return fmt.Errorf("commit %s: already done", name)
	}
	err := t.Sync()
	if cerr := t.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
		err = cerr
	}
	if err == nil {
		err = os.Rename(t.Name(), name)
	}
	if err != nil {
		t.Cleanup()
		return err
	}
	t.done = true
	return syncDir(filepath.Dir(name))
}

// Rename is the last step of Commit for a temporary file whose content
// its writer has already flushed (File.Sync) and closed, such as one of
// several files installed together: it renames oldpath to newpath and
// flushes newpath's directory (and oldpath's, when another), so that the
// rename survives a crash. Writers use WriteFile or Commit; Rename is for
// the few that must check a whole set of files before putting any in
// place.
func Rename(oldpath, newpath string) error {
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	od, nd := filepath.Dir(oldpath), filepath.Dir(newpath)
	if err := syncDir(nd); err != nil {
		return err
	}
	if od != nd {
		return syncDir(od)
	}
	return nil
}

// Cleanup closes and removes the temporary file unless Commit put it in
// place.
func (t *TempFile) Cleanup() {
	if t.done {
		return
	}
	t.done = true
	t.Close()
	os.Remove(t.Name())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// WriteFile writes data to name with mode perm (exactly, whatever the
// umask) through a temporary file in name's directory: the file is
// written, flushed, renamed into place and the directory flushed. name
// is never half-written, and no temporary file stays behind on error.
// The directory must exist.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	t, err := CreateTemp(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer t.Cleanup()
	if _, err := t.Write(data); err != nil {
		return err
	}
	if err := t.Chmod(perm); err != nil {
		return err
	}
	return t.Commit(name)
}

// Sweep removes from dir the temporary files pyattach left there: named
// TempPrefix..., regular, owned by the effective user, and either
// written by a process that no longer runs or unmodified for StaleAge.
// A live writer's file is never removed. It returns the names removed;
// a directory that cannot be read is skipped.
func Sweep(dir string) []string {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	uid := os.Geteuid()
	now := time.Now()
	var removed []string
	for _, n := range names {
		if !strings.HasPrefix(n, TempPrefix) {
			continue
		}
		p := filepath.Join(dir, n)
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() || fileUID(st) != uid {
			continue
		}
		if now.Sub(st.ModTime()) < StaleAge && writerAlive(n) {
			continue
		}
		if os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// writerAlive says whether the process that wrote the temporary file
// name may still be writing it. A name without a pid (written by an
// older pyattach) counts as alive, so only its age removes it.
func writerAlive(name string) bool {
	rest := strings.TrimPrefix(name, TempPrefix)
	pidStr, _, ok := strings.Cut(rest, "-")
	if !ok {
		return true
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return true
	}
	return unix.Kill(pid, 0) != unix.ESRCH
}
