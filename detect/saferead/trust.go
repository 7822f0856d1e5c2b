package saferead

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUntrusted is wrapped by every *UntrustedError.
var ErrUntrusted = errors.New("not safe to run")

// UntrustedError says which component of a path another user could
// change, and how.
type UntrustedError struct {
	Path      string // the path that was checked
	Component string // the file, directory or link at fault
	Reason    string // "owned by uid 1000", "writable by others", ...
}

func (e *UntrustedError) Error() string {
	if e.Component == e.Path {
		return fmt.Sprintf("%s is %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("%s: %s is %s", e.Path, e.Component, e.Reason)
}

// Unwrap returns ErrUntrusted.
func (e *UntrustedError) Unwrap() error { return ErrUntrusted }

// maxLinks bounds the symbolic links followed, as the kernel does.
const maxLinks = 40

// CheckTrusted reports whether only uid and root can change what name
// refers to: every directory on the way, every symbolic link followed
// and the file itself must be owned by uid or root and not writable by
// group or others (sticky directories excepted). name must be absolute.
// Links in /proc/PID (root, cwd, exe) are followed as the kernel does,
// so that a path under /proc/PID/root is checked inside that root.
func CheckTrusted(name string, uid int) error {
	if !path.IsAbs(name) {
		return fmt.Errorf("check %s: not an absolute path", name)
	}
	w := walker{name: name, uid: uint32(uid)}
	fd, err := w.walk(name)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

type walker struct {
	name  string
	uid   uint32
	links int
}

// walk opens p (absolute) with O_PATH, checking every component, and
// returns the descriptor of its last component.
func (w *walker) walk(p string) (int, error) {
	dir, err := unix.Open("/", oPath|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("check %s: %w", w.name, err)
	}
	if err := w.check(dir, "/"); err != nil {
		unix.Close(dir)
		return -1, err
	}
	return w.walkFrom(dir, "/", p)
}

// walkFrom resolves rel against the open directory dir (named shown),
// consuming dir.
func (w *walker) walkFrom(dir int, shown, rel string) (int, error) {
	parts := strings.Split(rel, "/")
	cur := dir
	// stack of the directories above cur, for "..".
	var above []int
	var aboveNames []string
	closeAll := func() {
		unix.Close(cur)
		for _, fd := range above {
			unix.Close(fd)
		}
	}
	// enter checks fd, the component named next, and descends into it;
	// on error it closes fd and every directory it holds.
	enter := func(fd int, next string) error {
		if err := w.check(fd, next); err != nil {
			unix.Close(fd)
			closeAll()
			return err
		}
		above = append(above, cur)
		aboveNames = append(aboveNames, shown)
		cur, shown = fd, next
		return nil
	}
	for i := 0; i < len(parts); i++ {
		c := parts[i]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(above) > 0 {
				unix.Close(cur)
				cur = above[len(above)-1]
				shown = aboveNames[len(aboveNames)-1]
				above = above[:len(above)-1]
				aboveNames = aboveNames[:len(aboveNames)-1]
			}
			continue
		}
		next := path.Join(shown, c)
		fd, err := unix.Openat(cur, c, oPathNoFollow|unix.O_CLOEXEC, 0)
		if err != nil {
			closeAll()
			return -1, fmt.Errorf("check %s: %s: %w", w.name, next, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			closeAll()
			return -1, fmt.Errorf("check %s: %s: %w", w.name, next, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if st.Uid != 0 && st.Uid != w.uid {
				unix.Close(fd)
				closeAll()
				return -1, &UntrustedError{w.name, next, fmt.Sprintf("a symbolic link owned by uid %d", st.Uid)}
			}
			if w.links++; w.links > maxLinks {
				unix.Close(fd)
				closeAll()
				return -1, fmt.Errorf("check %s: too many levels of symbolic links", w.name)
			}
			rest := strings.Join(parts[i+1:], "/")
			if isProcMagic(shown, c) {
				// The kernel's own link: open through it.
				unix.Close(fd)
				fd, err = unix.Openat(cur, c, oPath|unix.O_CLOEXEC, 0)
				if err != nil {
					closeAll()
					return -1, fmt.Errorf("check %s: %s: %w", w.name, next, err)
				}
				if err := enter(fd, next); err != nil {
					return -1, err
				}
				parts = append([]string{}, strings.Split(rest, "/")...)
				i = -1
				continue
			}
			target, err := readlinkat(cur, c)
			unix.Close(fd)
			if err != nil {
				closeAll()
				return -1, fmt.Errorf("check %s: %s: %w", w.name, next, err)
			}
			if path.IsAbs(target) {
				closeAll()
				return w.walk(path.Join(target, rest))
			}
			parts = append(strings.Split(target, "/"), parts[i+1:]...)
			i = -1
			continue
		}
		if err := enter(fd, next); err != nil {
			return -1, err
		}
	}
	for _, fd := range above {
		unix.Close(fd)
	}
	return cur, nil
}

// check refuses a file or directory that another user owns or that its
// group or others may write.
func (w *walker) check(fd int, shown string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("check %s: %s: %w", w.name, shown, err)
	}
	if st.Uid != 0 && st.Uid != w.uid {
		return &UntrustedError{w.name, shown, fmt.Sprintf("owned by uid %d", st.Uid)}
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if isDir && st.Mode&unix.S_ISVTX != 0 {
		return nil
	}
	switch perm := st.Mode & 0o777; {
	case perm&0o022 == 0o022:
		return &UntrustedError{w.name, shown, "writable by its group and by others"}
	case perm&0o002 != 0:
		return &UntrustedError{w.name, shown, "writable by others"}
	case perm&0o020 != 0:
		return &UntrustedError{w.name, shown, fmt.Sprintf("writable by its group (gid %d)", st.Gid)}
	}
	return nil
}

// isProcMagic reports /proc/PID/{root,cwd,exe} and /proc/PID/task/TID/...
// links, which name a place the kernel knows rather than a path.
func isProcMagic(dir, name string) bool {
	if name != "root" && name != "cwd" && name != "exe" {
		return false
	}
	rest, ok := strings.CutPrefix(dir, "/proc/")
	if !ok {
		return false
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == "" {
			return false
		}
	}
	return true
}

func readlinkat(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
