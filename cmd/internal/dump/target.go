package dump

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/pyinfo"
	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Target is what dump works on: a live process or a core.
type Target struct {
	PID  int
	Core string
	Info *core.Info // the core's notes
	Res  *target.Result
	// procRoot is the proc file system.
	procRoot string
	// bundle is the bundle Core was unpacked from, as the user named it.
	bundle string
}

// shown is the core as the user named it: the bundle, if any.
func (t *Target) shown() string {
	if t.bundle != "" {
		return t.bundle
	}
	return t.Core
}

// name leads the target's errors.
func (t *Target) name() string {
	if t.PID != 0 {
		return "dump " + strconv.Itoa(t.PID)
	}
	return "dump " + t.shown()
}

// fail is an error of kind k about t.
func (t *Target) fail(k Kind, err error) *Error {
	return &Error{Kind: k, Err: err, PID: t.PID, Core: t.Core}
}

// Resolve finds the interpreter of a PID or of a core's executable.
// A target that is no Python process but has Python children is
// returned as target.Resolve's *target.NotPythonError, wrapped.
func Resolve(ctx context.Context, arg string, svc *Services) (*Target, error) {
	t := &Target{procRoot: svc.ProcRoot, bundle: svc.Bundle}
	opts := target.Options{ProcRoot: svc.ProcRoot, Env: svc.Env, Cwd: svc.Cwd, NoModules: true, GOOS: svc.GOOS, NoChildren: svc.Process != nil}
	tgt := arg
	if target.IsPID(arg) {
		pid, err := target.ParsePID(arg)
		if err != nil {
			return nil, &Error{Kind: KindTarget, Err: fmt.Errorf("dump: %w", err)}
		}
		t.PID = pid
	} else {
		if _, err := os.Stat(arg); err != nil {
			return nil, &Error{Kind: KindTarget, Err: fmt.Errorf("dump: %w", err)}
		}
		info, err := core.OpenIn(arg, svc.CoreRoot)
		if err != nil {
			if errors.Is(err, core.ErrNotCore) || errors.Is(err, elfinfo.ErrNotELF) || errors.Is(err, elfinfo.ErrCorrupt) {
				return nil, &Error{Kind: KindNotCore, Err: fmt.Errorf("dump %s: %w", arg, err), Core: arg}
			}
			return nil, fmt.Errorf("dump: %w", err)
		}
		t.Core, t.Info, tgt = arg, info, info.Exe
	}
	var res *target.Result
	var err error
	if t.Core != "" {
		res, err = target.ResolveInRoot(ctx, tgt, svc.CoreRoot, opts)
		if res != nil {
			res.Bundle = svc.Bundle
		}
	} else {
		res, err = target.Resolve(ctx, tgt, opts)
	}
	if err != nil {
		var np *target.NotPythonError
		if errors.As(err, &np) && len(np.Children) > 0 {
			return nil, fmt.Errorf("dump: %w", err)
		}
		if errors.Is(err, target.ErrNotPython) {
			return nil, t.fail(KindNotPython, fmt.Errorf("dump %s: %w", arg, err))
		}
		return nil, fmt.Errorf("dump %s: %w", arg, err)
	}
	if res.Python.Version == "" {
		return nil, t.fail(KindNoVersion, fmt.Errorf("dump %s: the Python version of %s is not known", arg, res.Interpreter))
	}
	t.Res = res
	return t, nil
}

// RuntimeAddress is _PyRuntime's address in the process or core: the
// symbol's value in the module that defines it (libpython, else the
// executable) plus that module's load bias, from /proc/PID/maps or the
// core's NT_FILE mappings. No debug information is read.
func (t *Target) RuntimeAddress() (uint64, error) {
	var (
		elfFile   io.ReaderAt
		closer    io.Closer
		start     uint64
		offset    uint64
		module    string
		wantBuild string
	)
	if t.PID != 0 {
		pr := proc.New(t.procRoot)
		maps, err := pr.Maps(t.PID)
		if err != nil {
			return 0, fmt.Errorf("dump %d: %w", t.PID, err)
		}
		var m *proc.Mapping
		for i := range maps {
			p := maps[i].Path
			if t.Res.Libpython != "" && pyinfo.IsLibpython(path.Base(p)) ||
				t.Res.Libpython == "" && (p == t.Res.Exe || strings.HasSuffix(p, t.Res.Exe) && t.Res.Container) {
				m = &maps[i]
				break
			}
		}
		if m == nil {
			return 0, fmt.Errorf("dump %d: the module defining _PyRuntime is not mapped", t.PID)
		}
		start, offset, module = m.Start, m.Offset, m.Path
		var f fs.File
		switch {
		case t.Res.Libpython == "":
			f, err = pr.OpenExe(t.PID)
		case m.Deleted:
			f, err = pr.OpenMapFile(t.PID, *m)
		default:
			f, err = pr.OpenInRoot(t.PID, t.Res.Libpython)
		}
		if err != nil {
			return 0, fmt.Errorf("dump %d: %w", t.PID, err)
		}
		ra, ok := f.(io.ReaderAt)
		if !ok {
			f.Close()
			return 0, fmt.Errorf("dump %d: %s cannot be read at offsets", t.PID, module)
		}
		elfFile, closer = ra, f
	} else {
		var file *core.File
		for i := range t.Info.Files {
			p := t.Info.Files[i].Path
			if t.Res.Libpython != "" && pyinfo.IsLibpython(path.Base(p)) || t.Res.Libpython == "" && p == t.Info.Exe {
				file = &t.Info.Files[i]
				break
			}
		}
		if file == nil {
			return 0, fmt.Errorf("dump %s: the module defining _PyRuntime is not among the core's mappings", t.Core)
		}
		start, offset, module, wantBuild = file.Start, file.Offset, file.Path, file.BuildID
		root := ""
		if t.Res.Container {
			root = t.Res.Root
		}
		f, err := rootfs.Open(root, file.Path)
		if err != nil {
			e := t.fail(KindCoreFile, fmt.Errorf("dump %s: %w", t.Core, err))
			e.Path = file.Path
			return 0, e
		}
		elfFile, closer = f, f
	}
	defer closer.Close()
	if wantBuild != "" {
		if id, err := elfinfo.ReadBuildID(elfFile); err == nil && id != wantBuild {
			return 0, t.fail(KindCoreChanged, fmt.Errorf("dump %s: %s has build-id %s, the core's has %s", t.Core, module, id, wantBuild))
		}
	}
	rt, err := pyinfo.ReadRuntime(elfFile)
	if err != nil {
		if errors.Is(err, pyinfo.ErrNoRuntime) {
			return 0, t.fail(KindNoRuntime, fmt.Errorf("%s: %s has no _PyRuntime symbol (Python %s)", t.name(), module, t.Res.Python.Version))
		}
		return 0, fmt.Errorf("%s: %s: %w", t.name(), module, err)
	}
	addr, ok := rt.Address(start, offset)
	if !ok {
		return 0, fmt.Errorf("%s: the mapping of %s at %#x (offset %#x) is not one of its segments", t.name(), module, start, offset)
	}
	return addr, nil
}

