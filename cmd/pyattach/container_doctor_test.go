package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/detect/srcscan"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestDoctorDebuginfoPivotRoot: doctor and debuginfo on Debian's
// interpreter in a pivot_root container (/proc/PID/root reads as "/")
// read the container's files. debuginfo --json lists the container's
// debug directories it searched, as the process sees them and where
// they were read from, and finds the interpreter's debug file there;
// doctor's debug check names that file and its sources checks come
// from that file's DWARF (the container's CPython build tree, a
// version this machine lacks). With the container's debug files hidden
// (an overlay whiteout), doctor's fix installs the container's -dbg
// package inside the container, as its dpkg database names it, never
// a package of this machine.
func TestDoctorDebuginfoPivotRoot(t *testing.T) {
	testenv.Need(t, "unshare")
	testenv.Need(t, "pivot_root")
	r := findPivotRoot(t)
	base := filepath.Base(r.exe) // python3.X
	pid := startPivoted(t, r.root, t.TempDir(), r.exe)
	proot := "/proc/" + strconv.Itoa(pid) + "/root"

	di, out := mainJSON[debugsearch.Info](t, "--offline", "debuginfo", "--json", strconv.Itoa(pid))
	if !strings.Contains(out, `"container_debug_dirs"`) {
		t.Errorf("debuginfo --json has no container_debug_dirs field:\n%s", out)
	}
	exeDebug := checkContainerDebug(t, di, proot, r.exe)

	checks := runDoctor(t, nil, strconv.Itoa(pid)).Checks
	byID := func(id string) []Check {
		var out []Check
		for _, c := range checks {
			if c.ID == id {
				out = append(out, c)
			}
		}
		return out
	}
	if d := byID("debug." + base); len(d) != 1 || !strings.Contains(d[0].Summary, exeDebug) {
		t.Errorf("doctor's debug.%s check %+v does not name the container's debug file %s", base, d, exeDebug)
	}
	// Debian's build tree of this version: /build/reproducible-path/python3.X-3.X.Y.
	tree := false
	for _, c := range byID("sources") {
		tree = tree || strings.Contains(c.Summary, "/"+base+"-")
	}
	if !tree {
		t.Errorf("no sources check names the container's CPython build tree (.../%s-VERSION): the DWARF read was not the container's", base)
	}

	// The same root with its debug files and gdb extensions hidden by
	// whiteouts.
	upper := t.TempDir()
	for _, hide := range []string{"usr/lib/debug/.build-id", "usr/share/gdb/auto-load"} {
		wo := filepath.Join(upper, hide)
		if err := os.MkdirAll(filepath.Dir(wo), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mknod(wo, syscall.S_IFCHR|0o000, 0); err != nil {
			t.Fatalf("whiteout %s: %v", wo, err)
		}
	}
	pid = startPivoted(t, r.root, upper, r.exe)
	proot = "/proc/" + strconv.Itoa(pid) + "/root"
	checks = runDoctor(t, nil, strconv.Itoa(pid)).Checks
	d := byID("debug." + base)
	if len(d) != 1 || d[0].Status == statusOK {
		t.Fatalf("doctor's debug.%s check %+v: want the missing debug information reported", base, d)
	}
	if want := "in the container"; !strings.HasPrefix(d[0].Fix, want) || !strings.Contains(d[0].Fix, "apt-get install "+base+"-dbg") {
		t.Errorf("debug.%s fix %q: want %q ... apt-get install %s-dbg", base, d[0].Fix, want, base)
	}
	if strings.Contains(d[0].Fix, "sudo ") {
		t.Errorf("debug.%s fix %q installs on this machine", base, d[0].Fix)
	}
	e := byID("extension")
	if len(e) != 1 || e[0].Status == statusOK {
		t.Fatalf("doctor's extension check %+v: want the missing extension reported", e)
	}
	if want := "pyattach fetch-extension " + strconv.Itoa(pid); !strings.HasPrefix(e[0].Fix, want) || strings.Contains(e[0].Fix, "apt-get") {
		t.Errorf("extension fix %q: want %q (the container's own package would not be run)", e[0].Fix, want)
	}
	looked := strings.Join(e[0].Details, "\n")
	if strings.Contains(looked, "the config file's extensions") {
		t.Errorf("extension details name config file extensions, none is configured:\n%s", looked)
	}
	if !strings.Contains(looked, proot+"/usr/share/gdb/auto-load"+r.exe+"-gdb.py") {
		t.Errorf("extension details do not name the container's auto-load file %s:\n%s", proot+"/usr/share/gdb/auto-load"+r.exe+"-gdb.py", looked)
	}
}

// TestDoctorSourcesInChroot: a chroot container (a pyenv python3.X
// copied into a root) whose root also holds two of libpython's source
// files at their recorded paths (the build tree pyenv deleted here).
// doctor's sources check reads the container's libpython and says the
// files are in the container, with the --source that hands them to gdb;
// following it, srcmap maps the group onto the container's tree.
func TestDoctorSourcesInChroot(t *testing.T) {
	py := containerPrereqs(t)
	root := filepath.Join(t.TempDir(), "root")
	buildContainerRoot(t, root, py)
	sr, err := srcscan.ScanFile(py.Libpython())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py.Exe, "-c", "import sysconfig; print(sysconfig.get_config_var('abs_builddir'))").Output()
	tree := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(tree) {
		t.Fatalf("abs_builddir: %q %v", out, err)
	}
	var placed []string
	for _, f := range sr.Files {
		if strings.HasPrefix(f, tree+"/Python/") && strings.HasSuffix(f, ".c") && !fileExists(f) && len(placed) < 2 {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, f), []byte("/* placed by the test */\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			placed = append(placed, f)
		}
	}
	if len(placed) != 2 {
		t.Fatalf("libpython names no two missing files under %s/Python: %v", tree, placed)
	}
	pid := startInContainer(t, root, py)
	proot := "/proc/" + strconv.Itoa(pid) + "/root"

	var hint string
	for _, c := range runDoctor(t, nil, strconv.Itoa(pid)).Checks {
		if c.ID == "sources" && strings.Contains(c.Summary, " under "+tree) {
			hint = c.Fix
		}
	}
	want := "2 of them are in the container: pyattach --source " + proot + tree
	if !strings.HasPrefix(hint, want) {
		t.Fatalf("sources fix for %s: %q, want %q", tree, hint, want)
	}
	m, mapOut := mainJSON[SrcmapResult](t, "--offline", "--source", proot+tree, "srcmap", "--json", strconv.Itoa(pid))
	ok := false
	for _, r := range m.Rules {
		ok = ok || r.To == proot+tree && r.Resolved == 2 && strings.HasPrefix(tree, r.From)
	}
	if !ok {
		t.Errorf("srcmap with the hint's --source: no rule onto %s resolving 2 files:\n%s", proot+tree, mapOut)
	}
}

