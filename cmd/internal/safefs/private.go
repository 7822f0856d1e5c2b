package safefs

import (
	"errors"
	"fmt"
	"github.com/pyattach/pyattach/detect/saferead"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// PrivateDir makes sure that base/sub... is a directory only the
// effective user (and root) can change, and returns its path.
//
// base is a directory pyattach uses but does not own, such as
// $XDG_CACHE_HOME: missing components of it are created with mode 0700
// (as the XDG base directory specification asks), existing ones are left
// as they are. Each element of sub is pyattach's own directory (such as
// "pyattach", "scripts"): it is created with mode 0700, an existing one
// with a wider mode is tightened to 0700, and one owned by another user
// is an *saferead.UntrustedError that names the owner.
//
// Nothing is created below a component that another user could change:
// before each directory is made, the path above it is checked with
// saferead.CheckTrusted, so a symbolic link owned by another user is never
// followed, and the result is checked once more at the end.
func PrivateDir(base string, sub ...string) (string, error) {
	if !filepath.IsAbs(base) {
		return "", fmt.Errorf("private directory %s: not an absolute path", base)
	}
	base = filepath.Clean(base)
	uid := os.Geteuid()
	if err := makeBase(base, uid); err != nil {
		return "", err
	}
	dir := base
	for _, s := range sub {
		if s == "" || s == "." || s == ".." || filepath.Base(s) != s {
			return "", fmt.Errorf("private directory %s: bad element %q", base, s)
		}
		dir = filepath.Join(dir, s)
		if err := makeOwn(dir, uid); err != nil {
			return "", err
		}
	}
	if err := saferead.CheckTrusted(dir, uid); err != nil {
		return "", err
	}
	return dir, nil
}

// makeBase creates the missing components of base, each with mode 0700,
// after checking that the deepest existing one is trusted.
func makeBase(base string, uid int) error {
	var missing []string
	have := base
	for {
		_, err := os.Lstat(have)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("private directory %s: %w", base, err)
		}
		missing = append(missing, have)
		parent := filepath.Dir(have)
		if parent == have {
			break
		}
		have = parent
	}
	if err := saferead.CheckTrusted(have, uid); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := mkdir(missing[i]); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return saferead.CheckTrusted(base, uid)
	}
	return nil
}

// mkdir makes dir with mode 0700; a directory already there (made by a
// concurrent run) is fine.
func mkdir(dir string) error {
	err := os.Mkdir(dir, 0o700)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	st, serr := os.Lstat(dir)
	if serr == nil && st.IsDir() {
		return nil
	}
	return err
}

// makeOwn makes sure dir, whose parent is trusted, is a directory of
// uid with mode 0700.
func makeOwn(dir string, uid int) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := mkdir(dir); err != nil {
			return err
		}
		st, err = os.Lstat(dir)
	}
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		// A link of the user's own (or root's) to a directory elsewhere
		// is followed when everything it leads through is trusted.
		if owner := fileUID(st); owner != uid && owner != 0 {
			return &saferead.UntrustedError{Path: dir, Component: dir, Reason: "a symbolic link owned by " + UserName(owner) + ", not by " + UserName(uid) + " who runs pyattach"}
		}
		if err := saferead.CheckTrusted(dir, uid); err != nil {
			return err
		}
		if st, err = os.Stat(dir); err != nil {
			return err
		}
	}
	if !st.IsDir() {
		return fmt.Errorf("private directory %s: not a directory", dir)
	}
	if owner := fileUID(st); owner != uid {
		return &saferead.UntrustedError{Path: dir, Component: dir, Reason: "owned by " + UserName(owner) + ", not by " + UserName(uid) + " who runs pyattach"}
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("private directory %s: %w", dir, err)
		}
	}
	return nil
}

func fileUID(st fs.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

// UserName is "uid N (name)", or "uid N" when the user database has no
// name for N.
func UserName(uid int) string {
	s := "uid " + strconv.Itoa(uid)
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		s += " (" + u.Username + ")"
	}
	return s
}