// TracerOf names the process tracing pid ("1234 (strace)"), or "".
func TracerOf(procRoot string, pid int) string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "TracerPid:"); ok {
			v = strings.TrimSpace(v)
			if v == "" || v == "0" {
				return ""
			}
			comm, _ := os.ReadFile(filepath.Join(procRoot, v, "comm"))
			if c := strings.TrimSpace(string(comm)); c != "" {
				return v + " (" + c + ")"
			}
			return v
		}
	}
	return ""
}

// AsyncioAddress is where the process or core keeps
// _Py_AsyncioModuleDebugOffsets (Python 3.14+): the .AsyncioDebug
// section of the _asyncio extension module, or of the module defining
// _PyRuntime when _asyncio is built in, placed by that module's lowest
// mapping. 0 before 3.14, where the walker finds the tasks from
// asyncio's own sets instead (pyattach_walk_tasks_legacy), and when no
// mapped module has it (asyncio not imported): the walker then says why
// it lists no task.
func (t *Target) AsyncioAddress() uint64 {
	v, err := pyversion.Parse(t.Res.Python.Version)
	if err != nil || v.Major() < 3 || v.Major() == 3 && v.Minor() < 14 {
		return 0
	}
	type cand struct {
		path, buildID string
		start, offset uint64
		open          func() (io.ReaderAt, io.Closer, error)
	}
	var cands []cand
	seen := map[string]bool{}
	if t.PID != 0 {
		pr := proc.New(t.procRoot)
		maps, err := pr.Maps(t.PID)
		if err != nil {
			return 0
		}
		for i := range maps {
			m := maps[i]
			if m.Path == "" || seen[m.Path] || !t.asyncioCandidate(m.Path) {
				continue
			}
			seen[m.Path] = true
			cands = append(cands, cand{path: m.Path, start: m.Start, offset: m.Offset, open: func() (io.ReaderAt, io.Closer, error) {
				// The file mapped itself (map_files: root only), else
				// the path in the process's root; a chroot's maps name
				// the host's path, which only the first reaches.
				f, err := pr.OpenMapFile(t.PID, m)
				if err != nil && !m.Deleted {
					f, err = pr.OpenInRoot(t.PID, m.Path)
				}
				if err != nil {
					return nil, nil, err
				}
				ra, ok := f.(io.ReaderAt)
				if !ok {
					f.Close()
					return nil, nil, fmt.Errorf("%s cannot be read at offsets", m.Path)
				}
				return ra, f, nil
			}})
		}
	} else {
		for i := range t.Info.Files {
			file := t.Info.Files[i]
			if seen[file.Path] || !t.asyncioCandidate(file.Path) {
				continue
			}
			seen[file.Path] = true
			cands = append(cands, cand{path: file.Path, buildID: file.BuildID, start: file.Start, offset: file.Offset, open: func() (io.ReaderAt, io.Closer, error) {
				f, err := saferead.Open(file.Path)
				if err != nil {
					return nil, nil, err
				}
				return f, f, nil
			}})
		}
	}
	for _, c := range cands {
		ra, closer, err := c.open()
		if err != nil {
			continue
		}
		addr, ok := asyncioIn(ra, c.buildID, c.start, c.offset)
		closer.Close()
		if ok {
			return addr
		}
	}
	return 0
}

// asyncioCandidate reports whether the module at p may hold the
// .AsyncioDebug section: the _asyncio extension module, the executable,
// libpython.
func (t *Target) asyncioCandidate(p string) bool {
	base := path.Base(p)
	return pyinfo.IsAsyncioModule(base) || pyinfo.IsLibpython(base) ||
		t.PID != 0 && (p == t.Res.Exe || strings.HasSuffix(p, t.Res.Exe) && t.Res.Container) ||
		t.PID == 0 && p == t.Info.Exe
}

// asyncioIn is the run-time address of the .AsyncioDebug section of the
// ELF file ra mapped at start from file offset off (its build-id, when
// known, must be wantBuild).
func asyncioIn(ra io.ReaderAt, wantBuild string, start, off uint64) (uint64, bool) {
	if wantBuild != "" {
		if id, err := elfinfo.ReadBuildID(ra); err != nil || id != wantBuild {
			return 0, false
		}
	}
	s, err := pyinfo.ReadSection(ra, pyinfo.AsyncioDebugSection)
	if err != nil {
		return 0, false
	}
	return s.Address(start, off)
}
