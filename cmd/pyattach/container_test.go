package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/testenv"
)

// A real container stand-in: a pyenv Python copied into a directory,
// run under `unshare --mount --fork chroot ROOT`, so that the process has
// another mount namespace and another root. `pyattach resolve PID` must
// report every path as the process sees it (/py/...), not as the host
// sees it (/tmp/.../root/py/...), and read every file under
// /proc/PID/root.
//
// What the kernel shows, from the host, for such a process (checked on
// the project's machines and logged by the test): /proc/PID/exe and the
// paths in /proc/PID/maps are the host paths (ROOT/py/bin/python3.X,
// ROOT/py/lib/libpython3.X.so.1.0), /proc/PID/root is ROOT, and
// /proc/PID/ns/mnt differs from /proc/self/ns/mnt. The namespace is a
// copy of the host's mount tree, so ROOT is still reachable from the
// host's root and the kernel prints the full path; pyattach strips ROOT.
//
// The interpreter is the newest pyenv build of 3.11 or later with a
// shared libpython. The library path: its RUNPATH is the absolute host
// path $PYENV_ROOT/versions/3.X.Y/lib. The test sets LD_LIBRARY_PATH=/py/lib
// (searched before RUNPATH) instead of placing libpython at that
// absolute path inside ROOT: were libpython at the same path in and out
// of the root, a pyattach that read the host's file instead of the
// process's could not be told from a correct one.
func TestContainerChrootPID(t *testing.T) {
	py := containerPrereqs(t)
	hostExe, hostLib := py.Exe, py.Libpython()
	exe, lib := inContainer(py)

	start := time.Now()
	root := filepath.Join(t.TempDir(), "root")
	libs := buildContainerRoot(t, root, py)
	t.Logf("built %s in %v", root, time.Since(start).Round(time.Millisecond))

	pid := startInContainer(t, root, py)
	t.Logf("python pid %d ready after %v", pid, time.Since(start).Round(time.Millisecond))

	// What the kernel shows the host about the process, for the record.
	p := "/proc/" + strconv.Itoa(pid)
	for _, l := range []string{"exe", "root", "ns/mnt"} {
		s, err := os.Readlink(p + "/" + l)
		t.Logf("%s/%s -> %s %v", p, l, s, errOrEmpty(err))
	}
	self, _ := os.Readlink("/proc/self/ns/mnt")
	t.Logf("/proc/self/ns/mnt -> %s", self)
	if maps, err := os.ReadFile(p + "/maps"); err == nil {
		for line := range strings.Lines(string(maps)) {
			if strings.Contains(line, "libpython") || strings.Contains(line, filepath.Base(exe)) && strings.Contains(line, "r-xp") {
				t.Logf("maps: %s", strings.TrimRight(line, "\n"))
			}
		}
	}

	var stdout, stderr bytes.Buffer
	code := Main([]string{"resolve", "--json", strconv.Itoa(pid)}, nil, &stdout, &stderr, testEnv(t))
	if code != 0 {
		t.Fatalf("pyattach resolve --json %d: exit %d\n%s", pid, code, stderr.String())
	}
	var r containerResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout.String())
	}

	if !r.Container {
		t.Errorf("container = false, want true")
	}
	if want := p + "/root"; r.Root != want {
		t.Errorf("root = %q, want %q", r.Root, want)
	}
	exeID := testenv.ReadelfBuildID(t, hostExe)
	if r.Exe != exe || r.Interpreter != exe {
		t.Errorf("exe %q interpreter %q, want %s for both (paths as the process sees them)", r.Exe, r.Interpreter, exe)
	}
	if r.BuildID != exeID || r.ExeBuildID != exeID {
		t.Errorf("build_id %s exe_build_id %s, readelf says %s", r.BuildID, r.ExeBuildID, exeID)
	}
	if want := p + "/root" + exe; r.ReadFrom != want {
		t.Errorf("read_from = %q, want %q", r.ReadFrom, want)
	}
	libID := testenv.ReadelfBuildID(t, hostLib)
	if r.Libpython != lib || r.LibpythonBuildID != libID {
		t.Errorf("libpython %q (%s), want %s (%s)", r.Libpython, r.LibpythonBuildID, lib, libID)
	}
	if r.Static {
		t.Errorf("static = true, want false: libpython is shared")
	}
	if r.Python.Version != py.Version {
		t.Errorf("python.version = %q, want %q", r.Python.Version, py.Version)
	}

	// Modules: libpython and libc, at their in-root paths, with the
	// build-ids of the host files they were copied from.
	wantMods := map[string]string{lib: libID}
	if libc := libs["libc.so.6"]; libc != "" {
		wantMods[libc] = testenv.ReadelfBuildID(t, libc) // same path in and out of ROOT
	} else {
		t.Errorf("ldd named no libc.so.6")
	}
	for path, id := range wantMods {
		found := false
		for _, m := range r.Modules {
			if m.Path != path {
				continue
			}
			found = true
			if m.BuildID != id || m.Error != "" {
				t.Errorf("module %s: build-id %s (error %q), readelf says %s", path, m.BuildID, m.Error, id)
			}
		}
		if !found {
			t.Errorf("module %s not listed among %v", path, r.Modules)
		}
	}
	for _, m := range r.Modules {
		if strings.HasPrefix(m.Path, root) || m.Error != "" || m.BuildID == "" {
			t.Errorf("module %+v: want an in-root path with a build-id", m)
		}
	}
	for _, m := range r.Modules {
		t.Logf("module %s build-id %s", m.Path, m.BuildID)
	}
	if t.Failed() {
		t.Logf("pyattach resolve --json %d:\n%s", pid, stdout.String())
	}

	// The human output says so too.
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"resolve", strconv.Itoa(pid)}, nil, &stdout, &stderr, testEnv(t)); code != 0 {
		t.Fatalf("pyattach resolve %d: exit %d\n%s", pid, code, stderr.String())
	}
	human := stdout.String()
	t.Logf("pyattach resolve %d:\n%s", pid, human)
	if !regexp.MustCompile(`(?m)^container\s+yes\b.*` + regexp.QuoteMeta(p+"/root")).MatchString(human) {
		t.Errorf("human output has no 'container  yes ... %s/root' line:\n%s", p, human)
	}
	if strings.Contains(human, root) {
		t.Errorf("human output names the host path %s:\n%s", root, human)
	}
}

