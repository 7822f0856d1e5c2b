package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// pivotRoot is a Debian root that scripts/make-roots.sh made, with one
// of Debian's interpreters and its gdb extension.
type pivotRoot struct {
	root, exe, ext string // exe and ext as the root's processes see them
}

// findPivotRoot picks the first root in the versions file whose
// interpreter is one of Debian's own (in /usr/bin) with its extension.
func findPivotRoot(t *testing.T) pivotRoot {
	t.Helper()
	return pivotRoots(t, "", func(pivotRoot) bool { return true })[0]
}

// pivotRoots are the roots findPivotRoot considers that ok accepts, in
// the versions file's order (at least one); want says what ok asks for,
// in the failure.
func pivotRoots(t *testing.T, want string, ok func(pivotRoot) bool) []pivotRoot {
	t.Helper()
	testenv.NeedRoot(t, "unshare, overlay mounts and pivot_root")
	var roots []pivotRoot
	for _, tr := range testenv.Roots(t) {
		if strings.HasSuffix(tr.Minor, "t") {
			continue
		}
		r := pivotRoot{root: tr.Dir, exe: tr.Exe(), ext: "/usr/share/gdb/auto-load" + tr.Exe() + "-gdb.py"}
		_, e1 := os.Stat(filepath.Join(r.root, "pyattach-stamp"))
		_, e2 := os.Stat(filepath.Join(r.root, r.exe))
		_, e3 := os.Stat(filepath.Join(r.root, r.ext))
		if e1 == nil && e2 == nil && e3 == nil && ok(r) {
			roots = append(roots, r)
		}
	}
	if len(roots) == 0 {
		testenv.Missing(t, "no complete root with Debian's python and its gdb extension%s in %s", want, testenv.RootsDir())
	}
	return roots
}

// hostTwin is an interpreter path this machine has too (a regular file
// such as Debian's /usr/bin/python3.11), which the root lacks: a
// container's interpreter at a path the host also uses, with other
// contents, is what gdb's realpath of /proc/PID/root paths gets wrong.
func hostTwin(t *testing.T, r pivotRoot) string {
	t.Helper()
	found, _ := filepath.Glob("/usr/bin/python3.[0-9]*")
	for _, p := range found {
		if !regexp.MustCompile(`/python3\.\d+$`).MatchString(p) {
			continue
		}
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(r.root, p)); err == nil {
			continue
		}
		return p
	}
	testenv.Missing(t, "no /usr/bin/python3.N on this machine that the root lacks")
	return ""
}

