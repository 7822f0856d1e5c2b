package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/pyinfo"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/venv"
)

// resolvePID resolves a running process.
func resolvePID(ctx context.Context, pid int, opts Options) (*Result, error) {
	pr := proc.New(opts.ProcRoot)
	p, err := pr.Process(pid)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Target:     fmt.Sprint(pid),
		TargetKind: KindPID,
		PID:        pid,
		ExeDeleted: p.ExeDeleted,
		Container:  p.Container,
		UID:        &p.UID,
	}
	maps, err := pr.Maps(pid)
	if err != nil {
		return nil, err
	}
	mods := proc.Modules(maps)

	// Paths in /proc/PID/exe and maps are relative to the reader's root
	// when the process's root is reachable from it (a chroot): strip the
	// process's root so that every path is as the process sees it.
	procRoot := ""
	if p.Container {
		procRoot = filepath.Join(opts.ProcRoot, fmt.Sprint(pid), "root")
		res.Root = procRoot
	}
	local := func(s string) string {
		if p.Root != "" && p.Root != "/" {
			if rel, ok := strings.CutPrefix(s, p.Root+"/"); ok {
				return "/" + rel
			}
		}
		return s
	}
	res.Exe = local(p.Exe)

	// The executable, read through /proc/PID/exe: that works for deleted
	// binaries and for binaries inside another root alike.
	exeFile, err := pr.OpenExe(pid)
	if err != nil {
		return nil, err
	}
	exeFacts, exeInfo, err := readFacts(exeFile, res.Exe)
	exeFile.Close()
	if err != nil {
		return nil, fmt.Errorf("%s (process %d): %w", res.Exe, pid, err)
	}
	res.ExeBuildID = exeInfo.BuildID

	// Module build-ids, read in parallel: each costs a few small reads.
	if !opts.NoModules {
		// Keep ELF files only: locale archives and caches are mapped too.
		for _, m := range readModules(pr, pid, maps, mods, local) {
			if !m.notELF {
				res.Modules = append(res.Modules, m.Module)
			}
		}
	}

	var libMod *proc.Module
	for i := range mods {
		if pyinfo.IsLibpython(path.Base(mods[i].Path)) {
			libMod = &mods[i]
			break
		}
	}
	if !exeFacts.HasRuntime && libMod == nil {
		return res, notPython(pr, p, !opts.NoChildren)
	}
	res.Embedded = !looksLikePython(path.Base(res.Exe))

	switch {
	case p.ExeDeleted:
		res.Interpreter = res.Exe
		res.Via = "self"
		res.ReadFrom = filepath.Join(opts.ProcRoot, fmt.Sprint(pid), "exe")
		res.BuildID = exeInfo.BuildID
		res.ELF = exeInfo
		res.Venv = Venv{Kind: string(venv.KindNone)}
		res.Warnings = append(res.Warnings, deletedWarning(res.Exe, exeInfo.BuildID, procRoot))
	case p.Container:
		// Inside another root: the process's files are read under it.
		res.Interpreter = res.Exe
		res.Via = "self"
		res.ReadFrom = filepath.Join(opts.ProcRoot, fmt.Sprint(pid), "exe")
		if host, err := inRoot(procRoot, res.Exe); err == nil {
			res.ReadFrom = host
		}
		res.BuildID = exeInfo.BuildID
		res.ELF = exeInfo
		res.Venv = Venv{Kind: string(venv.KindNone)}
		if env, err := venv.FindEnv(res.ReadFrom); err == nil && env != nil {
			res.Venv = Venv{Path: rootfs.Strip(procRoot, env.Path), Kind: string(env.Kind), Home: env.Home}
			if env.Kind == venv.KindCopies {
				res.Warnings = append(res.Warnings, "the executable is a venv copy inside the container; its interpreter is proved by its own build-id only")
			}
		}
	case res.Embedded:
		res.Interpreter = res.Exe
		res.Via = "self"
		res.BuildID = exeInfo.BuildID
		res.ELF = exeInfo
		res.Venv = Venv{Kind: string(venv.KindNone)}
		if v, ok := cmdlineVenv(p.Cmdline, procCwd(opts.ProcRoot, pid)); ok {
			res.Venv = v
		}
	default:
		vo := venv.Options{Env: opts.Env}
		if bareCopy(res.Exe) {
			vo.FindOriginal = true
			// The libpython the process loaded names the prefix to try
			// first (a copy run with LD_LIBRARY_PATH or PYTHONHOME).
			if libMod != nil {
				if bin := venv.PrefixBin(local(libMod.Path)); bin != "" {
					vo.ExtraDirs = []string{bin}
				}
			}
		}
		r, err := venv.Resolve(res.Exe, vo)
		if r != nil {
			fillVenv(res, r.Env)
		}
		if err != nil {
			return res, err
		}
		res.Interpreter = r.Interpreter
		res.Via = r.Via
		res.MatchedBy = r.MatchedBy
		res.BuildID = r.BuildID
		res.ELF = exeInfo
	}

	if exeFacts.HasRuntime {
		res.Static = true
		res.Python = pythonOf(exeFacts)
		return res, nil
	}
	lib := local(libMod.Path)
	if res.Embedded {
		res.Interpreter = lib
		res.Via = "libpython"
	}
	if libMod.Deleted {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s was deleted or replaced after the process loaded it", lib))
	}
	if err := fillLibpython(res, lib, procRoot, exeFacts); err != nil {
		if !libMod.Deleted {
			return res, err
		}
		// A deleted libpython is still readable through map_files.
		f, ferr := pr.OpenMapFile(pid, mappingOf(maps, libMod.Path))
		if ferr != nil {
			return res, err
		}
		defer f.Close()
		facts, info, ferr := readFacts(f, lib)
		if ferr != nil {
			return res, ferr
		}
		res.Libpython, res.LibpythonBuildID, res.LibpythonELF = lib, info.BuildID, info
		res.Python = pythonOf(facts)
	}
	if res.Embedded {
		res.BuildID = res.LibpythonBuildID
		res.ELF = res.LibpythonELF
	}
	return res, nil
}