// containerResult is the part of `resolve --json` the test checks, by
// the documented field names.
type containerResult struct {
	Exe              string `json:"exe"`
	ExeBuildID       string `json:"exe_build_id"`
	Interpreter      string `json:"interpreter"`
	BuildID          string `json:"build_id"`
	ReadFrom         string `json:"read_from"`
	Libpython        string `json:"libpython"`
	LibpythonBuildID string `json:"libpython_build_id"`
	Static           bool   `json:"static"`
	Container        bool   `json:"container"`
	Root             string `json:"root"`
	Python           struct {
		Version string `json:"version"`
	} `json:"python"`
	Modules []struct {
		Path    string `json:"path"`
		BuildID string `json:"build_id"`
		Error   string `json:"error"`
	} `json:"modules"`
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return "(" + err.Error() + ")"
}

// containerPrereqs returns the newest pyenv build of Python 3.11 or
// later with a shared libpython, or skips the test (fails it when
// CI=true) when the machine cannot run it: not root, no unshare,
// chroot, ldd or readelf, unshare refused, no such build. The test
// needs a shared libpython (the module read under /proc/PID/root) and a
// standard library whose start-up imports only top-level modules and
// encodings/ (buildContainerRoot copies no more).
func containerPrereqs(t *testing.T) testenv.Python {
	t.Helper()
	testenv.NeedRoot(t, "unshare --mount and chroot")
	for _, tool := range []string{"unshare", "chroot", "ldd", "readelf"} {
		testenv.Need(t, tool)
	}
	if out, err := exec.Command("unshare", "--mount", "--fork", "true").CombinedOutput(); err != nil {
		testenv.Missing(t, "unshare --mount does not work here: %v %s", err, out)
	}
	p := testenv.Pyenv(t, "3.11+")
	if p.Libpython() == "" {
		testenv.Missing(t, "pyenv's Python %s has no shared libpython (build it with --enable-shared)", p.Version)
	}
	return p
}

// inContainer is where buildContainerRoot places py's interpreter and
// libpython: the paths the process sees (/py/bin/python3.X,
// /py/lib/libpython3.X.so.1.0).
func inContainer(py testenv.Python) (exe, lib string) {
	return "/py/bin/" + filepath.Base(py.Exe), "/py/lib/" + filepath.Base(py.Libpython())
}