// writeThreadedApp writes dir/app.py: testenv.WaitingApp with a second
// thread, started on its first line so that the frames keep their line
// numbers.
func writeThreadedApp(t *testing.T, dir string) {
	t.Helper()
	code := strings.Replace(testenv.WaitingApp, "import sys, time\n",
		"import sys, time, threading; threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n", 1)
	if code == testenv.WaitingApp {
		t.Fatal("testenv.WaitingApp no longer starts with import sys, time")
	}
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startPivoted runs app.py with the root's interpreter as a container
// engine does: new mount and PID namespaces, an overlay of the root
// (upper holds extra files; the cached root is never written),
// pivot_root into it, so that /proc/PID/root reads as "/". exe is the
// interpreter's path inside. It returns the interpreter's PID.
func startPivoted(t *testing.T, lower, upper, exe string) int {
	t.Helper()
	return startPivotedApp(t, lower, upper, exe, func(dir string) { writeThreadedApp(t, dir) })
}

// startPivotedApp is startPivoted with the app that writeApp writes
// into dir (seen as /mnt/app.py inside); it must print "ready".
func startPivotedApp(t *testing.T, lower, upper, exe string, writeApp func(dir string)) int {
	t.Helper()
	pid, _ := startPivotedAppStop(t, lower, upper, exe, writeApp)
	return pid
}

// startPivotedAppStop is startPivotedApp that also returns the function
// that kills the container (it runs when the test ends too).
func startPivotedAppStop(t *testing.T, lower, upper, exe string, writeApp func(dir string)) (int, func()) {
	t.Helper()
	d := t.TempDir()
	for _, sub := range []string{"work", "merged", "app"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeApp(filepath.Join(d, "app"))
	// After pivot_root . . the old root sits on top of the new one:
	// mount proc (the root's umount reads mountinfo) and detach it.
	script := `mount -t overlay overlay -o lowerdir="$1",upperdir="$2",workdir="$3/work" "$3/merged" &&
mount --bind "$3/app" "$3/merged/mnt" && cd "$3/merged" && pivot_root . . &&
mount -t proc proc /proc && umount -l . && cd /mnt && exec "$4" /mnt/app.py`
	cmd := exec.Command("unshare", "--pid", "--mount", "--fork", "--kill-child", "sh", "-c", script, "sh", lower, upper, d, exe)
	cmd.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "PYTHONDONTWRITEBYTECODE=1"}
	line, stop, err := testenv.StartReady(cmd)
	if stop != nil {
		t.Cleanup(stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	if line != "ready\n" {
		t.Fatalf("app.py after pivot_root did not start: stdout %q", line)
	}
	kids, err := childPIDs(cmd.Process.Pid)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of unshare (pid %d): %v %v", cmd.Process.Pid, kids, err)
	}
	return kids[0], stop
}

var objfileLine = regexp.MustCompile(`(?m)^OBJ (\S+) ([0-9a-f]+)$`)

// TestGDBPyBtPivotRoot: Debian's interpreter in a pivot_root container
// (as podman and docker make them), at a path this machine also has
// with other contents. pyattach gdb prints py-bt with app.py's frames
// and lines, both threads (never through the container's libthread_db),
// and gdb reads the container's program and libraries (their
// build-ids are those of the container's files), never the host's:
// handing gdb /proc/PID/root paths gave "Build ID mismatch" and
// "Unable to locate python frame".
func TestGDBPyBtPivotRoot(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "unshare")
	testenv.Need(t, "pivot_root")
	r := findPivotRoot(t)
	twin := hostTwin(t, r)
	upper := t.TempDir()
	testenv.CopyFile(t, filepath.Join(r.root, r.exe), filepath.Join(upper, twin), 0)
	os.Chmod(filepath.Join(upper, twin), 0o755)
	twinExt := "/usr/share/gdb/auto-load" + twin + "-gdb.py"
	testenv.CopyFile(t, filepath.Join(r.root, r.ext), filepath.Join(upper, twinExt), 0)
	pid := startPivoted(t, r.root, upper, twin)
	if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/root"); err != nil || l != "/" {
		t.Fatalf("/proc/%d/root reads %q (%v), not / as under pivot_root", pid, l, err)
	}

	checkContainerGDB(t, "pivot_root", pid)
}

