package pyext

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/detect/rootfs"
)

// place is where target paths are looked up: the host (root "") or a
// container's root directory on the host.
type place struct {
	root string
}

// hostPath returns the host path of the target path p. In a root, every
// symbolic link on the way is resolved as if the root were "/", so the
// result never leads out of it; on the host, p is returned cleaned.
func (pl place) hostPath(p string) (string, error) {
	return rootfs.HostPath(pl.root, p)
}

// resolveIn resolves p inside root as the process whose root it is
// would (see package rootfs).
func resolveIn(root, p string) (string, error) {
	return rootfs.ResolveHost(root, p)
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