func mappingOf(maps []proc.Mapping, p string) proc.Mapping {
	for _, m := range maps {
		if m.Path == p {
			return m
		}
	}
	return proc.Mapping{}
}

func deletedWarning(exe, id, root string) string {
	host, err := inRoot(root, exe)
	now := ""
	if err == nil {
		now, err = elfinfo.ReadBuildIDFile(host)
	}
	switch {
	case err == nil && now != id:
		return fmt.Sprintf("the executable was replaced after the process started: %s now has build-id %s, the running one has %s; its ELF is read through /proc", exe, now, id)
	case err == nil:
		return fmt.Sprintf("the executable was deleted and reinstalled after the process started (same build-id %s); its ELF is read through /proc", id)
	default:
		return fmt.Sprintf("the executable %s was deleted after the process started; its ELF is read through /proc", exe)
	}
}

// looksLikePython reports whether an executable's name is a Python
// interpreter's (python, python3.11, python3.11d, pypy3 is not CPython
// but is named so too).
func looksLikePython(base string) bool {
	return strings.HasPrefix(base, "python")
}

func readFacts(f fs.File, name string) (*pyinfo.Facts, *elfinfo.Info, error) {
	ra, ok := f.(io.ReaderAt)
	if !ok {
		return nil, nil, fmt.Errorf("%s: file does not support random access", name)
	}
	info, facts, err := parseFacts(ra, elfinfo.Options{Producer: true, Dynamic: true}, name)
	return facts, info, err
}

// readModules reads the build-id of every module, a few at a time.
// module is a Module with what readModules learnt about it.
type module struct {
	Module
	notELF bool
}