// checkContainerGDB runs pyattach gdb -p PID on a python in a container
// running app.py with a second thread: py-bt prints app.py's frames and
// lines, both threads show with their names (without the container's
// libthread_db), and every file gdb loaded is the container's (its
// build-id is that of the file the process sees, read through
// /proc/PID/root, which the kernel resolves in the process's root).
func checkContainerGDB(t *testing.T, what string, pid int) {
	t.Helper()
	out := pyattachPyBt(t, what+": pyattach gdb", "", nil, append(gdbPyBt(pid), "-ex", "info threads",
		"-ex", `python [print("OBJ %s %s" % (o.filename, o.build_id)) for o in gdb.objfiles() if o.build_id and o.filename.startswith(("/", "target:"))]`)...)
	if strings.Contains(out, "Build ID mismatch") {
		t.Errorf("gdb read a host file for the container's:\n%s", out)
	}
	// Both threads, by LWP (by pthread id too when this machine's own
	// libthread_db fits the container's glibc): never the container's
	// libthread_db, which gdb would run as root.
	if n := len(regexp.MustCompile(`(?m)^[* ] +\d+ +(Thread 0x[0-9a-f]+ \()?LWP \d+\)? "`).FindAllString(out, -1)); n != 2 {
		t.Errorf("info threads shows %d named threads, want 2:\n%s", n, out)
	}
	if m := regexp.MustCompile(`(?m)^.*libthread_db library "(/proc/|target:).*$`).FindString(out); m != "" {
		t.Errorf("gdb loaded the container's libthread_db: %s", m)
	}
	// Every object gdb loaded is the container's file of that name.
	objs := objfileLine.FindAllStringSubmatch(out, -1)
	libc := false
	for _, m := range objs {
		name := strings.TrimPrefix(m[1], "target:")
		name = strings.TrimPrefix(name, "/proc/"+strconv.Itoa(pid)+"/root")
		if strings.Contains(name, "/.build-id/") {
			continue // a debug file: gdb checked its build-id itself
		}
		want, err := elfinfo.ReadBuildIDFile("/proc/" + strconv.Itoa(pid) + "/root" + name)
		if err != nil {
			t.Errorf("gdb loaded %s, which the container lacks: %v", m[1], err)
			continue
		}
		if want != m[2] {
			t.Errorf("gdb loaded %s with build-id %s, the container's file has %s", m[1], m[2], want)
		}
		libc = libc || strings.Contains(name, "/libc.so")
	}
	if len(objs) == 0 || !libc {
		t.Errorf("gdb listed no libc among its objects:\n%s", out)
	}
}

