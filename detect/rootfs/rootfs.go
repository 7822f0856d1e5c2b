// Package rootfs resolves paths inside a directory that stands for a
// process's root (a container, a chroot: /proc/PID/root), following
// symbolic links as that process would: ".." stops at the root, and an
// absolute link target starts again from the root, so that no path can
// lead out of it. A plain filepath.Join(root, p) would not do: the kernel
// follows an absolute link in it (/usr/lib/debug -> /etc) out to the
// host's file. Every path read under a root goes through here: HostPath,
// Open and Stat for a host directory (shared by proc, pyinfo, pyext and
// debugfile), Resolve for an fs.FS (detect/proc's
// fake trees); Join is the lexical join, for a tree pyattach makes itself
// and that holds no links.
package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/detect/saferead"
)

// MaxLinks bounds the symbolic links followed for one path, as the
// kernel's limit does.
const MaxLinks = 40

// ErrLinkLoop means more than MaxLinks links were followed.
var ErrLinkLoop = errors.New("too many levels of symbolic links")

// Resolve returns name (a path as the process sees it) as a slash path
// relative to fsys's root, with its symbolic links resolved inside
// fsys. A component that cannot be looked at is kept as it is, for the
// caller's open or stat to report; only a link loop is an error.
func Resolve(fsys fs.ReadLinkFS, name string) (string, error) {
	todo := strings.Split(name, "/")
	var done []string
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) > 0 {
				done = done[:len(done)-1]
			}
			continue
		}
		cur := path.Join(append(done, c)...)
		fi, err := fsys.Lstat(cur)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if links++; links > MaxLinks {
			return "", fmt.Errorf("resolve %s: %w", name, ErrLinkLoop)
		}
		target, err := fsys.ReadLink(cur)
		if err != nil {
			done = append(done, c)
			continue
		}
		if path.IsAbs(target) {
			done = done[:0]
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return path.Join(done...), nil
}

// ResolveHost is Resolve on the host directory root; it returns the host
// path of name inside root.
func ResolveHost(root, name string) (string, error) {
	fsys, ok := os.DirFS(root).(fs.ReadLinkFS)
	if !ok {
		return "", fmt.Errorf("resolve %s under %s: file system cannot read links", name, root)
	}
	rel, err := Resolve(fsys, name)
	if err != nil {
		return "", fmt.Errorf("under %s: %w", root, err)
	}
	return filepath.Join(root, filepath.FromSlash(rel)), nil
}

// HostPath returns the host path of name, a path as seen by a process
// whose root is the host directory root: ResolveHost, so that none of
// its links leads out of root. An empty root is this machine's own: name
// comes back cleaned, for the kernel to resolve.
func HostPath(root, name string) (string, error) {
	if root == "" {
		return filepath.Clean(name), nil
	}
	return ResolveHost(root, name)
}

// Open opens name inside root (see HostPath) for reading, if it is a
// regular file, without blocking (saferead.Open): a process's root may
// hold a FIFO or a device under any name.
func Open(root, name string) (*os.File, error) {
	p, err := HostPath(root, name)
	if err != nil {
		return nil, err
	}
	return saferead.Open(p)
}

// Stat returns the file information of name inside root (see HostPath),
// its links followed inside root.
func Stat(root, name string) (fs.FileInfo, error) {
	p, err := HostPath(root, name)
	if err != nil {
		return nil, err
	}
	return os.Stat(p)
}

// Join returns name inside root lexically: ".." cannot climb above root,
// but a symbolic link in the result is followed by whoever opens it. It
// is for trees pyattach creates itself (its source cache), which hold no
// links; a process's root is read through HostPath, Open or Stat.
func Join(root, name string) string {
	return filepath.Join(root, filepath.Clean("/"+name))
}

// Strip is the inverse of Join for display: host path p as the process
// whose root is the host directory root sees it ("/" + p relative to
// root), or p itself when root is "" or p is not under root.
func Strip(root, p string) string {
	if root == "" {
		return p
	}
	rel, err := filepath.Rel(root, p)
	switch {
	case err != nil || rel == ".." || strings.HasPrefix(rel, "../"):
		return p
	case rel == ".":
		return "/"
	}
	return "/" + rel
}

// Under reports whether the clean path p is dir or below it, lexically
// (a root's host path, a debug directory under it).
func Under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
