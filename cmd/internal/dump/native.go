package dump

import (
	"io"
	"path"
	"strings"

	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/nativesym"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/pyinfo"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/detect/unwind"
)

// nativeTable names the target's C frames (nativesym): its mappings
// from /proc/PID/maps or the core's NT_FILE note, each module opened
// as the process maps it (live) or at the core's path on this machine,
// under an unpacked bundle's root when it is one (only if its build-id
// is the core's), and its separate debug file (the root's own first)
// found as `pyattach debuginfo` finds it, in debugDirs after gdb's
// default. nil when the mappings cannot be read.
func (t *Target) nativeTable(debugDirs []string) *nativesym.Table {
	regions, files := t.nativeModules(debugDirs)
	if files == nil {
		return nil
	}
	return nativesym.New(regions, files)
}

// nativeUnwinder walks the target's C stacks (unwind) over the same
// mappings and files as nativeTable names them with: each module's
// .eh_frame, and .debug_frame from it or its separate debug file. nil
// when the mappings cannot be read. Add the vDSO (ptrace.ReadVDSO,
// AddVDSO) for a live process.
func (t *Target) nativeUnwinder(debugDirs []string) *unwind.Unwinder {
	regions, files := t.nativeModules(debugDirs)
	if files == nil {
		return nil
	}
	return unwind.New(regions, files)
}

// nativeModules are the target's mapped modules and the Files that opens
// them and their debug files (see nativeTable); nil files when the
// mappings cannot be read.
func (t *Target) nativeModules(debugDirs []string) ([]nativesym.Region, *moduleFiles) {
	loc := &debugfile.Locator{DebugDirs: append(append([]string(nil), debugfile.DefaultDebugDirs...), debugDirs...)}
	files := &moduleFiles{loc: loc}
	var regions []nativesym.Region
	if t.PID != 0 {
		files.pr = proc.New(t.procRoot)
		files.pid = t.PID
		maps, err := files.pr.Maps(t.PID)
		if err != nil {
			return nil, nil
		}
		files.all = maps
		files.maps = map[string]proc.Mapping{}
		// maps names a chrooted process's files by this machine's paths
		// (the kernel writes them relative to the reader's root): each
		// is named as the process sees it, so that its debug file is
		// looked for under the process's root, the root's own first.
		chroot := ""
		if t.Res != nil && t.Res.Container {
			files.root = t.Res.Root
			if p, err := files.pr.Process(t.PID); err == nil && p.Root != "/" {
				chroot = p.Root
			}
		}
		for _, m := range maps {
			if !m.File() {
				continue
			}
			if rel, ok := strings.CutPrefix(m.Path, chroot+"/"); ok && chroot != "" {
				m.Path = "/" + rel
			}
			if _, ok := files.maps[m.Path]; !ok {
				files.maps[m.Path] = m
			}
			regions = append(regions, nativesym.Region{Start: m.Start, End: m.End, Offset: m.Offset, Path: m.Path})
		}
	} else {
		// An unpacked bundle holds the core's files under its root, at
		// the paths the core names.
		if t.Res != nil && t.Res.Container {
			files.root = t.Res.Root
		}
		files.core = map[string]core.File{}
		for _, f := range t.Info.Files {
			files.core[f.Path] = f
		}
		for _, f := range t.Info.Mappings {
			if f.Deleted {
				continue
			}
			regions = append(regions, nativesym.Region{Start: f.Start, End: f.End, Offset: f.Offset, Path: f.Path})
		}
	}
	return regions, files
}

// evalLoop is the function each group of Python frames runs in.
const evalLoop = "_PyEval_EvalFrameDefault"

// interpreterFile reports a module that may hold the eval loop: an
// interpreter (python3.14, python3.14d) or a libpython.
func interpreterFile(p string) bool {
	b := path.Base(p)
	return strings.HasPrefix(b, "python") || pyinfo.IsLibpython(b)
}

// moduleFiles opens the modules of a live process (pr, pid, maps, root)
// or of a core (core).
type moduleFiles struct {
	loc  *debugfile.Locator
	pr   *proc.Proc
	pid  int
	maps map[string]proc.Mapping
	// all are a live process's mappings, as /proc/PID/maps lists them.
	all  []proc.Mapping
	root string
	core map[string]core.File
}

type readerFile interface {
	io.ReaderAt
	io.Closer
}

func (m *moduleFiles) Open(r nativesym.Region) (nativesym.File, error) {
	if m.core != nil {
		cf := m.core[r.Path]
		name := r.Path
		if m.root != "" {
			h, err := rootfs.HostPath(m.root, r.Path)
			if err != nil {
				return nil, err
			}
			name = h
		}
		f, err := saferead.Open(name)
		if err != nil {
			return nil, err
		}
		if cf.BuildID != "" {
			if id, err := elfinfo.ReadBuildID(f); err != nil || id != cf.BuildID {
				f.Close()
				return nil, nil
			}
		}
		return f, nil
	}
	f, err := m.pr.OpenMapFile(m.pid, m.maps[r.Path])
	if err != nil {
		if f, err = m.pr.OpenInRoot(m.pid, r.Path); err != nil {
			return nil, err
		}
	}
	rf, ok := f.(readerFile)
	if !ok {
		f.Close()
		return nil, nil
	}
	return rf, nil
}

func (m *moduleFiles) OpenDebug(r nativesym.Region) (nativesym.File, error) {
	mod := debugfile.Module{Path: r.Path, Root: m.root}
	found, err := m.loc.Locate(mod)
	if err != nil || found.Path == "" || found.Via == debugfile.ViaEmbedded || found.Via == debugfile.ViaNone {
		return nil, nil
	}
	f, err := saferead.Open(found.Path)
	if err != nil {
		return nil, nil
	}
	return f, nil
}

// nameNative gives each C frame of wd the function, file and line tab
// finds for it; where tab finds no function, gdb's name stays.
func nameNative(wd *Walker, tab *nativesym.Table) {
	var pcs []uint64
	for _, th := range wd.Threads {
		if th.Native != nil {
			for _, n := range *th.Native {
				pc := n.BlockPC
				if pc == 0 {
					pc = n.PC
				}
				pcs = append(pcs, pc)
			}
		}
	}
	frames := tab.LookupAll(pcs)
	k := 0
	for i := range wd.Threads {
		th := &wd.Threads[i]
		if th.Native == nil {
			continue
		}
		for j := range *th.Native {
			n := &(*th.Native)[j]
			f := frames[k]
			k++
			if f.Function != "" {
				s := f.Function
				n.Function = &s
			}
			if f.File != "" {
				file, line := f.File, f.Line
				n.File = &file
				n.Line = nil
				if line > 0 {
					n.Line = &line
				}
			}
		}
	}
}