func readModules(pr *proc.Proc, pid int, maps []proc.Mapping, mods []proc.Module, local func(string) string) []module {
	out := make([]module, len(mods))
	workers := runtime.GOMAXPROCS(0) * 2
	if workers > len(mods) {
		workers = len(mods)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = readModule(pr, pid, maps, mods[i], local)
			}
		}()
	}
	for i := range mods {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func readModule(pr *proc.Proc, pid int, maps []proc.Mapping, m proc.Module, local func(string) string) module {
	mod := module{Module: Module{Path: local(m.Path), Deleted: m.Deleted}}
	var f fs.File
	var err error
	if m.Deleted {
		f, err = pr.OpenMapFile(pid, mappingOf(maps, m.Path))
	} else {
		f, err = pr.OpenInRoot(pid, mod.Path)
	}
	if err != nil {
		mod.Error = err.Error()
		return mod
	}
	defer f.Close()
	ra, ok := f.(io.ReaderAt)
	if !ok {
		mod.Error = "no random access"
		return mod
	}
	id, err := elfinfo.ReadBuildID(ra)
	switch {
	case errors.Is(err, elfinfo.ErrNotELF):
		mod.notELF = true
	case err != nil && !errors.Is(err, elfinfo.ErrNoBuildID):
		mod.Error = err.Error()
	}
	mod.BuildID = id
	return mod
}

// notPython builds the error for a process without Python, naming its
// descendants that are Python when children is set.
func notPython(pr *proc.Proc, p *proc.Process, children bool) error {
	e := &NotPythonError{PID: p.PID, Comm: p.Comm, Exe: p.Exe}
	if !children {
		return e
	}
	kids, _ := pr.Children(p.PID)
	for _, k := range kids {
		kp, err := pr.Process(k)
		if err != nil {
			continue
		}
		if !isPythonProcess(pr, kp) {
			continue
		}
		e.Children = append(e.Children, Child{PID: k, Comm: kp.Comm, Cmdline: strings.Join(kp.Cmdline, " ")})
	}
	return e
}

func isPythonProcess(pr *proc.Proc, p *proc.Process) bool {
	if looksLikePython(path.Base(p.Exe)) {
		return true
	}
	maps, err := pr.Maps(p.PID)
	if err != nil {
		return false
	}
	for _, m := range proc.Modules(maps) {
		if pyinfo.IsLibpython(path.Base(m.Path)) {
			return true
		}
	}
	return false
}

// venvOptions are the command-line options with which programs that
// embed Python name a virtualenv: uwsgi's -H, --home, --virtualenv and
// --venv.
var venvOptions = []string{"-H", "--home", "--virtualenv", "--venv"}

// cmdlineVenv finds the virtualenv an embedding program's command line
// names (uwsgi -H VENV, --home=VENV, -HVENV): a directory with a
// pyvenv.cfg (or a Python 2 virtualenv's orig-prefix.txt). A relative
// directory is taken from cwd, the process's working directory as a
// host path ("" when unknown: relative ones are then skipped). The last
// such option wins, as in uwsgi.
func cmdlineVenv(args []string, cwd string) (Venv, bool) {
	var found Venv
	ok := false
	for i := 1; i < len(args); i++ {
		a, dir := args[i], ""
		for _, o := range venvOptions {
			switch {
			case a == o && i+1 < len(args):
				dir = args[i+1]
			case strings.HasPrefix(a, o+"="):
				dir = a[len(o)+1:]
			case o == "-H" && strings.HasPrefix(a, "-H") && len(a) > 2:
				dir = a[2:]
			}
			if dir != "" {
				break
			}
		}
		if dir == "" {
			continue
		}
		if !filepath.IsAbs(dir) {
			if cwd == "" {
				continue
			}
			dir = filepath.Join(cwd, dir)
		}
		env, err := venv.Detect(dir)
		if env == nil || (err != nil && !errors.Is(err, venv.ErrNoPython)) || env.Kind == venv.KindConda {
			continue
		}
		found = Venv{Path: env.Path, Kind: string(env.Kind), Home: env.Home, Source: "cmdline"}
		if env.Cfg != nil {
			found.Version = env.Cfg.Version
		}
		ok = true
	}
	return found, ok
}

// procCwd is the working directory of a process of this root, "" when
// it cannot be read.
func procCwd(procRoot string, pid int) string {
	d, err := os.Readlink(filepath.Join(procRoot, fmt.Sprint(pid), "cwd"))
	if err != nil || !filepath.IsAbs(d) {
		return ""
	}
	return d
}
