package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
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
// paths in /proc/PID/maps are the host paths (ROOT/py/bin/python3.12,
// ROOT/py/lib/libpython3.12.so.1.0), /proc/PID/root is ROOT, and
// /proc/PID/ns/mnt differs from /proc/self/ns/mnt. The namespace is a
// copy of the host's mount tree, so ROOT is still reachable from the
// host's root and the kernel prints the full path; pyattach strips ROOT.
//
// The library path: python3.12's RUNPATH is the absolute host path
// $PYENV_ROOT/versions/3.12.X/lib. The test sets LD_LIBRARY_PATH=/py/lib
// (searched before RUNPATH) instead of placing libpython at that
// absolute path inside ROOT: were libpython at the same path in and out
// of the root, a pyattach that read the host's file instead of the
// process's could not be told from a correct one.
func TestContainerChrootPID(t *testing.T) {
	prefix := containerPrereqs(t)
	version := filepath.Base(prefix)
	hostExe := filepath.Join(prefix, "bin", "python3.12")
	hostLib := filepath.Join(prefix, "lib", "libpython3.12.so.1.0")

	start := time.Now()
	root := filepath.Join(t.TempDir(), "root")
	libs := buildContainerRoot(t, root, prefix)
	t.Logf("built %s in %v", root, time.Since(start).Round(time.Millisecond))

	pid := startInContainer(t, root)
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
			if strings.Contains(line, "libpython") || strings.Contains(line, "python3.12") && strings.Contains(line, "r-xp") {
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
	exeID := containerBuildID(t, hostExe)
	if r.Exe != "/py/bin/python3.12" || r.Interpreter != "/py/bin/python3.12" {
		t.Errorf("exe %q interpreter %q, want /py/bin/python3.12 for both (paths as the process sees them)", r.Exe, r.Interpreter)
	}
	if r.BuildID != exeID || r.ExeBuildID != exeID {
		t.Errorf("build_id %s exe_build_id %s, readelf says %s", r.BuildID, r.ExeBuildID, exeID)
	}
	if want := p + "/root/py/bin/python3.12"; r.ReadFrom != want {
		t.Errorf("read_from = %q, want %q", r.ReadFrom, want)
	}
	libID := containerBuildID(t, hostLib)
	if r.Libpython != "/py/lib/libpython3.12.so.1.0" || r.LibpythonBuildID != libID {
		t.Errorf("libpython %q (%s), want /py/lib/libpython3.12.so.1.0 (%s)", r.Libpython, r.LibpythonBuildID, libID)
	}
	if r.Static {
		t.Errorf("static = true, want false: libpython is shared")
	}
	if r.Python.Version != version {
		t.Errorf("python.version = %q, want %q", r.Python.Version, version)
	}

	// Modules: libpython and libc, at their in-root paths, with the
	// build-ids of the host files they were copied from.
	wantMods := map[string]string{"/py/lib/libpython3.12.so.1.0": libID}
	if libc := libs["libc.so.6"]; libc != "" {
		wantMods[libc] = containerBuildID(t, libc) // same path in and out of ROOT
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

// containerPrereqs returns the pyenv 3.12 prefix, or skips the test
// (fails it when CI=true) when the machine cannot run it: not root, no
// unshare, chroot, ldd or readelf, unshare refused, no pyenv 3.12.
func containerPrereqs(t *testing.T) string {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("required in CI: "+format, args...)
		}
		t.Skipf(format, args...)
	}
	if os.Geteuid() != 0 {
		missing("needs root for unshare --mount and chroot")
	}
	for _, tool := range []string{"unshare", "chroot", "ldd", "readelf"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing("%s not found: %v", tool, err)
		}
	}
	if out, err := exec.Command("unshare", "--mount", "--fork", "true").CombinedOutput(); err != nil {
		missing("unshare --mount does not work here: %v %s", err, out)
	}
	pyenvRoot := os.Getenv("PYENV_ROOT")
	if pyenvRoot == "" {
		home, _ := os.UserHomeDir()
		pyenvRoot = filepath.Join(home, ".pyenv")
	}
	found, _ := filepath.Glob(filepath.Join(pyenvRoot, "versions", "3.12.*"))
	sort.Strings(found)
	for _, prefix := range found {
		if _, err := os.Stat(filepath.Join(prefix, "lib", "libpython3.12.so.1.0")); err == nil {
			return prefix
		}
	}
	missing("no pyenv 3.12 with a shared libpython under %s/versions", pyenvRoot)
	return ""
}

