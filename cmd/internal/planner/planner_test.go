package planner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/cmd/internal/walkerdir"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/pywalk"
)

// Versions the walker covers or not, by pyoffsets' rules (3.13 and later
// read _Py_DebugOffsets; 3.6 has no _PyRuntime), not by its table.
const (
	covered    = "3.13.0"
	notCovered = "3.6.15"
)

// fake is a resolved target and its debug information, served to Build.
type fake struct {
	res      *target.Result
	di       *debugsearch.Info
	resolved []string // targets Resolve was asked for
}

func (f *fake) options(t *testing.T) Options {
	return Options{
		Resolve: func(_ context.Context, tgt string) (*target.Result, error) {
			f.resolved = append(f.resolved, tgt)
			return f.res, nil
		},
		Collect: func(_ context.Context, tgt string, res *target.Result) (*debugsearch.Info, error) {
			if res != f.res {
				t.Errorf("Collect got result %p, want the resolved %p", res, f.res)
			}
			return f.di, nil
		},
		DataHome: t.TempDir(),
		UID:      os.Geteuid(),
		Warn:     func(err error) { t.Errorf("unexpected warning: %v", err) },
	}
}

// touch makes a file (and its directories) and returns its path.
func touch(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func build(t *testing.T, tg Inferior, f *fake, edit ...func(*Options)) plan.Plan {
	t.Helper()
	opts := f.options(t)
	for _, e := range edit {
		e(&opts)
	}
	p, di, err := Build(context.Background(), tg, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if di != f.di {
		t.Errorf("Build returned debug info %p, want the collected %p", di, f.di)
	}
	return p
}

func pythonResult(version string) *target.Result {
	return &target.Result{
		Target: "1234", TargetKind: target.KindPID, PID: 1234,
		Exe: "/usr/bin/python3", Interpreter: "/usr/bin/python3",
		Python: target.Python{Version: version},
	}
}

func TestProgramVenvCopy(t *testing.T) {
	res := pythonResult(notCovered)
	res.Exe = "/home/u/.venv/bin/python3"
	res.Interpreter = "/usr/bin/python3.11"
	res.Venv = target.Venv{Path: "/home/u/.venv", Kind: "copies"}
	f := &fake{res: res, di: &debugsearch.Info{}}
	p := build(t, Inferior{PID: 1234}, f)
	if p.Program != res.Interpreter {
		t.Errorf("attached to a venv copy: program %q, want the real interpreter %s", p.Program, res.Interpreter)
	}
	if p.Target != "1234" || !slices.Equal(f.resolved, []string{"1234"}) {
		t.Errorf("target %q, resolved %q", p.Target, f.resolved)
	}
	if !slices.Contains(p.Findings, "executable: /home/u/.venv/bin/python3 (copies venv)") {
		t.Errorf("findings %q lack the venv copy", p.Findings)
	}
	// A launched program stays as the command line gives it: its venv
	// stays active.
	p = build(t, Inferior{Program: res.Exe, Launch: true}, f)
	if p.Program != "" {
		t.Errorf("launched venv copy: program %q, want it left to the command line", p.Program)
	}
}

func TestProgramDeletedExe(t *testing.T) {
	res := pythonResult(notCovered)
	res.ExeDeleted = true
	p := build(t, Inferior{PID: 1234}, &fake{res: res, di: &debugsearch.Info{}})
	if p.Program != "" {
		t.Errorf("deleted executable: program %q, want none (the debugger reads the process's)", p.Program)
	}
	res.ExeDeleted, res.Embedded = false, true
	p = build(t, Inferior{PID: 1234}, &fake{res: res, di: &debugsearch.Info{}})
	if p.Program != "" {
		t.Errorf("embedded interpreter: program %q, want none", p.Program)
	}
}

// containerRoots are a chroot-like root (a directory) and a pivot_root
// one (a link that reads as "/", as /proc/PID/root does).
func containerRoots(t *testing.T) (chroot, hidden string) {
	dir := t.TempDir()
	chroot = filepath.Join(dir, "chroot")
	hidden = filepath.Join(dir, "hidden")
	if err := os.Mkdir(chroot, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", hidden); err != nil {
		t.Fatal(err)
	}
	return chroot, hidden
}

func containerResult(root string) *target.Result {
	res := pythonResult(notCovered)
	res.Container, res.Root = true, root
	res.ReadFrom = filepath.Join(root, "usr/bin/python3")
	return res
}

func TestProgramContainer(t *testing.T) {
	chroot, hidden := containerRoots(t)
	debugDir := touch(t, filepath.Join(chroot, "usr/lib/debug/x")) // a debug dir that exists under the root
	debugDir = filepath.Dir(debugDir)
	link := filepath.Join(t.TempDir(), "python3.debug")
	mods := []debugsearch.Module{{Path: "/usr/bin/python3", Debug: debugfile.Found{Via: debugfile.ViaDebugLink, Path: link}}}

	// A chroot: the program is read from under the root, which is the
	// sysroot; symbol files name the module under it.
	p := build(t, Inferior{PID: 1234}, &fake{res: containerResult(chroot), di: &debugsearch.Info{Modules: mods, DebugDirs: []string{"/usr/lib/debug"}}})
	if p.Program != filepath.Join(chroot, "usr/bin/python3") || p.Sysroot != chroot {
		t.Errorf("chroot: program %q sysroot %q", p.Program, p.Sysroot)
	}
	if want := []plan.SymbolFile{{Module: filepath.Join(chroot, "usr/bin/python3"), File: link}}; !slices.Equal(p.SymbolFiles, want) {
		t.Errorf("chroot: symbol files %+v, want %+v", p.SymbolFiles, want)
	}
	// lldb has no sysroot for a local process: it reads the process's
	// files under the root, and the root's debug directory.
	if p.LLDBRoot != chroot || p.LLDBExe != "/usr/bin/python3" || !slices.Contains(p.LLDBDebugDirs, filepath.Join(chroot, "/usr/lib/debug")) {
		t.Errorf("chroot: lldb root %q exe %q debug dirs %q", p.LLDBRoot, p.LLDBExe, p.LLDBDebugDirs)
	}

	// A hidden root: no program and no sysroot (gdb's target: reads the
	// process's files), lldb reads under the root, the extension is
	// sourced, and a debug directory or symbol file under the root is
	// left to target:.
	res := containerResult(hidden)
	res.Exe = "/usr/local/bin/python3"
	inRoot := filepath.Join(hidden, filepath.Dir(link))
	di := &debugsearch.Info{
		DebugDirs:  []string{filepath.Dir(link), debugDir},
		Modules:    []debugsearch.Module{{Path: "/usr/bin/python3", Debug: debugfile.Found{Via: debugfile.ViaDebuginfod, Path: filepath.Join(inRoot, "x.debug")}}},
		Extensions: debugsearch.Extensions{GDB: "/usr/share/gdb/auto-load/usr/bin/python3-gdb.py"},
	}
	p = build(t, Inferior{PID: 1234}, &fake{res: res, di: di})
	if p.Program != "" || p.Sysroot != "" {
		t.Errorf("hidden root: program %q sysroot %q, want none", p.Program, p.Sysroot)
	}
	if p.LLDBRoot != hidden || p.LLDBExe != res.Exe {
		t.Errorf("hidden root: lldb root %q exe %q", p.LLDBRoot, p.LLDBExe)
	}
	// Under a root that reads as "/", every existing host directory is
	// also "in" the root: both are handed to lldb under it.
	if want := []string{filepath.Join(hidden, filepath.Dir(link)), filepath.Join(hidden, debugDir)}; !slices.Equal(p.LLDBDebugDirs, want) {
		t.Errorf("hidden root: lldb debug dirs %q, want %q", p.LLDBDebugDirs, want)
	}
	if len(p.SymbolFiles) != 0 {
		t.Errorf("hidden root: symbol files %+v under the root, want none", p.SymbolFiles)
	}
	if p.GDBExtension == "" || len(p.GDBAutoLoad) != 0 {
		t.Errorf("hidden root: extension %q auto-load %q, want it sourced", p.GDBExtension, p.GDBAutoLoad)
	}
	// No program is given for an attach to a hidden root, a core's
	// neither; lldb's root is for a process only.
	p = build(t, Inferior{Core: "core.1", Program: "/usr/bin/python3"}, &fake{res: res, di: &debugsearch.Info{}})
	if p.LLDBRoot != "" {
		t.Errorf("hidden root without a PID: lldb root %q", p.LLDBRoot)
	}
}

func TestProgramCore(t *testing.T) {
	res := pythonResult(notCovered)
	res.TargetKind = target.KindExecutable
	res.Interpreter = "/usr/bin/python3.11"
	f := &fake{res: res, di: &debugsearch.Info{}}
	var asked string
	p := build(t, Inferior{Core: "/tmp/core.99"}, f, func(o *Options) {
		o.ReadCore = func(path string) (*core.Info, error) {
			asked = path
			return &core.Info{Exe: "/usr/bin/python3", Owner: &core.Owner{UID: 65534, GID: 65533}}, nil
		}
	})
	if asked != "/tmp/core.99" || !slices.Equal(f.resolved, []string{"/usr/bin/python3"}) {
		t.Errorf("core: asked for %q, resolved %q", asked, f.resolved)
	}
	if p.Core != "/tmp/core.99" || p.Target != "/usr/bin/python3" || p.Program != res.Interpreter {
		t.Errorf("core: core %q target %q program %q", p.Core, p.Target, p.Program)
	}
	if len(p.Findings) == 0 || p.Findings[0] != "core /tmp/core.99 was dumped by /usr/bin/python3" {
		t.Errorf("core: findings %q", p.Findings)
	}

	// A core that cannot be read stops the plan with the core's error.
	bad := &core.OpenError{Path: "/tmp/core.99"}
	_, _, err := Build(context.Background(), Inferior{Core: "/tmp/core.99"}, Options{
		ReadCore: func(string) (*core.Info, error) { return nil, bad },
	})
	if !errors.Is(err, bad) {
		t.Errorf("unreadable core: %v", err)
	}
}

// TestCoreCreds: the walker reads a core's source files as the core's
// user, when core.OpenIn kept it; as anyone otherwise.
func TestCoreCreds(t *testing.T) {
	res := pythonResult(covered)
	res.TargetKind = target.KindExecutable
	for _, owner := range []*core.Owner{{UID: 65534, GID: 65533}, nil} {
		p := build(t, Inferior{Core: "/tmp/core.99"}, &fake{res: res, di: &debugsearch.Info{}}, func(o *Options) {
			o.ReadCore = func(string) (*core.Info, error) { return &core.Info{Exe: "/usr/bin/python3", Owner: owner}, nil }
		})
		if p.Walker == nil {
			t.Fatal("no walker")
		}
		if owner == nil && p.Walker.Creds != nil || owner != nil && (p.Walker.Creds == nil || *p.Walker.Creds != plan.Creds{UID: owner.UID, GID: owner.GID}) {
			t.Errorf("owner %+v: walker creds %+v", owner, p.Walker.Creds)
		}
	}
}

func TestExtensionAutoLoadOrSource(t *testing.T) {
	dir := t.TempDir()
	prog := touch(t, filepath.Join(dir, "bin/python3.11"))
	link := filepath.Join(dir, "bin/python3")
	if err := os.Symlink("python3.11", link); err != nil {
		t.Fatal(err)
	}
	beside := touch(t, prog+"-gdb.py")
	elsewhere := touch(t, filepath.Join(dir, "ext/python3.11-gdb.py"))
	for _, tc := range []struct {
		name, ext  string
		autoLoad   []string
		sourced    string
		lldbLoaded string
	}{
		// gdb's default safe path: nothing to do.
		{"auto-load dir", debugsearch.GDBAutoLoadDir + prog + "-gdb.py", nil, "", ""},
		// Beside the binary: allowed as that one file, named by its real path.
		{"beside the binary", beside, []string{beside}, "", ""},
		{"elsewhere", elsewhere, nil, elsewhere, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := pythonResult(notCovered)
			res.Interpreter = link // the program file is named through a link
			di := &debugsearch.Info{Extensions: debugsearch.Extensions{GDB: tc.ext, LLDB: "/x/cpython_lldb.py"}}
			p := build(t, Inferior{PID: 1}, &fake{res: res, di: di})
			if !slices.Equal(p.GDBAutoLoad, tc.autoLoad) || p.GDBExtension != tc.sourced {
				t.Errorf("extension %s: auto-load %q sourced %q, want %q and %q", tc.ext, p.GDBAutoLoad, p.GDBExtension, tc.autoLoad, tc.sourced)
			}
			if p.LLDBExtension != "/x/cpython_lldb.py" {
				t.Errorf("lldb extension %q", p.LLDBExtension)
			}
		})
	}
}

// TestSecurityExtensionNeverFromRoot: the extension chosen for a
// container is the host's; a file of the same name under the container's
// root (which the container wrote) is never what gdb sources.
func TestSecurityExtensionNeverFromRoot(t *testing.T) {
	chroot, hidden := containerRoots(t)
	for _, root := range []string{chroot, hidden} {
		touch(t, filepath.Join(root, "usr/lib/debug/ext-gdb.py"))
		di := &debugsearch.Info{Extensions: debugsearch.Extensions{GDB: "/usr/lib/debug/ext-gdb.py"}}
		p := build(t, Inferior{PID: 1}, &fake{res: containerResult(root), di: di})
		if p.GDBExtension != "/usr/lib/debug/ext-gdb.py" {
			t.Errorf("%s: sourced %q, want the host's /usr/lib/debug/ext-gdb.py", root, p.GDBExtension)
		}
	}
}

func TestSymbolFiles(t *testing.T) {
	res := pythonResult(notCovered)
	di := &debugsearch.Info{Modules: []debugsearch.Module{
		{Path: "/usr/bin/python3", Debug: debugfile.Found{Via: debugfile.ViaDebuginfod, Path: "/c/a/debuginfo"}},
		{Path: "/usr/lib/libz.so", Debug: debugfile.Found{Via: debugfile.ViaDebuginfodCache, Path: "/c/b/debuginfo"}},
		// gdb finds a debuglink beside the module or in .debug by itself.
		{Path: "/opt/m/a.so", Debug: debugfile.Found{Via: debugfile.ViaDebugLink, Path: "/opt/m/a.so.debug"}},
		{Path: "/opt/m/b.so", Debug: debugfile.Found{Via: debugfile.ViaDebugLink, Path: "/opt/m/.debug/b.so.debug"}},
		{Path: "/opt/m/c.so", Debug: debugfile.Found{Via: debugfile.ViaDebugLink, Path: "/store/c.so.debug"}},
		{Path: "/opt/m/d.so", Debug: debugfile.Found{Via: debugfile.ViaBuildID, Path: "/usr/lib/debug/.build-id/ab/cd.debug"}},
		{Path: "/opt/m/e.so", Debug: debugfile.Found{Via: debugfile.ViaEmbedded, Path: "/opt/m/e.so"}},
	}}
	p := build(t, Inferior{PID: 1}, &fake{res: res, di: di})
	want := []plan.SymbolFile{
		{Module: "/usr/bin/python3", File: "/c/a/debuginfo"},
		{Module: "/usr/lib/libz.so", File: "/c/b/debuginfo"},
		{Module: "/opt/m/c.so", File: "/store/c.so.debug"},
	}
	if !slices.Equal(p.SymbolFiles, want) {
		t.Errorf("symbol files %+v, want %+v", p.SymbolFiles, want)
	}
}

func TestDebugDirsAndDebuginfod(t *testing.T) {
	dir := t.TempDir()
	res := pythonResult(notCovered)
	di := &debugsearch.Info{
		DebugDirs:  []string{"/usr/lib/debug", dir, filepath.Join(dir, "missing")},
		Debuginfod: debugsearch.DebuginfodState{URLs: []string{"https://d.example"}},
	}
	p := build(t, Inferior{PID: 1}, &fake{res: res, di: di})
	// gdb's default is its own; one that does not exist is not handed over.
	if !slices.Equal(p.DebugDirs, []string{dir}) {
		t.Errorf("debug dirs %q, want %q", p.DebugDirs, []string{dir})
	}
	if !p.Debuginfod.Enabled || !slices.Equal(p.Debuginfod.URLs, di.Debuginfod.URLs) {
		t.Errorf("debuginfod %+v", p.Debuginfod)
	}
	di.Debuginfod.Offline = true
	if p := build(t, Inferior{PID: 1}, &fake{res: res, di: di}); p.Debuginfod.Enabled {
		t.Errorf("offline: debuginfod %+v enabled", p.Debuginfod)
	}
}

func TestFastMode(t *testing.T) {
	ext := touch(t, filepath.Join(t.TempDir(), "python3.13-gdb.py"))
	di := &debugsearch.Info{
		Extensions: debugsearch.Extensions{GDB: ext},
		Modules:    []debugsearch.Module{{Path: "/usr/bin/python3", Debug: debugfile.Found{Via: debugfile.ViaDebuginfod, Path: "/c/debuginfo"}}},
	}
	fast := func(o *Options) { o.Fast = true }

	// The walker covers the version: py-bt from memory, no DWARF read,
	// no extension nor symbol file that needs it.
	res := pythonResult(covered)
	res.Libpython = "/usr/lib/libpython3.13.so.1.0"
	p := build(t, Inferior{PID: 1}, &fake{res: res, di: di}, fast)
	if !p.Fast || !p.NoDWARF || p.GDBExtension != "" || p.GDBAutoLoad != nil || p.SymbolFiles != nil || p.Walker == nil {
		t.Errorf("fast, walker covers: fast %v nodwarf %v ext %q autoload %q symbols %+v walker %+v", p.Fast, p.NoDWARF, p.GDBExtension, p.GDBAutoLoad, p.SymbolFiles, p.Walker)
	}
	if want := []string{`/libpython3\.13\.so\.1\.0`, `/libc\.so`, `/ld-linux[^/]*\.so`}; !slices.Equal(p.FastLibs, want) {
		t.Errorf("fast libs %q, want %q", p.FastLibs, want)
	}

	// Not covered: DWARF stays, and so do the extension and symbol files.
	p = build(t, Inferior{PID: 1}, &fake{res: pythonResult(notCovered), di: di}, fast)
	if p.NoDWARF || p.GDBExtension != ext || len(p.SymbolFiles) != 1 || p.Walker != nil {
		t.Errorf("fast, walker does not cover: nodwarf %v ext %q symbols %+v walker %+v", p.NoDWARF, p.GDBExtension, p.SymbolFiles, p.Walker)
	}
	if want := []string{`/libc\.so`, `/ld-linux[^/]*\.so`}; !slices.Equal(p.FastLibs, want) {
		t.Errorf("fast libs without libpython %q, want %q", p.FastLibs, want)
	}

	// Not fast: everything loads.
	p = build(t, Inferior{PID: 1}, &fake{res: res, di: di})
	if p.Fast || p.NoDWARF || p.FastLibs != nil || p.GDBExtension != ext || len(p.SymbolFiles) != 1 {
		t.Errorf("not fast: fast %v nodwarf %v libs %q ext %q symbols %+v", p.Fast, p.NoDWARF, p.FastLibs, p.GDBExtension, p.SymbolFiles)
	}
}

// TestForeign: a process in a container or of another user is foreign;
// its extension, even one gdb would auto-load from its default
// directory for the program, is sourced explicitly from the host's
// path (gdbgen turns auto-load off for it), and nothing names the
// container's libthread_db.
func TestForeign(t *testing.T) {
	chroot, hidden := containerRoots(t)
	uid := os.Geteuid()
	other := uid + 1000
	mine := pythonResult(notCovered)
	mine.UID = &uid
	theirs := pythonResult(notCovered)
	theirs.UID = &other
	// Where gdb would auto-load it for a program at /usr/bin/python3.
	ext := "/usr/share/gdb/auto-load/usr/bin/python3-gdb.py"
	di := func() *debugsearch.Info {
		return &debugsearch.Info{Extensions: debugsearch.Extensions{GDB: ext}, Modules: []debugsearch.Module{{Path: "/usr/bin/python3"}, {Path: "/lib/x86_64-linux-gnu/libc.so.6"}}}
	}
	touch(t, filepath.Join(chroot, "lib/x86_64-linux-gnu/libthread_db.so.1"))
	for _, c := range []struct {
		name    string
		res     *target.Result
		foreign bool
	}{
		{"own process", mine, false},
		{"another user's process", theirs, true},
		{"chroot", containerResult(chroot), true},
		{"pivot_root", containerResult(hidden), true},
	} {
		p := build(t, Inferior{PID: 1234}, &fake{res: c.res, di: di()})
		if got := len(p.Foreign) > 0; got != c.foreign {
			t.Errorf("%s: foreign %v (%q), want %v", c.name, got, p.Foreign, c.foreign)
		}
		if c.foreign && (p.GDBExtension != ext || len(p.GDBAutoLoad) != 0) {
			t.Errorf("%s: extension %q, auto-load %q: want the host's %s sourced", c.name, p.GDBExtension, p.GDBAutoLoad, ext)
		}
		text := fmt.Sprintf("%+v", p)
		if strings.Contains(text, "libthread_db") {
			t.Errorf("%s: the plan names libthread_db: %s", c.name, text)
		}
	}
}

func TestWalker(t *testing.T) {
	f := &fake{res: pythonResult(covered), di: &debugsearch.Info{}}
	opts := f.options(t)
	p, _, err := Build(context.Background(), Inferior{PID: 1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if p.Walker == nil || p.Walker.Version != covered || p.Walker.Root != "" || !strings.HasPrefix(p.Walker.Dir, filepath.Join(opts.DataHome, "pyattach", "walker")+"/") {
		t.Fatalf("covered version: walker %+v", p.Walker)
	}
	for n, b := range pywalk.Files() {
		if got, err := os.ReadFile(filepath.Join(p.Walker.Dir, n)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("walker file %s not written (%v)", n, err)
		}
	}
	if !slices.ContainsFunc(p.Findings, func(s string) bool { return strings.HasPrefix(s, "stack walker: "+p.Walker.Dir) }) {
		t.Errorf("findings %q lack the walker", p.Findings)
	}
	// In a container the walker reads the process's files under its root.
	chroot, _ := containerRoots(t)
	res := containerResult(chroot)
	res.Python.Version = covered
	if p := build(t, Inferior{PID: 1}, &fake{res: res, di: &debugsearch.Info{}}); p.Walker == nil || p.Walker.Root != chroot {
		t.Errorf("container: walker %+v, want root %s", p.Walker, chroot)
	}
	// Not covered: no walker.
	if p := build(t, Inferior{PID: 1}, &fake{res: pythonResult(notCovered), di: &debugsearch.Info{}}); p.Walker != nil {
		t.Errorf("version %s: walker %+v, want none", notCovered, p.Walker)
	}
	// Cannot be written: a warning, and the debugger starts without it.
	var warned []error
	p = build(t, Inferior{PID: 1}, f, func(o *Options) {
		o.DataHome = touch(t, filepath.Join(t.TempDir(), "file"))
		o.Warn = func(err error) { warned = append(warned, err) }
	})
	var wd *walkerdir.DirError
	if p.Walker != nil || len(warned) != 1 || !errors.As(warned[0], &wd) {
		t.Errorf("unwritable data dir: walker %+v warnings %v", p.Walker, warned)
	}
}

func TestTargetless(t *testing.T) {
	dir := t.TempDir()
	var asked []string
	opts := Options{
		Collect: func(_ context.Context, tgt string, res *target.Result) (*debugsearch.Info, error) {
			if res != nil {
				t.Errorf("targetless: Collect got a result")
			}
			asked = append(asked, tgt)
			return &debugsearch.Info{DebugDirs: []string{dir}, Debuginfod: debugsearch.DebuginfodState{URLs: []string{"https://d.example"}}}, nil
		},
		Resolve: func(context.Context, string) (*target.Result, error) {
			t.Error("targetless: Resolve called")
			return nil, errors.New("no")
		},
		DataHome: t.TempDir(),
	}
	p, di, err := Build(context.Background(), Inferior{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{""}) || !slices.Equal(di.DebugDirs, []string{dir}) {
		t.Errorf("targetless: asked %q, debug info %+v", asked, di)
	}
	if !slices.Equal(p.DebugDirs, []string{dir}) || !p.Debuginfod.Enabled || p.Program != "" {
		t.Errorf("targetless: plan %+v", p)
	}
	if p.Walker == nil || p.Walker.Version != "" {
		t.Errorf("targetless: walker %+v, want one that reads the version from memory", p.Walker)
	}
	if last := p.Findings[len(p.Findings)-1]; !strings.HasPrefix(last, "no target:") {
		t.Errorf("targetless: findings %q", p.Findings)
	}
}

func TestResolveErrorNamesTarget(t *testing.T) {
	_, _, err := Build(context.Background(), Inferior{PID: 42}, Options{
		Resolve: func(context.Context, string) (*target.Result, error) { return nil, target.ErrNotPython },
		Collect: func(context.Context, string, *target.Result) (*debugsearch.Info, error) {
			t.Error("Collect called after a resolve error")
			return nil, nil
		},
	})
	if !errors.Is(err, target.ErrNotPython) || !strings.HasPrefix(err.Error(), "42: ") {
		t.Errorf("resolve error: %v", err)
	}
}
