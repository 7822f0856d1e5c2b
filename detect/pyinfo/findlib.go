package pyinfo

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/detect/rootfs"
)

// DefaultLibDirs are the directories the dynamic loader searches after
// RUNPATH and LD_LIBRARY_PATH on x86-64 Linux (Debian's multiarch
// directories first, then the RPM-style and generic ones).
var DefaultLibDirs = []string{
	"/lib/x86_64-linux-gnu",
	"/usr/lib/x86_64-linux-gnu",
	"/lib64",
	"/usr/lib64",
	"/lib",
	"/usr/lib",
	"/usr/local/lib",
}

// FindLibrary finds the file for the DT_NEEDED entry needed, searching
// as the dynamic loader does: each RUNPATH entry in runpath (with $ORIGIN
// and ${ORIGIN} replaced by origin, the directory of the real binary),
// then extraDirs (the caller passes LD_LIBRARY_PATH's entries), then
// DefaultLibDirs. The ld.so cache is not read.
//
// All directories are paths in the target's file system, found under
// root: "/" for the host, or a container's root such as
// /proc/PID/root. Under a root other than "/", ".." and symlinks
// (absolute ones included) are resolved inside root, so that no path
// leads out of it, and the returned path is the resolved host path.
// Entries that are empty, relative or hold other loader tokens ($LIB,
// $PLATFORM) are skipped.
//
// When nothing is found the error wraps fs.ErrNotExist.
func FindLibrary(needed string, runpath []string, origin string, root string, extraDirs []string) (string, error) {
	if needed == "" || strings.ContainsRune(needed, 0) {
		return "", fmt.Errorf("find library %q: invalid name: %w", needed, fs.ErrNotExist)
	}
	if root == "" {
		root = "/"
	}
	if strings.Contains(needed, "/") {
		// The loader takes a name with a slash as a path.
		if !path.IsAbs(needed) {
			return "", fmt.Errorf("find library %q: relative path: %w", needed, fs.ErrNotExist)
		}
		if p, ok := regularIn(root, needed); ok {
			return p, nil
		}
		return "", fmt.Errorf("find library %s under %s: %w", needed, root, fs.ErrNotExist)
	}
	var dirs []string
	for _, d := range runpath {
		d = strings.ReplaceAll(d, "${ORIGIN}", origin)
		d = strings.ReplaceAll(d, "$ORIGIN", origin)
		dirs = append(dirs, d)
	}
	dirs = append(dirs, extraDirs...)
	dirs = append(dirs, DefaultLibDirs...)
	seen := make(map[string]bool)
	for _, d := range dirs {
		if d == "" || !path.IsAbs(d) || strings.ContainsAny(d, "$\x00") {
			continue
		}
		d = path.Clean(d)
		if seen[d] {
			continue
		}
		seen[d] = true
		if p, ok := regularIn(root, path.Join(d, needed)); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("find library %s under %s: %w", needed, root, fs.ErrNotExist)
}

// regularIn reports whether the target path p names a regular file under
// root, and returns its host path.
func regularIn(root, p string) (string, bool) {
	var host string
	if filepath.Clean(root) == "/" {
		host = path.Clean("/" + p)
	} else {
		var err error
		host, err = rootfs.ResolveHost(root, p)
		if err != nil {
			return "", false
		}
	}
	st, err := os.Stat(host)
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return host, true
}
