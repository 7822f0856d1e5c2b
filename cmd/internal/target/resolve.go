package target

import (
	"bytes"
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

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/pyinfo"
	"github.com/pyattach/pyattach/detect/rootfs"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv"
	"github.com/pyattach/pyattach/venv/environ"
)

// Options are the roots and environment resolution works in. Every one
// of them can be faked by tests.
type Options struct {
	// ProcRoot is the proc file system, "/proc" unless testing.
	ProcRoot string
	// Env is the environment used for PATH, HOME, PYENV_ROOT and the
	// like (os.Environ() in production).
	Env environ.Env
	// Cwd is the directory pyenv's .python-version lookup starts from.
	Cwd string
	// NoModules skips reading the build-ids of a process's modules.
	NoModules bool
	// NoChildren leaves NotPythonError.Children empty: a process that
	// is not Python is not followed by a look at all of /proc for its
	// Python descendants (dump --subprocesses lists them itself).
	NoChildren bool
	// GOOS is the system whose rules apply ("" for the running one): a
	// PID needs Linux's /proc (proc.CheckPlatform). Tests set "darwin".
	GOOS string
}

// ErrNotPython means the target holds no CPython runtime.
var ErrNotPython = errors.New("not a Python interpreter")

// ErrNotExecutable means a file target is neither ELF nor a script.
var ErrNotExecutable = errors.New("not an executable, a script or a virtualenv")

// NotPythonError is returned for a process that is not Python. It names
// the process and its descendants that are.
type NotPythonError struct {
	PID      int
	Comm     string
	Exe      string
	Children []Child
}

// Child is a descendant process that runs Python.
type Child struct {
	PID     int    `json:"pid"`
	Comm    string `json:"comm"`
	Cmdline string `json:"cmdline"`
}

func (e *NotPythonError) Error() string {
	return fmt.Sprintf("process %d (%s, %s) is not a Python process: no CPython runtime in its executable and no libpython mapped", e.PID, e.Comm, e.Exe)
}

func (e *NotPythonError) Unwrap() error { return ErrNotPython }

// Resolve resolves a target: a PID (all digits) or a path.
func Resolve(ctx context.Context, tgt string, opts Options) (*Result, error) {
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if IsPID(tgt) {
		pid, err := ParsePID(tgt)
		if err != nil {
			return nil, err
		}
		if err := proc.CheckPlatform(opts.GOOS, pid); err != nil {
			return nil, err
		}
		return resolvePID(ctx, pid, opts)
	}
	return resolvePath(ctx, tgt, opts)
}

// IsPID reports a target of decimal digits only: a process id.
func IsPID(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ParsePID returns the process id of a target IsPID accepts, or an
// error when it is 0 or too large.
func ParsePID(s string) (int, error) {
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%q is not a valid process id", s)
	}
	return pid, nil
}

// resolvePath handles a file or directory target.
func resolvePath(ctx context.Context, p string, opts Options) (*Result, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, classifyPathErr(err)
	}
	if st.IsDir() {
		env, err := venv.Detect(abs)
		if err != nil {
			return nil, err
		}
		res := &Result{Target: p, TargetKind: KindVenv}
		if err := resolveExe(ctx, res, env.Python, opts); err != nil {
			return res, err
		}
		return res, nil
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular{&saferead.NotRegularError{Path: abs, Mode: st.Mode()}}
	}
	head, err := readHead(abs, 512)
	if err != nil {
		return nil, err
	}
	res := &Result{Target: p, TargetKind: KindExecutable}
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		err = resolveExe(ctx, res, abs, opts)
	case venv.IsPyenvShim(bytes.NewReader(head)):
		err = resolveShim(ctx, res, abs, opts)
	case bytes.HasPrefix(head, []byte("#!")):
		err = resolveScript(ctx, res, abs, head, opts)
	default:
		return nil, fmt.Errorf("%s: %w (it does not start with the ELF magic or #!)", abs, ErrNotExecutable)
	}
	return res, err
}

// notRegular is a target that is neither a directory nor a regular file
// (a FIFO, a device, a socket): it matches saferead.ErrNotRegular and
// ErrNotExecutable.
type notRegular struct{ *saferead.NotRegularError }

func (e notRegular) Unwrap() []error { return []error{e.NotRegularError, ErrNotExecutable} }

func classifyPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "too many levels of symbolic links") {
		return fmt.Errorf("%s: %w", pe.Path, venv.ErrSymlinkLoop)
	}
	return err
}

func readHead(name string, n int) ([]byte, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:k], nil
}