// podmanImage imports root as a podman image once per root (the tag
// names a hash of the root's pyattach-stamp, so a remade root gets a new
// image): about 12 s for the 520 MB trixie root.
func podmanImage(t *testing.T, podman, root string) string {
	t.Helper()
	stamp, err := os.ReadFile(filepath.Join(root, "pyattach-stamp"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append([]byte(root+"\n"), stamp...))
	image := "localhost/pyattach-" + filepath.Base(root) + ":" + hex.EncodeToString(sum[:6])
	if exec.Command(podman, "image", "exists", image).Run() == nil {
		return image
	}
	tar := exec.Command("tar", "-C", root, "-c", "--exclude=./proc/*", "--exclude=./sys/*", "--exclude=./dev/*", ".")
	imp := exec.Command(podman, "import", "-", image)
	pipe, err := tar.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	imp.Stdin = pipe
	if err := tar.Start(); err != nil {
		t.Fatal(err)
	}
	out, err := imp.CombinedOutput()
	if werr := tar.Wait(); err != nil || werr != nil {
		t.Fatalf("podman import of %s: %v %v\n%s", root, err, werr, out)
	}
	return image
}

// TestGDBPyBtPodman: the same as TestGDBPyBtPivotRoot with a real
// engine: podman (runc) runs the root's interpreter, imported as an
// image, mounted at a path this machine also has.
func TestGDBPyBtPodman(t *testing.T) {
	testenv.Need(t, "gdb")
	podman := testenv.Need(t, "podman")
	testenv.Need(t, "runc")
	r := findPivotRoot(t)
	twin := hostTwin(t, r)
	image := podmanImage(t, podman, r.root)
	app := t.TempDir()
	writeThreadedApp(t, app)
	pid := podmanRun(t, podman, "gdb", "-v", app+":/mnt:ro",
		"-v", filepath.Join(r.root, r.exe)+":"+twin+":ro",
		"-v", filepath.Join(r.root, r.ext)+":/usr/share/gdb/auto-load"+twin+"-gdb.py:ro",
		image, twin, "/mnt/app.py")
	checkContainerGDB(t, "podman", pid)

	// doctor never runs the container's extension: it says it
	// refused it, and the walker answers py-bt, so nothing fails. The
	// interpreter at its own path here: the twin above is named for
	// another version.
	pid = podmanRun(t, podman, "doctor", "-v", app+":/mnt:ro", image, r.exe, "/mnt/app.py")
	out, _ := exec.Command(pyattachBin(t), "doctor", strconv.Itoa(pid)).CombinedOutput()
	refused := "/proc/" + strconv.Itoa(pid) + "/root" + r.ext + " is not run"
	if !strings.Contains(string(out), refused) || regexp.MustCompile(`(?m)^FAIL +extension|^\S+ +extension\.runs`).Match(out) {
		t.Errorf("doctor on the podman process: want %q and no extension FAIL or extension.runs:\n%s", refused, out)
	}
}

// podmanRun starts a container (removed when the test ends) that runs
// app.py, and returns the interpreter's PID as this machine sees it.
func podmanRun(t *testing.T, podman, tag string, args ...string) int {
	t.Helper()
	name := "pyattach-test-" + strconv.Itoa(os.Getpid()) + "-" + tag
	// These runtime flags are what podman needs in CI's sandboxes (crun
	// fails there on rlimits and cgroups).
	run := append([]string{"run", "-d", "--name", name, "--runtime", "runc",
		"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}, args...)
	out, err := exec.Command(podman, run...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman run: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(podman, "rm", "-f", "-t", "0", name).Run() })
	for i := 0; ; i++ {
		logs, _ := exec.Command(podman, "logs", name).CombinedOutput()
		if strings.Contains(string(logs), "ready\n") {
			break
		}
		if i == 600 {
			t.Fatalf("app.py in podman printed no ready line:\n%s", logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, err = exec.Command(podman, "inspect", "-f", "{{.State.Pid}}", name).Output()
	if err != nil {
		t.Fatalf("podman inspect: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 0 {
		t.Fatalf("podman inspect: pid %q", out)
	}
	return pid
}

// hostLacks lists the roots whose interpreter's path this machine lacks
// (Debian trixie's python3.13, sid's python3.14 and 3.15 on a bookworm
// host): lldb-server 14 reads that path here for the process's
// architecture and crashed ("error: attach failed: lost connection").
func hostLacks(t *testing.T) []pivotRoot {
	t.Helper()
	return pivotRoots(t, " at a path this machine lacks", func(r pivotRoot) bool {
		_, err := os.Lstat(r.exe)
		return err != nil
	})
}

// TestLLDBPyBtPivotRoot: pyattach lldb on Debian's interpreter in a
// pivot_root container, at a path this machine lacks. lldb attaches
// (lldb-server in a private mount namespace that shows the container's
// executable at its path), loads the container's program and libraries
// (read under /proc/PID/root: their build-ids are the container's
// files'), and the walker's py-bt prints app.py's frames and lines;
// also at a path this machine has (/usr/bin/python3.11).
func TestLLDBPyBtPivotRoot(t *testing.T) {
	testenv.Need(t, "lldb")
	testenv.Need(t, "unshare")
	testenv.Need(t, "pivot_root")
	for _, r := range hostLacks(t) {
		t.Run(filepath.Base(r.exe), func(t *testing.T) {
			pid := startPivoted(t, r.root, t.TempDir(), r.exe)
			if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/root"); err != nil || l != "/" {
				t.Fatalf("/proc/%d/root reads %q (%v), not / as under pivot_root", pid, l, err)
			}
			checkContainerLLDB(t, "pivot_root", pid, r.exe)
		})
	}
	// At a path this machine also has, with other contents: lldb must
	// still read the container's file, never this machine's.
	t.Run("host-twin", func(t *testing.T) {
		r := findPivotRoot(t)
		twin := hostTwin(t, r)
		upper := t.TempDir()
		testenv.CopyFile(t, filepath.Join(r.root, r.exe), filepath.Join(upper, twin), 0)
		os.Chmod(filepath.Join(upper, twin), 0o755)
		pid := startPivoted(t, r.root, upper, twin)
		checkContainerLLDB(t, "pivot_root at a host path", pid, twin)
	})
}

// TestLLDBPyBtPodman: the same as TestLLDBPyBtPivotRoot with podman
// (runc) running the newest root's interpreter (sid's) at its own path,
// which this machine lacks.
func TestLLDBPyBtPodman(t *testing.T) {
	testenv.Need(t, "lldb")
	podman := testenv.Need(t, "podman")
	testenv.Need(t, "runc")
	roots := hostLacks(t)
	r := roots[len(roots)-1]
	image := podmanImage(t, podman, r.root)
	app := t.TempDir()
	writeThreadedApp(t, app)
	pid := podmanRun(t, podman, "lldb", "-v", app+":/mnt:ro", image, r.exe, "/mnt/app.py")
	checkContainerLLDB(t, "podman", pid, r.exe)
}

// checkContainerLLDB runs pyattach lldb -p PID on a python in a
// container (its executable exe as it sees it) running app.py with a
// second thread: py-bt prints app.py's frames and lines, lldb shows both
// threads, and every file lldb loaded is the container's: named under
// /proc/PID/root, with the build-id of the file the process sees there,
// the executable and libc among them.
func checkContainerLLDB(t *testing.T, what string, pid int, exe string) {
	t.Helper()
	root := "/proc/" + strconv.Itoa(pid) + "/root"
	out := mustRunIn(t, what+": pyattach lldb", "", nil, pyattachBin(t), "lldb", "-b", "-p", strconv.Itoa(pid),
		"-o", "py-bt", "-o", "thread list",
		"-o", `script [print("OBJ %s %s" % (m.file.fullpath, m.GetUUIDString().replace("-", "").lower())) for m in lldb.target.modules]`,
		"-o", `script print("SYM %s" % lldb.target.GetModuleAtIndex(0).GetSymbolFileSpec().fullpath)`)
	if strings.Contains(out, "attach failed") {
		t.Fatalf("%s: lldb did not attach:\n%s", what, out)
	}
	checkPyBt(t, what, out)
	if n := len(regexp.MustCompile(`(?m)^[* ] thread #\d+: tid = \d+`).FindAllString(out, -1)); n != 2 {
		t.Errorf("%s: thread list shows %d threads, want 2:\n%s", what, n, out)
	}
	objs := objfileLine.FindAllStringSubmatch(out, -1)
	var sawExe, sawLibc bool
	for _, m := range objs {
		if !strings.HasPrefix(m[1], "/") {
			continue // the vDSO, read from memory
		}
		name, ok := strings.CutPrefix(m[1], root+"/")
		if !ok {
			t.Errorf("%s: lldb loaded %s, a file of this machine, not under %s", what, m[1], root)
			continue
		}
		want, err := elfinfo.ReadBuildIDFile(m[1])
		if err != nil {
			t.Errorf("%s: lldb loaded %s, which the container lacks: %v", what, m[1], err)
			continue
		}
		if want != m[2] {
			t.Errorf("%s: lldb loaded %s with build-id %s, the container's file has %s", what, m[1], m[2], want)
		}
		sawExe = sawExe || "/"+name == exe
		sawLibc = sawLibc || strings.Contains(name, "/libc.so")
	}
	if !sawExe || !sawLibc {
		t.Errorf("%s: lldb's modules lack the container's %s (%v) or libc (%v):\n%s", what, exe, sawExe, sawLibc, out)
	}
	// The program's debug file, when the container has one, is the
	// container's (found in its own /usr/lib/debug).
	id, err := elfinfo.ReadBuildIDFile(root + exe)
	if err != nil {
		t.Fatal(err)
	}
	debug := root + "/usr/lib/debug/.build-id/" + id[:2] + "/" + id[2:] + ".debug"
	if _, err := os.Stat(debug); err == nil && !strings.Contains(out, "\nSYM "+debug+"\n") {
		t.Errorf("%s: lldb did not read the program's debug file %s:\n%s", what, debug, out)
	}
}