// TestDoctorDebuginfoPodman: the same facts with a real engine: podman
// (runc) runs Debian's interpreter from an image of the root. debuginfo
// --json lists the container's /usr/lib/debug, read through
// /proc/PID/root, and finds the interpreter's debug file there; doctor
// names that file, and says it refused the container's own extension
// (a file the container wrote is never debugger code: issue 18).
func TestDoctorDebuginfoPodman(t *testing.T) {
	podman := testenv.Need(t, "podman")
	testenv.Need(t, "runc")
	r := findPivotRoot(t)
	image := podmanImage(t, podman, r.root)
	app := t.TempDir()
	if err := os.WriteFile(filepath.Join(app, "app.py"), []byte(testenv.WaitingApp), 0o644); err != nil {
		t.Fatal(err)
	}
	pid := podmanRun(t, podman, "doctor-json", "-v", app+":/mnt:ro", image, r.exe, "/mnt/app.py")
	proot := "/proc/" + strconv.Itoa(pid) + "/root"

	di, _ := mainJSON[debugsearch.Info](t, "--offline", "debuginfo", "--json", strconv.Itoa(pid))
	exeDebug := checkContainerDebug(t, di, proot, r.exe)
	found := map[string]bool{}
	for _, c := range runDoctor(t, nil, strconv.Itoa(pid)).Checks {
		switch {
		case c.ID == "debug."+filepath.Base(r.exe) && strings.Contains(c.Summary, exeDebug):
			found["debug"] = true
		case c.ID == "target.foreign.refused" && strings.Contains(c.Summary, proot+r.ext+" is not run"):
			found["refused"] = true
		case c.ID == "extension" && c.Status == statusOK:
			t.Errorf("doctor found an extension for the container's 3.X, which this machine lacks: %+v", c)
		}
	}
	if !found["debug"] || !found["refused"] {
		t.Errorf("doctor on the podman process: debug check names %s: %v; the container's extension %s reported refused: %v", exeDebug, found["debug"], proot+r.ext, found["refused"])
	}
}

// checkContainerDebug: debuginfo searched the container's /usr/lib/debug
// (read under proot) and found the program exe's debug file there, whose
// path it returns.
func checkContainerDebug(t *testing.T, di *debugsearch.Info, proot, exe string) string {
	t.Helper()
	searched := false
	for _, d := range di.ContainerDebugDirs {
		searched = searched || d.Dir == "/usr/lib/debug" && d.ReadFrom == proot+"/usr/lib/debug"
	}
	if !searched {
		t.Errorf("container_debug_dirs = %+v, want /usr/lib/debug read from %s/usr/lib/debug", di.ContainerDebugDirs, proot)
	}
	var exeDebug string
	for _, m := range di.Modules {
		if m.Path == exe {
			exeDebug = m.Debug.Path
		}
	}
	if !strings.HasPrefix(exeDebug, proot+"/usr/lib/debug/.build-id/") {
		t.Errorf("debug file of %s: %q, want the container's, under %s/usr/lib/debug/.build-id/", exe, exeDebug, proot)
	}
	return exeDebug
}