// buildContainerRoot lays out ROOT: the pyenv build's interpreter,
// libpython and the part of the standard library that starting app.py
// imports under /py, the shared libraries ldd names at their own paths
// (symbolic links such as a merged /usr's /lib -> usr/lib recreated as
// they are), and /app.py. It returns the libraries by file name, as
// ldd's host paths with links resolved: the paths the process maps.
func buildContainerRoot(t *testing.T, root string, p testenv.Python) map[string]string {
	t.Helper()
	exe, lib := inContainer(p)
	testenv.CopyFile(t, p.Exe, filepath.Join(root, exe), 0)
	testenv.CopyFile(t, p.Libpython(), filepath.Join(root, lib), 0)
	py := filepath.Join(root, "py")
	libdir := "python" + p.Minor()

	// The standard library: the top-level modules and encodings/ (about
	// 9 MB) are all that startup and app.py import; copying all of
	// lib/python3.X (278 MB for 3.12, 135 MB without test/ and site-packages/)
	// would take seconds. An empty lib-dynload/ is the landmark that
	// makes getpath find exec_prefix, so no PYTHONHOME is needed.
	stdlib := filepath.Join(p.Prefix, "lib", libdir)
	for _, pattern := range []string{"*.py", "encodings/*.py"} {
		files, err := filepath.Glob(filepath.Join(stdlib, pattern))
		if err != nil || len(files) == 0 {
			t.Fatalf("no %s in %s: %v", pattern, stdlib, err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(stdlib, f)
			testenv.CopyFile(t, f, filepath.Join(py, "lib", libdir, rel), 0)
		}
	}
	if err := os.MkdirAll(filepath.Join(py, "lib", libdir, "lib-dynload"), 0o755); err != nil {
		t.Fatal(err)
	}

	libs := map[string]string{}
	for _, elf := range []string{p.Exe, p.Libpython()} {
		for _, lib := range lddPaths(t, elf) {
			if strings.HasPrefix(filepath.Base(lib), "libpython") {
				continue // placed under /py above
			}
			real := mirrorPath(t, root, lib, 0)
			libs[filepath.Base(lib)] = real
		}
	}
	if err := os.WriteFile(filepath.Join(root, "app.py"), []byte(containerAppPy), 0o644); err != nil {
		t.Fatal(err)
	}
	return libs
}

// containerAppPy is testenv.WaitingApp: ready, then sleeping in outer -> middle -> inner.
const containerAppPy = testenv.WaitingApp

var lddLine = regexp.MustCompile(`(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)`)

// lddPaths lists the absolute paths of the libraries ldd says elf loads.
func lddPaths(t *testing.T, elf string) []string {
	t.Helper()
	out, err := exec.Command("ldd", elf).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", elf, err)
	}
	var paths []string
	for line := range strings.Lines(string(out)) {
		if m := lddLine.FindStringSubmatch(line); m != nil {
			paths = append(paths, m[1])
		}
	}
	if len(paths) == 0 {
		t.Fatalf("ldd %s named no library:\n%s", elf, out)
	}
	return paths
}

// mirrorPath recreates the host path p under root, component by
// component: directories as directories, symbolic links as the same
// links, the final file as a copy. It returns p with its links resolved.
func mirrorPath(t *testing.T, root, p string, depth int) string {
	t.Helper()
	if depth > 40 {
		t.Fatalf("too many symbolic links mirroring %s", p)
	}
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	cur := "/"
	for i, c := range parts {
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(next)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(root, next)); err != nil && !errors.Is(err, os.ErrExist) {
				t.Fatal(err)
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			return mirrorPath(t, root, filepath.Join(append([]string{target}, parts[i+1:]...)...), depth+1)
		case fi.IsDir():
			if err := os.MkdirAll(filepath.Join(root, next), 0o755); err != nil {
				t.Fatal(err)
			}
		case i == len(parts)-1:
			if _, err := os.Stat(filepath.Join(root, next)); err != nil {
				testenv.CopyFile(t, next, filepath.Join(root, next), 0)
			}
		default:
			t.Fatalf("%s: not a directory", next)
		}
		cur = next
	}
	return cur
}

// startInContainer runs `unshare --mount --fork --kill-child chroot ROOT
// /py/bin/python3.X /app.py` (py as buildContainerRoot placed it) in its own process group, waits for
// "ready", and returns the PID of the Python process: unshare's child.
func startInContainer(t *testing.T, root string, py testenv.Python) int {
	t.Helper()
	// unshare runs chroot with the clean environment below: name it by
	// its full path (it is in /usr/sbin on Debian).
	chroot, err := exec.LookPath("chroot")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := inContainer(py)
	cmd := exec.Command("unshare", "--mount", "--fork", "--kill-child",
		chroot, root, exe, "/app.py")
	// A clean environment: nothing of the host's Python setup leaks in.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=/py/lib", "PYTHONDONTWRITEBYTECODE=1"}
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("app.py in the chroot did not start: stdout %q", line)
	}
	kids, err := childPIDs(cmd.Process.Pid)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of unshare (pid %d): %v %v", cmd.Process.Pid, kids, err)
	}
	return kids[0]
}

// childPIDs returns the children of pid: from /proc/PID/task/PID/children
// when the kernel has it, else by the parent field of every /proc/*/stat.
func childPIDs(pid int) ([]int, error) {
	var kids []int
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil {
		for _, f := range strings.Fields(string(b)) {
			k, err := strconv.Atoi(f)
			if err != nil {
				return nil, fmt.Errorf("children of %d: %q", pid, f)
			}
			kids = append(kids, k)
		}
		return kids, nil
	}
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue // exited
		}
		// "pid (comm) state ppid ...": comm may hold spaces and ')'.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		if k, err := strconv.Atoi(filepath.Base(filepath.Dir(s))); err == nil {
			kids = append(kids, k)
		}
	}
	return kids, nil
}
