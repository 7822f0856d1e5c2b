package core

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// These tests make real cores at test time, with gdb's gcore and with the
// kernel, of real Python processes, and compare what Read finds with
// readelf and with eu-unstrip (elfutils), which finds module build-ids in
// a core the same way gdb does.

// sleeper is the script every test process runs.
const sleeper = "import time; print('ready', flush=True); time.sleep(600)"

// startPython runs python (argv[0] is its path) in dir with the sleeper
// script, waits until it prints "ready", and kills it when the test ends.
// prefix is run before python, e.g. a shell that raises RLIMIT_CORE.
func startPython(t *testing.T, dir, python string, prefix ...string) *exec.Cmd {
	t.Helper()
	args := append(prefix, python, "-c", sleeper)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("%s printed %q", python, line)
	}
	return cmd
}

// venvCopy makes a venv with --copies of python and returns its python.
func venvCopy(t *testing.T, python string) string {
	t.Helper()
	dir := testenv.Venv(t, python, filepath.Join(t.TempDir(), "venv"), "--copies")
	real, err := filepath.EvalSymlinks(filepath.Join(dir, "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// gcore writes a core of pid with gdb's gcore and returns its path.
func gcore(t *testing.T, pid int) string {
	t.Helper()
	tool := testenv.Need(t, "gcore")
	prefix := filepath.Join(t.TempDir(), "core")
	out, err := exec.Command(tool, "-o", prefix, strconv.Itoa(pid)).CombinedOutput()
	name := prefix + "." + strconv.Itoa(pid)
	if err != nil {
		t.Fatalf("gcore: %v\n%s", err, out)
	}
	if _, err := os.Stat(name); err != nil {
		t.Fatalf("gcore wrote no %s: %v\n%s", name, err, out)
	}
	return name
}

// unstripModule is one line of eu-unstrip -n --core:
// START+SIZE BUILDID@ADDR FILE DEBUGFILE MODULENAME.
type unstripModule struct {
	start   uint64
	buildID string
	name    string
}

func euUnstrip(t *testing.T, core string) []unstripModule {
	t.Helper()
	out, err := exec.Command(testenv.Need(t, "eu-unstrip"), "-n", "--core="+core).Output()
	if err != nil {
		t.Fatalf("eu-unstrip -n --core=%s: %v", core, err)
	}
	var mods []unstripModule
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			t.Fatalf("eu-unstrip line %q", line)
		}
		startHex, _, _ := strings.Cut(f[0], "+")
		start, err := strconv.ParseUint(strings.TrimPrefix(startHex, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("eu-unstrip line %q: %v", line, err)
		}
		id, _, _ := strings.Cut(f[1], "@")
		if id == "-" {
			id = ""
		}
		mods = append(mods, unstripModule{start: start, buildID: id, name: f[len(f)-1]})
	}
	return mods
}

// checkAgainstEuUnstrip compares every build-id Read found with the
// module eu-unstrip reports at the same address, and the other way round.
// The vDSO has no NT_FILE entry and is the only module allowed to be
// missing from Files.
func checkAgainstEuUnstrip(t *testing.T, info *Info, core string) {
	t.Helper()
	mods := euUnstrip(t, core)
	byStart := map[uint64]unstripModule{}
	for _, m := range mods {
		byStart[m.start] = m
	}
	files := map[uint64]File{}
	for _, f := range info.Files {
		files[f.Start] = f
		if f.BuildID == "" {
			continue
		}
		m, ok := byStart[f.Start]
		if !ok {
			t.Errorf("%s at %#x has build-id %s; eu-unstrip reports no module there", f.Path, f.Start, f.BuildID)
		} else if m.buildID != f.BuildID {
			t.Errorf("%s at %#x: build-id %s, eu-unstrip %s", f.Path, f.Start, f.BuildID, m.buildID)
		}
	}
	for _, m := range mods {
		if _, ok := files[m.start]; !ok && !strings.Contains(m.name, "vdso") {
			t.Errorf("eu-unstrip module %s at %#x is not in Files", m.name, m.start)
		}
	}
	t.Logf("%d files, %d eu-unstrip modules agree", len(info.Files), len(mods))
}

func fileNamed(info *Info, base string) (File, bool) {
	for _, f := range info.Files {
		if filepath.Base(f.Path) == base {
			return f, true
		}
	}
	return File{}, false
}

func comm(exe string) string {
	b := filepath.Base(exe)
	if len(b) > 15 {
		b = b[:15]
	}
	return b
}

// checkProcess checks the facts every core of the sleeper process shows.
func checkProcess(t *testing.T, info *Info, pid int, exe, exeBuildID string) {
	t.Helper()
	if info.PID != pid {
		t.Errorf("PID = %d, want %d", info.PID, pid)
	}
	if info.Comm != comm(exe) {
		t.Errorf("Comm = %q, want %q", info.Comm, comm(exe))
	}
	cmdline := exe + " -c " + sleeper
	if info.Args == "" || !strings.HasPrefix(cmdline, info.Args) {
		t.Errorf("Args = %q, want a prefix of %q", info.Args, cmdline)
	}
	if info.Exe != exe || info.ExeDeleted {
		t.Errorf("Exe = %q (deleted %v), want %q", info.Exe, info.ExeDeleted, exe)
	}
	if info.ExeBuildID != exeBuildID {
		t.Errorf("ExeBuildID = %q, want %q", info.ExeBuildID, exeBuildID)
	}
	if info.Truncated {
		t.Error("Truncated = true")
	}
	libc, ok := fileNamed(info, "libc.so.6")
	if !ok {
		t.Fatalf("no libc.so.6 in %+v", info.Files)
	}
	if want := testenv.ReadelfBuildID(t, libc.Path); libc.BuildID != want {
		t.Errorf("libc build-id %q, readelf %q", libc.BuildID, want)
	}
}

func TestGcoreVenvCopy(t *testing.T) {
	python := testenv.Debian(t).Exe
	testenv.Need(t, "gcore")
	testenv.Need(t, "eu-unstrip")
	exe := venvCopy(t, python)
	info, name := gcorePython(t, exe, python)
	checkAgainstEuUnstrip(t, info, name)
}

// TestGcoreLoaded reads the loader's list from a real core: the program
// first, then each library by the name the loader opened, which is the
// file its NT_FILE mapping names (possibly through a symlinked /lib).
func TestGcoreLoaded(t *testing.T) {
	python := testenv.Debian(t).Exe
	testenv.Need(t, "gcore")
	info, _ := gcorePython(t, python, python)
	if len(info.Loaded) < 2 || info.Loaded[0].Name != "" || info.Loaded[0].Path != info.Exe {
		t.Fatalf("loaded objects: %+v, want the program %s first", info.Loaded, info.Exe)
	}
	libc := false
	for _, l := range info.Loaded[1:] {
		if !filepath.IsAbs(l.Name) {
			continue // the vDSO
		}
		a, err1 := os.Stat(l.Name)
		b, err2 := os.Stat(l.Path)
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			t.Errorf("loaded %q is not the file mapped, %q (%v %v)", l.Name, l.Path, err1, err2)
		}
		libc = libc || strings.HasPrefix(filepath.Base(l.Name), "libc.so")
	}
	if !libc {
		t.Errorf("no libc among the loaded objects: %+v", info.Loaded)
	}
}

// gcorePython starts exe, dumps it with gcore, and checks that the core
// names the process and exe with the build-id of the file built
// (python, or exe itself).
func gcorePython(t *testing.T, exe, built string) (*Info, string) {
	t.Helper()
	cmd := startPython(t, t.TempDir(), exe)
	name := gcore(t, cmd.Process.Pid)
	info, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	checkProcess(t, info, cmd.Process.Pid, exe, testenv.ReadelfBuildID(t, built))
	return info, name
}

func TestGcorePyenvSharedLibpython(t *testing.T) {
	py := testenv.Pyenv(t, "3.11+")
	lib := py.Libpython()
	if lib == "" {
		testenv.Missing(t, "pyenv's Python %s has no shared libpython", py.Version)
	}
	python, err := filepath.EvalSymlinks(py.Exe)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Need(t, "gcore")
	testenv.Need(t, "eu-unstrip")
	info, name := gcorePython(t, python, python)
	libFile, ok := fileNamed(info, filepath.Base(lib))
	if !ok {
		t.Fatalf("no %s in %+v", filepath.Base(lib), info.Files)
	}
	if want := testenv.ReadelfBuildID(t, libFile.Path); libFile.BuildID != want || want == "" {
		t.Errorf("%s: build-id %q, readelf %q", libFile.Path, libFile.BuildID, want)
	}
	checkAgainstEuUnstrip(t, info, name)
}

// TestKernelCore makes the kernel write a core of a venv copy of python
// (SIGSEGV with RLIMIT_CORE raised in the child only). It does not touch
// /proc/sys/kernel/core_pattern, which belongs to the whole machine.
//
// A pattern that pipes cores to a handler (systemd-coredump, apport), an
// empty one, or one whose directory depends on the process leaves no file
// the test can find without changing the machine's settings: that is
// Missing (a failure under CI=true; a CI machine sets core_pattern to
// "core"). The rest is the test's to get right: a pattern naming a
// directory is searched there; the limit is raised by the test; the core
// is looked for by PID.
func TestKernelCore(t *testing.T) {
	python := testenv.Debian(t).Exe
	testenv.Need(t, "eu-unstrip")
	sh := testenv.Need(t, "sh")
	pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil {
		t.Fatalf("cannot read core_pattern: %v", err)
	}
	p := strings.TrimSpace(string(pattern))
	switch {
	case strings.HasPrefix(p, "|"):
		testenv.Missing(t, "core_pattern %q pipes cores to a handler, so the kernel writes no file here; set it with: echo core | sudo tee /proc/sys/kernel/core_pattern", p)
	case p == "":
		testenv.Missing(t, "core_pattern is empty, so the kernel writes no cores; set it with: echo core | sudo tee /proc/sys/kernel/core_pattern")
	}
	exe := venvCopy(t, python)
	dir := t.TempDir()
	coreDir := dir
	if strings.HasPrefix(p, "/") {
		// An absolute pattern: its directory, when the pattern names
		// one without specifiers.
		coreDir = filepath.Dir(p)
		if strings.Contains(coreDir, "%") {
			testenv.Missing(t, "core_pattern %q puts cores in a directory that depends on the process; set it with: echo core | sudo tee /proc/sys/kernel/core_pattern", p)
		}
	}
	cmd := startPython(t, dir, exe, sh, "-c", `ulimit -c unlimited && exec "$0" "$@"`)
	pid := cmd.Process.Pid // exec keeps the shell's PID
	if err := cmd.Process.Signal(syscall.SIGSEGV); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("python exited with %v after SIGSEGV", err)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGSEGV {
		t.Fatalf("python ended with %v, want SIGSEGV", err)
	}
	if !ws.CoreDump() {
		testenv.Missing(t, "the kernel dumped no core (core_pattern %q; RLIMIT_CORE, suid_dumpable or the file system may forbid it)", p)
	}
	entries, err := os.ReadDir(coreDir)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var info *Info
	for _, e := range entries {
		candidate := filepath.Join(coreDir, e.Name())
		if e.IsDir() || (coreDir != dir && !strings.Contains(e.Name(), strconv.Itoa(pid)) && !strings.HasPrefix(e.Name(), "core")) {
			continue
		}
		if i, err := Open(candidate); err == nil && i.PID == pid {
			name, info = candidate, i
			break
		}
	}
	if info == nil {
		testenv.Missing(t, "the kernel reports a core dump but core_pattern %q put it elsewhere (found %d files in %s)", p, len(entries), coreDir)
	}
	if coreDir != dir {
		t.Cleanup(func() { os.Remove(name) })
	}
	t.Logf("kernel core %s", name)
	checkProcess(t, info, pid, exe, testenv.ReadelfBuildID(t, python))
	checkAgainstEuUnstrip(t, info, name)
}