// buildContainerRoot lays out ROOT: the pyenv prefix's python3.12,
// libpython and the part of the standard library that starting app.py
// imports under /py, the shared libraries ldd names at their own paths
// (symbolic links such as a merged /usr's /lib -> usr/lib recreated as
// they are), and /app.py. It returns the libraries by file name, as
// ldd's host paths with links resolved: the paths the process maps.
func buildContainerRoot(t *testing.T, root, prefix string) map[string]string {
	t.Helper()
	py := filepath.Join(root, "py")
	copyFile(t, filepath.Join(prefix, "bin", "python3.12"), filepath.Join(py, "bin", "python3.12"))
	copyFile(t, filepath.Join(prefix, "lib", "libpython3.12.so.1.0"), filepath.Join(py, "lib", "libpython3.12.so.1.0"))

	// The standard library: the top-level modules and encodings/ (about
	// 9 MB) are all that startup and app.py import; copying all of
	// lib/python3.12 (278 MB, 135 MB without test/ and site-packages/)
	// would take seconds. An empty lib-dynload/ is the landmark that
	// makes getpath find exec_prefix, so no PYTHONHOME is needed.
	stdlib := filepath.Join(prefix, "lib", "python3.12")
	for _, pattern := range []string{"*.py", "encodings/*.py"} {
		files, err := filepath.Glob(filepath.Join(stdlib, pattern))
		if err != nil || len(files) == 0 {
			t.Fatalf("no %s in %s: %v", pattern, stdlib, err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(stdlib, f)
			copyFile(t, f, filepath.Join(py, "lib", "python3.12", rel))
		}
	}
	if err := os.MkdirAll(filepath.Join(py, "lib", "python3.12", "lib-dynload"), 0o755); err != nil {
		t.Fatal(err)
	}

	libs := map[string]string{}
	for _, elf := range []string{filepath.Join(prefix, "bin", "python3.12"), filepath.Join(prefix, "lib", "libpython3.12.so.1.0")} {
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

// containerAppPy is appPy: ready, then sleeping in outer -> middle -> inner.
const containerAppPy = appPy

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
				copyFile(t, next, filepath.Join(root, next))
			}
		default:
			t.Fatalf("%s: not a directory", next)
		}
		cur = next
	}
	return cur
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// startInContainer runs `unshare --mount --fork --kill-child chroot ROOT
// /py/bin/python3.12 /app.py` in its own process group, waits for
// "ready", and returns the PID of the Python process: unshare's child.
func startInContainer(t *testing.T, root string) int {
	t.Helper()
	// unshare runs chroot with the clean environment below: name it by
	// its full path (it is in /usr/sbin on Debian).
	chroot, err := exec.LookPath("chroot")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--mount", "--fork", "--kill-child",
		chroot, root, "/py/bin/python3.12", "/app.py")
	// A clean environment: nothing of the host's Python setup leaks in.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=/py/lib", "PYTHONDONTWRITEBYTECODE=1"}
	if line := startReady(t, cmd, 8*time.Second); line != "ready\n" {
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

var containerBuildIDLine = regexp.MustCompile(`Build ID: ([0-9a-f]+)`)

// containerBuildID is the build-id of a host file as readelf prints it:
// the oracle.
func containerBuildID(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("readelf", "-n", path).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", path, err)
	}
	m := containerBuildIDLine.FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s: readelf shows no build-id", path)
	}
	return string(m[1])
}