// resolveShim follows a pyenv shim to the interpreter pyenv would run.
func resolveShim(ctx context.Context, res *Result, shim string, opts Options) error {
	name := filepath.Base(shim)
	exe, version, err := venv.PyenvWhich(name, opts.Cwd, venv.Options{Env: opts.Env})
	if err != nil {
		return fmt.Errorf("pyenv shim %s: %w", shim, err)
	}
	if res.TargetKind == KindExecutable {
		res.TargetKind = KindShim
	}
	res.Shim = shim
	res.ShimVersion = version
	if _, origin, err := venv.PyenvSelected(opts.Cwd, venv.Options{Env: opts.Env}); err == nil {
		res.ShimVersionFrom = origin
	}
	if err := resolveExe(ctx, res, exe, opts); err != nil {
		return err
	}
	// pyenv chose the interpreter; bin/python3 is a link to python3.X
	// in its prefix, not a venv's.
	if res.Via == "self" || res.Via == "symlink" {
		res.Via = "pyenv"
	}
	return nil
}

// resolveScript follows a script's shebang to its interpreter.
func resolveScript(ctx context.Context, res *Result, script string, head []byte, opts Options) error {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimRight(line, "\r")
	res.TargetKind = KindScript
	res.Script = script
	res.Shebang = string(line)
	interp, err := shebangInterpreter(string(line[2:]), opts.Env)
	if err != nil {
		return fmt.Errorf("%s: %w", script, err)
	}
	h, err := readHead(interp, 512)
	if err != nil {
		return fmt.Errorf("%s: interpreter from its shebang: %w", script, err)
	}
	if venv.IsPyenvShim(bytes.NewReader(h)) {
		return resolveShim(ctx, res, interp, opts)
	}
	if !bytes.HasPrefix(h, []byte("\x7fELF")) {
		return fmt.Errorf("%s: its shebang names %s, which is not an ELF executable: %w", script, interp, ErrNotPython)
	}
	return resolveExe(ctx, res, interp, opts)
}

// shebangInterpreter returns the program a shebang line runs, looking it
// up on PATH for "/usr/bin/env NAME".
func shebangInterpreter(line string, env environ.Env) (string, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return "", errors.New("empty shebang line")
	}
	prog := fields[0]
	if path.Base(prog) == "env" {
		name := ""
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
				continue
			}
			name = f
			break
		}
		if name == "" {
			return "", fmt.Errorf("shebang %q names no program after env", line)
		}
		if strings.Contains(name, "/") {
			return name, nil
		}
		for _, dir := range filepath.SplitList(env.Get("PATH")) {
			if dir == "" {
				dir = "."
			}
			cand := filepath.Join(dir, name)
			if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				return cand, nil
			}
		}
		return "", fmt.Errorf("shebang %q: %s is not on PATH", line, name)
	}
	return prog, nil
}

// resolveExe resolves an executable file on this machine.
func resolveExe(ctx context.Context, res *Result, exe string, opts Options) error {
	res.Exe = exe
	ldPath := opts.Env.List("LD_LIBRARY_PATH")
	vo := venv.Options{Env: opts.Env}
	if bareCopy(exe) {
		vo.FindOriginal = true
		if lib := libpythonOf(exe, ldPath); lib != "" {
			if bin := venv.PrefixBin(lib); bin != "" {
				vo.ExtraDirs = []string{bin}
			}
		}
	}
	r, err := venv.Resolve(exe, vo)
	if r != nil {
		fillVenv(res, r.Env)
		res.ExeBuildID = r.CopyBuildID
	}
	if err != nil {
		return err
	}
	res.Interpreter = r.Interpreter
	res.Via = r.Via
	res.MatchedBy = r.MatchedBy
	res.BuildID = r.BuildID
	if res.ExeBuildID == "" {
		res.ExeBuildID = r.BuildID
	}
	return fillPython(res, r.Interpreter, "", ldPath)
}

// bareCopy reports whether exe may be a bare copy of an interpreter, to
// be matched by build-id against the candidates: a file in no
// environment and not in an installation prefix (venv.InPrefix).
func bareCopy(exe string) bool {
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return false
	}
	if env, err := venv.FindEnv(real); err != nil || env != nil {
		return false
	}
	return !venv.InPrefix(real)
}

// libpythonOf returns the libpython the executable exe loads, found as
// the dynamic loader would (see fillPython); "" when it needs none or it
// is not found.
func libpythonOf(exe string, ldPath []string) string {
	f, err := saferead.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, facts, err := parseFacts(f, elfinfo.Options{Dynamic: true}, exe)
	if err != nil || facts.HasRuntime || facts.LibpythonNeeded == "" {
		return ""
	}
	lib, err := findLibpython(exe, "", info, facts, ldPath)
	if err != nil {
		return ""
	}
	return lib
}

func fillVenv(res *Result, env *venv.Env) {
	if env == nil {
		res.Venv = Venv{Kind: string(venv.KindNone)}
		return
	}
	res.Venv = Venv{Path: env.Path, Kind: string(env.Kind), Home: env.Home}
	if env.Cfg != nil {
		res.Venv.Version = env.Cfg.Version
	}
}

