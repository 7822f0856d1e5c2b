package debugfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/saferead"
)

// ViaContent is a debug twin of a module without a build-id: an
// unstripped build under a debug directory whose loadable segments are
// the module's (elfinfo.LoadDigest), as python-build-standalone's
// *-full.tar.zst archive holds for the stripped interpreter uv installs.
const ViaContent Via = "content"

// Bounds of the walk of the debug directories for twins.
const (
	twinMaxDepth   = 10
	twinMaxEntries = 100000
)

// twinIndex groups the ELF files under the debug directories by the
// layout of their loadable segments (elfinfo.LoadLayout).
type twinIndex struct {
	once   sync.Once
	layout map[string][]string
}

// twinDirs are the debug directories walked for twins: the Locator's,
// without the distribution's /usr/lib/debug (a build-id tree, and too
// big to walk), each once.
func (l *Locator) twinDirs() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range l.DebugDirs {
		if seen[d] || filepath.Clean(d) == "/usr/lib/debug" {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

func (l *Locator) twins() map[string][]string {
	l.twinMu.Lock()
	if l.twinIdx == nil {
		l.twinIdx = &twinIndex{}
	}
	idx := l.twinIdx
	l.twinMu.Unlock()
	idx.once.Do(func() {
		idx.layout = map[string][]string{}
		n := 0
		for _, dir := range l.twinDirs() {
			base := strings.Count(filepath.Clean(dir), string(filepath.Separator))
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if n++; n > twinMaxEntries {
					return filepath.SkipAll
				}
				if d.IsDir() {
					if p == buildid.Tree(filepath.Dir(p)) || strings.Count(p, string(filepath.Separator))-base >= twinMaxDepth {
						return filepath.SkipDir
					}
					return nil
				}
				if !d.Type().IsRegular() {
					return nil
				}
				if key := layoutOf(p); key != "" {
					idx.layout[key] = append(idx.layout[key], p)
				}
				return nil
			})
		}
	})
	return idx.layout
}

// layoutOf returns the loadable-segment layout of the ELF file p; "" for
// a file that is not ELF or cannot be read.
func layoutOf(p string) string {
	f, err := saferead.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	ef, err := elfinfo.NewFile(f)
	if err != nil {
		return ""
	}
	return elfinfo.LoadLayout(ef)
}

// locateTwin finds the debug twin of a module without a build-id: a file
// under the debug directories with the module's loadable segments and
// debug information of its own. Files with the same layout whose
// segments differ are listed as rejected.
func (l *Locator) locateTwin(m Module, f *Found) (string, facts, bool) {
	exe, err := m.host(m.Path)
	if err != nil {
		return "", facts{}, false
	}
	fh, err := saferead.Open(exe)
	if err != nil {
		return "", facts{}, false
	}
	ef, err := elfinfo.NewFile(fh)
	var key string
	if err == nil {
		key = elfinfo.LoadLayout(ef)
	}
	fh.Close()
	if key == "" {
		return "", facts{}, false
	}
	cands := l.twins()[key]
	if len(cands) == 0 {
		return "", facts{}, false
	}
	want, err := elfinfo.ContentOf(exe)
	if err != nil {
		return "", facts{}, false
	}
	for _, p := range cands {
		if same, err := sameFile(p, exe); err == nil && same {
			continue
		}
		got, err := elfinfo.ContentOf(p)
		if err != nil {
			f.Rejected = append(f.Rejected, Rejection{Path: p, Reason: err.Error()})
			continue
		}
		if got.Digest != want.Digest {
			f.Rejected = append(f.Rejected, Rejection{Path: p, Reason: "its loadable segments differ"})
			continue
		}
		info, err := elfinfo.Open(p, elfinfo.Options{Producer: true})
		if err != nil {
			f.Rejected = append(f.Rejected, Rejection{Path: p, Reason: err.Error()})
			continue
		}
		if !info.DWARF {
			f.Rejected = append(f.Rejected, Rejection{Path: p, Reason: "the same loadable segments, but no DWARF"})
			continue
		}
		return p, facts{info, nil}, true
	}
	return "", facts{}, false
}

func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}
