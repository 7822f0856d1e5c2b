package bundle

import (
	"path"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/dump"
	"github.com/pyattach/pyattach/cmd/internal/sources"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/srcmap"
)

// FrameFiles are the files of every thread's Python frames (and of its
// exception's traceback) in a dump of the core: the Python sources a
// bundle holds.
func FrameFiles(o *dump.Output) []string {
	seen := map[string]bool{}
	var files []string
	for _, th := range o.Threads {
		for _, f := range th.Frames {
			if !seen[f.File] {
				seen[f.File] = true
				files = append(files, f.File)
			}
		}
		if th.Exception != nil {
			for _, l := range th.Exception.Frames {
				if !seen[l.File] {
					seen[l.File] = true
					files = append(files, l.File)
				}
			}
		}
	}
	return files
}

// NativeFrameFiles are the source files a dump --native of the core
// names for its threads' native frames, as their line tables name them.
func NativeFrameFiles(o *dump.Output) []string {
	seen := map[string]bool{}
	var files []string
	for _, th := range o.Threads {
		if th.Native == nil {
			continue
		}
		for _, f := range *th.Native {
			if f.File != nil && *f.File != "" && !seen[*f.File] {
				seen[*f.File] = true
				files = append(files, *f.File)
			}
		}
	}
	return files
}

// ChooseNativeSources chooses the C source files of native frames names
// (NativeFrameFiles) a bundle holds: completed to the DWARF's absolute
// paths from the file tables m read, and mapped onto the --source trees
// roots by m's rules. Only files under a --source tree are taken (Local):
// a debuggee's DWARF may name any file of this machine; the others say
// why not (Reason).
func ChooseNativeSources(names []string, m *sources.Result, roots []srcmap.Root) []NativeSource {
	var out []NativeSource
	for _, n := range names {
		s := NativeSource{Path: dwarfPath(n, m.Files)}
		switch {
		case s.Path == "":
			s.Path, s.Reason = n, "no file table of the interpreter's modules names it with its directory"
		case len(roots) == 0:
			s.Reason = "no source tree given: pyattach --source [NAME=]DIR bundle --native-sources ..."
		default:
			if s.Local = mappedSource(s.Path, m.Rules, roots); s.Local == "" {
				s.Reason = "under no --source tree"
			}
		}
		out = append(out, s)
	}
	return out
}

// dwarfPath is the absolute path of a frame's file name n (as a line
// table names it, often relative to its unit's directory) among files,
// the absolute paths the modules' DWARF names: n itself, or the first
// that ends with /n; "" when none does.
func dwarfPath(n string, files []string) string {
	if path.IsAbs(n) {
		return n
	}
	for _, f := range files {
		if path.IsAbs(f) && strings.HasSuffix(f, "/"+n) {
			return f
		}
	}
	return ""
}

// mappedSource is where p is under the --source trees: through the
// rule with the longest prefix of p, or p itself when it is under one
// of the trees; "" when it is under none.
func mappedSource(p string, rules []sources.Rule, roots []srcmap.Root) string {
	local, best := p, -1
	for _, r := range rules {
		if (p == r.From || strings.HasPrefix(p, r.From+"/")) && len(r.From) > best {
			local, best = r.To+p[len(r.From):], len(r.From)
		}
	}
	local = path.Clean(local)
	for _, rt := range roots {
		if rootfs.Under(local, rt.Dir) && sources.RegularFile(local) {
			return local
		}
	}
	return ""
}
