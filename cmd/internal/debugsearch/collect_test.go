package debugsearch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/testenv"
)

func TestDebugDirs(t *testing.T) {
	base := t.TempDir()
	store := filepath.Join(base, "store")
	mine := filepath.Join(base, "mine")
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil { // others may plant *-gdb.py files
		t.Fatal(err)
	}
	var warned []string
	c := New(Options{
		StoreDir:  store,
		DebugDirs: []string{mine + "/", open, store, mine},
		UID:       os.Geteuid(),
		Warn:      func(w string) { warned = append(warned, w) },
	})
	dirs, warnings := c.DebugDirs()
	want := append(slices.Clone(debugfile.DefaultDebugDirs), store, mine)
	if !slices.Equal(dirs, want) {
		t.Errorf("debug dirs %q, want %q (gdb's, the store, the configured; cleaned, once each, no untrusted one)", dirs, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "ignored debug directory "+open) {
		t.Errorf("warnings %q, want one about %s", warnings, open)
	}
	di, err := c.For(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(di.DebugDirs, want) || !slices.Equal(di.Warnings, warnings) || !slices.Equal(warned, warnings) {
		t.Errorf("targetless: dirs %q warnings %q warned %q", di.DebugDirs, di.Warnings, warned)
	}
	if len(di.Modules) != 0 || di.Python != nil {
		t.Errorf("targetless: modules %+v python %+v", di.Modules, di.Python)
	}
}

func TestDebuginfodState(t *testing.T) {
	env := []string{"DEBUGINFOD_URLS=https://debuginfod.example.org", "HOME=" + t.TempDir()}
	for _, offline := range []bool{false, true} {
		di, err := New(Options{Env: env, Offline: offline, UID: os.Geteuid()}).For(context.Background(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(di.Debuginfod.URLs, []string{"https://debuginfod.example.org"}) || di.Debuginfod.Offline != offline {
			t.Errorf("offline %v: debuginfod %+v", offline, di.Debuginfod)
		}
	}
}

// TestCollectFileNotPython lists the debug information of an ELF file
// that is not Python (this test binary), named relative to Cwd.
func TestCollectFileNotPython(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Cwd: filepath.Dir(exe), Offline: true, StoreDir: t.TempDir(), UID: os.Geteuid()})
	di, err := c.Collect(context.Background(), filepath.Base(exe), nil, target.ErrNotPython)
	if err != nil {
		t.Fatal(err)
	}
	if len(di.Modules) != 1 || di.Modules[0].Path != exe || di.Modules[0].BuildID == "" {
		t.Fatalf("modules %+v, want %s with its build-id", di.Modules, exe)
	}
	if di.Python != nil || di.Extensions.GDB != "" || !di.Debuginfod.Offline {
		t.Errorf("not Python: python %+v extensions %+v debuginfod %+v", di.Python, di.Extensions, di.Debuginfod)
	}
	// Another resolve error is the answer.
	other := errors.New("permission denied")
	if _, err := c.Collect(context.Background(), "x", nil, other); !errors.Is(err, other) {
		t.Errorf("resolve error: %v", err)
	}
	// A file that is not ELF is named.
	txt := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(txt, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Collect(context.Background(), txt, nil, target.ErrNotPython); err == nil || !strings.Contains(err.Error(), txt) {
		t.Errorf("not ELF: %v", err)
	}
}

func TestCollectPIDModules(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	res := &target.Result{
		TargetKind: target.KindPID, PID: 7, Exe: exe, Interpreter: exe,
		Python:  target.Python{Version: "3.12.99"},
		Modules: []target.Module{{Path: exe}},
	}
	di, err := New(Options{Offline: true, StoreDir: t.TempDir(), CacheDir: t.TempDir(), UID: os.Geteuid(), Home: t.TempDir()}).For(context.Background(), "7", res)
	if err != nil {
		t.Fatal(err)
	}
	if di.PID != 7 || di.Interpreter != exe || di.Python == nil || di.Python.Version != "3.12.99" {
		t.Errorf("pid target: %+v", di)
	}
	if len(di.Modules) != 1 || di.Modules[0].Path != exe {
		t.Errorf("modules %+v, want the process's", di.Modules)
	}
	if len(di.Extensions.GDBTried) == 0 {
		t.Errorf("no extension looked for: %+v", di.Extensions)
	}
}

// TestCollectCore: the modules of a core come from its notes; a file
// that changed since the core was written is looked for by the build-id
// the core recorded (here found in a build-id directory), with a
// warning, and mapped data files are no modules.
func TestCollectCore(t *testing.T) {
	dir := t.TempDir()
	const src = "int f(void) { return 1; }\n"
	const was, now = "2222222222222222222222222222222222222222", "1111111111111111111111111111111111111111"
	lib := testenv.CC(t, dir, "libx.so", src, "-shared", "-fPIC", "-Wl,--build-id=0x"+now)
	dbg := filepath.Join(dir, "debug")
	old := testenv.CC(t, dir, "libold.so", src, "-shared", "-fPIC", "-g", "-Wl,--build-id=0x"+was)
	want := filepath.Join(dbg, ".build-id", was[:2], was[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, want); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "locale-archive")
	if err := os.WriteFile(data, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &target.Result{TargetKind: target.KindCore, Modules: []target.Module{{Path: lib, BuildID: was}, {Path: data}}}
	var warned []string
	c := New(Options{Offline: true, StoreDir: t.TempDir(), DebugDirs: []string{dbg}, UID: os.Geteuid(), Warn: func(w string) { warned = append(warned, w) }})
	di, err := c.Collect(context.Background(), filepath.Join(dir, "core"), res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(di.Modules) != 1 || di.Modules[0].Path != lib || di.Modules[0].BuildID != was || di.Modules[0].Debug.Path != want {
		t.Fatalf("modules %+v; want only %s (build-id %s) with debug file %s", di.Modules, lib, was, want)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], lib+" changed since the core was written") || !slices.Equal(di.Warnings, warned) {
		t.Errorf("warnings %q (info %q); want one saying %s changed", warned, di.Warnings, lib)
	}
}
