package pyext

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// place is where target paths are looked up: the host (root "") or a
// container's root directory on the host.
type place struct {
	root string
}

// maxLinks bounds symlink resolution inside a root, like the kernel's 40.
const maxLinks = 40

var errLinkLoop = errors.New("too many levels of symbolic links")

// hostPath returns the host path of the target path p. In a root, every
// symbolic link on the way is resolved as if the root were "/", so the
// result never leads out of it; on the host, p is returned cleaned.
func (pl place) hostPath(p string) (string, error) {
	if pl.root == "" {
		return filepath.Clean(p), nil
	}
	return resolveIn(pl.root, p)
}

// resolveIn resolves the target path p inside root one component at a
// time: ".." stops at root, an absolute link target restarts at root.
// The last component need not exist; an earlier missing one is an error.
func resolveIn(root, p string) (string, error) {
	root = filepath.Clean(root)
	var done []string
	todo := strings.Split(p, "/")
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
		cur := filepath.Join(root, filepath.Join(done...), c)
		st, err := os.Lstat(cur)
		if err != nil {
			if len(todo) == 0 && errors.Is(err, fs.ErrNotExist) {
				done = append(done, c)
				break
			}
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("resolve %s under %s: %w", p, root, errLinkLoop)
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			done = done[:0]
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return filepath.Join(root, filepath.Join(done...)), nil
}

// realPath returns the target path that p resolves to in pl (symbolic
// links followed), or p itself when it cannot be resolved.
func (pl place) realPath(p string) string {
	if pl.root == "" {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	h, err := resolveIn(pl.root, p)
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(filepath.Clean(pl.root), h)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return "/" + filepath.ToSlash(rel)
}

// glob expands pattern, a target path whose last component only may
// hold wildcards (the directory is literal), in pl and returns the
// matching target paths, sorted.
func (pl place) glob(pattern string) []string {
	dir, pat := path.Split(pattern)
	hdir, err := pl.hostPath(dir)
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir(hdir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if ok, _ := path.Match(pat, e.Name()); ok {
			out = append(out, path.Join(dir, e.Name()))
		}
	}
	return out
}