// openFacts parses the ELF and Python facts of p, a path under root, once.
func openFacts(root, p string) (*elfinfo.Info, *pyinfo.Facts, error) {
	f, err := rootfs.Open(root, p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, facts, err := parseFacts(f, elfinfo.Options{Producer: true, Dynamic: true}, p)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	return info, facts, nil
}

// fillPython reads the Python and ELF facts of the interpreter file, and
// of its libpython when the runtime lives there. root is "" for this
// machine's root, or the host path of a process's root directory.
func fillPython(res *Result, interp, root string, ldPath []string) error {
	info, facts, err := openFacts(root, interp)
	if err != nil {
		return err
	}
	res.ELF = info
	if res.BuildID == "" {
		res.BuildID = info.BuildID
	}
	if facts.HasRuntime {
		res.Static = true
		res.Python = pythonOf(facts)
		return nil
	}
	if facts.LibpythonNeeded == "" {
		return fmt.Errorf("%s: %w (no CPython runtime symbols and no libpython among its libraries)", interp, ErrNotPython)
	}
	lib, err := findLibpython(interp, root, info, facts, ldPath)
	if err != nil {
		return fmt.Errorf("%s needs %s, which was not found: %w", interp, facts.LibpythonNeeded, err)
	}
	// FindLibrary answers with a host path; report it as the process sees it.
	return fillLibpython(res, rootfs.Strip(root, lib), root, facts)
}

// findLibpython finds the libpython interp needs in the dynamic loader's
// order; the answer is a host path.
func findLibpython(interp, root string, info *elfinfo.Info, facts *pyinfo.Facts, ldPath []string) (string, error) {
	realInterp := interp
	if root == "" {
		if p, err := filepath.EvalSymlinks(interp); err == nil {
			realInterp = p
		}
	}
	// The dynamic loader's order: DT_RPATH, LD_LIBRARY_PATH, then
	// DT_RUNPATH (RUNPATH does not override the environment).
	dirs, extra := info.RunPath, ldPath
	if !info.RPath {
		dirs, extra = append(append([]string(nil), ldPath...), info.RunPath...), nil
	}
	return pyinfo.FindLibrary(facts.LibpythonNeeded, dirs, filepath.Dir(realInterp), rootOrSlash(root), extra)
}

func rootOrSlash(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

// fillLibpython reads libpython's facts; exeFacts (may be nil) are the
// executable's, whose name-derived ABI flags are merged in.
func fillLibpython(res *Result, lib, root string, exeFacts *pyinfo.Facts) error {
	info, facts, err := openFacts(root, lib)
	if err != nil {
		return err
	}
	if !facts.HasRuntime {
		return fmt.Errorf("%s: %w (it holds no CPython runtime)", lib, ErrNotPython)
	}
	res.Libpython = lib
	res.LibpythonBuildID = info.BuildID
	res.LibpythonELF = info
	res.Static = false
	res.Python = pythonOf(facts)
	if exeFacts != nil {
		res.Python.ABIFlags = mergeFlags(res.Python.ABIFlags, exeFacts.ABIFlags)
		res.Python.DebugBuild = res.Python.DebugBuild || exeFacts.DebugBuild
		res.Python.FreeThreaded = res.Python.FreeThreaded || exeFacts.FreeThreaded
	}
	return nil
}

// parseFacts parses the ELF file behind r once and reads both its ELF
// facts (opts must ask for Dynamic, which pyinfo needs) and its Python
// facts from that one parse.
func parseFacts(r io.ReaderAt, opts elfinfo.Options, names ...string) (*elfinfo.Info, *pyinfo.Facts, error) {
	ef, err := elfinfo.NewFile(r)
	if err != nil {
		return nil, nil, err
	}
	info, err := elfinfo.ReadELF(ef, opts)
	if err != nil {
		return nil, nil, err
	}
	facts, err := pyinfo.ReadELF(ef, info, names...)
	if err != nil {
		return nil, nil, err
	}
	return info, facts, nil
}

func pythonOf(f *pyinfo.Facts) Python {
	return Python{
		Version:       f.Version,
		VersionSource: f.VersionSource,
		ABIFlags:      f.ABIFlags,
		DebugBuild:    f.DebugBuild,
		FreeThreaded:  f.FreeThreaded,
	}
}

// mergeFlags unions two ABI flag strings in CPython's order (t, d, m).
func mergeFlags(a, b string) string {
	var out strings.Builder
	for _, c := range "tdm" {
		if strings.ContainsRune(a, c) || strings.ContainsRune(b, c) {
			out.WriteRune(c)
		}
	}
	return out.String()
}

// inRoot returns the host path of p, a path as a process whose root is
// the host directory root sees it, with its links resolved inside that
// root (rootfs.HostPath), so that an absolute link never leads to the
// host's file. An empty root means this machine's own: p as it is.
func inRoot(root, p string) (string, error) {
	if root == "" {
		return p, nil
	}
	return rootfs.HostPath(root, p)
}
