package srcmap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Root is a local source tree: --source NAME=DIR, or --source DIR with
// Name "".
type Root struct {
	Name string
	Dir  string
}

// Index finds files under the source roots by path suffix.
type Index interface {
	// Lookup returns the files (absolute, under a root) whose path
	// relative to their root is suffix or ends with "/"+suffix.
	Lookup(suffix string) []string
}

// DefaultLimit is the number of files IndexRoots indexes per root when
// given a limit <= 0.
const DefaultLimit = 200000

// FileIndex is the Index IndexRoots builds.
type FileIndex struct {
	dirs      []string
	byBase    map[string][]entry
	n         int
	truncated []string
}

type entry struct {
	root int
	rel  string
}

// skipDir reports whether a directory is never searched for sources:
// version control, caches and virtual environments. Build directories
// are searched: a local build's _deps/<name>-src holds exactly the
// sources a FetchContent build compiled.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "__pycache__"
}

// skipFile reports whether a file is a build product, never a source.
func skipFile(name string) bool {
	switch path.Ext(name) {
	case ".o", ".obj", ".a", ".so", ".lo", ".la", ".pyc", ".pyo", ".dylib", ".dll", ".exe",
		".gcda", ".gcno", ".whl", ".zip", ".gz", ".xz", ".bz2", ".zst", ".tar":
		return true
	}
	return false
}

// IndexRoots walks each root's directory and indexes its files by name,
// at most limit files per root (DefaultLimit when limit <= 0), in the
// walk's lexical order; Truncated names the roots that had more. Hidden
// directories, node_modules and __pycache__ are skipped, and so are
// object files and archives. A root that cannot be read is an error;
// unreadable directories below it are skipped.
func IndexRoots(roots []Root, limit int) (*FileIndex, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	x := &FileIndex{byBase: map[string][]entry{}}
	for i, r := range roots {
		dir, err := absDir(r.Dir)
		if err != nil {
			return nil, fmt.Errorf("source root %s: %w", r.Dir, err)
		}
		x.dirs = append(x.dirs, dir)
		// Walk the real directory when the root is a symbolic link, but
		// name files under the root as given.
		walk, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil, fmt.Errorf("source root %s: %w", r.Dir, err)
		}
		if st, err := os.Stat(walk); err != nil {
			return nil, fmt.Errorf("source root %s: %w", r.Dir, err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("source root %s: not a directory", r.Dir)
		}
		count := 0
		err = filepath.WalkDir(walk, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == walk {
					return err
				}
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != walk && skipDir(d.Name()) {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			if skipFile(d.Name()) {
				return nil
			}
			if count == limit {
				x.truncated = append(x.truncated, dir)
				return fs.SkipAll
			}
			rel, err := filepath.Rel(walk, p)
			if err != nil {
				return nil
			}
			rel = filepath.ToSlash(rel)
			x.byBase[d.Name()] = append(x.byBase[d.Name()], entry{root: i, rel: rel})
			count++
			x.n++
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("source root %s: %w", r.Dir, err)
		}
	}
	return x, nil
}

// absDir cleans a root directory and makes it absolute.
func absDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("empty directory name")
	}
	return filepath.Abs(dir)
}

// Len is the number of files indexed.
func (x *FileIndex) Len() int { return x.n }

// Truncated lists the roots (absolute) that held more files than the
// limit; their remaining files are not indexed.
func (x *FileIndex) Truncated() []string { return append([]string(nil), x.truncated...) }

// Lookup implements Index. The result is sorted and unique.
func (x *FileIndex) Lookup(suffix string) []string {
	if x == nil || suffix == "" {
		return nil
	}
	var out []string
	for _, e := range x.byBase[path.Base(suffix)] {
		if e.rel == suffix || strings.HasSuffix(e.rel, "/"+suffix) {
			out = append(out, joinPath(x.dirs[e.root], e.rel))
		}
	}
	sort.Strings(out)
	return uniq(out)
}

// joinPath appends rel to dir without cleaning it.
func joinPath(dir, rel string) string {
	switch {
	case rel == "":
		return dir
	case strings.HasSuffix(dir, "/"):
		return dir + rel
	}
	return dir + "/" + rel
}

func uniq(s []string) []string {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}
