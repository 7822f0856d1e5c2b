package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/testenv"
)

// lldbNativeFileLine is the C function under time.sleep in lldb's bt,
// named from the bundled debug file: lldb unwinds to it only through the
// bundled libc, not this machine's file of the same name.
var lldbNativeFileLine = regexp.MustCompile(`(?m)^ +frame #\d+: 0x[0-9a-f]+ python3\.13\x60(pysleep|time_sleep)\S* at timemodule\.c:\d+`)

// nativeFileLine is a C frame of the interpreter's sleep, named and
// with its file and line: read from the interpreter's debug file, which
// only the bundle holds on this machine.
var nativeFileLine = regexp.MustCompile(`(?m)^#\d+ +(0x[0-9a-f]+ in )?(pysleep|time_sleep) \(.*\) at \.\./Modules/timemodule\.c:\d+$`)

// TestBundleTrixie: Python 3.13 of Debian trixie, with python3.13-dbg,
// in a copy of the trixie root (this machine has no
// /usr/bin/python3.13). One process runs chrooted in its own mount and
// PID namespaces and is bundled by PID (it keeps running); another runs
// under pivot_root, as container engines run it, and is bundled from a
// core with --root. Then the processes end and the copied root is
// deleted, and each bundle is opened on this machine: pyattach dump
// shows the Python frames with their source lines, pyattach gdb -c
// BUNDLE shows native frames with function, file and line from the
// bundled debug file and py-bt the Python frames, and lldb the Python
// frames.
func TestBundleTrixie(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	testenv.Need(t, "unshare")
	chroot := testenv.Need(t, "chroot")
	testenv.Need(t, "pivot_root")
	gcore := testenv.Need(t, "gcore")
	testenv.NeedRoot(t, "unshare, chroot, overlay mounts and pivot_root")
	if _, err := os.Stat("/usr/bin/python3.13"); err == nil {
		testenv.Missing(t, "this machine has /usr/bin/python3.13: a bundle's files could not be told from its own")
	}
	var root testenv.Root
	for _, r := range testenv.Roots(t) {
		if r.Minor == "3.13" {
			root = r
		}
	}
	if root.Dir == "" {
		testenv.Missing(t, "no root with Python 3.13 in %s", testenv.RootsDir())
	}
	copyDir := filepath.Join(t.TempDir(), "trixie")
	if out, err := exec.Command("cp", "-a", root.Dir, copyDir).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", root.Dir, err, out)
	}
	t.Cleanup(func() { os.RemoveAll(copyDir) })
	testenv.WriteFile(t, filepath.Join(copyDir, "srv", "app.py"), []byte(testenv.WaitingApp), 0o644)
	bin := pyattachBin(t)
	env := testEnv(t)
	out := t.TempDir()

	// Chrooted, in its own mount and PID namespaces; bundled by PID.
	cmd := exec.Command("unshare", "--pid", "--mount", "--fork", "--kill-child", chroot, copyDir, "/usr/bin/python3.13", "/srv/app.py")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"}
	line, stopChroot, err := testenv.StartReady(cmd)
	if stopChroot != nil {
		t.Cleanup(stopChroot)
	}
	if err != nil || line != "ready\n" {
		t.Fatalf("chrooted app.py did not start: %q %v", line, err)
	}
	kids, err := childPIDs(cmd.Process.Pid)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of unshare: %v %v", kids, err)
	}
	pid := kids[0]
	byPID := filepath.Join(out, "chroot.pyattach")
	_, stderr := pyattachOK(t, "bundle PID", bin, env, "bundle", strconv.Itoa(pid), "-o", byPID)
	if !regexp.MustCompile(`process \d+ was stopped for \d`).MatchString(stderr) {
		t.Errorf("bundle PID does not say how long the process was stopped:\n%s", stderr)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("process %d is gone after bundle: %v", pid, err)
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil || regexp.MustCompile(`\) [tT] `).Match(st) {
		t.Fatalf("process %d is left stopped after bundle: %s %v", pid, st, err)
	}

	// Under pivot_root; bundled from its core, with its root.
	upper := t.TempDir()
	ppid, stopPivot := startPivotedAppStop(t, copyDir, upper, "/usr/bin/python3.13", func(dir string) { writeThreadedApp(t, dir) })
	core := filepath.Join(out, "core.pivot")
	if o, err := exec.Command(gcore, "-o", core, strconv.Itoa(ppid)).CombinedOutput(); err != nil {
		t.Fatalf("gcore %d: %v\n%s", ppid, err, o)
	}
	core += "." + strconv.Itoa(ppid)
	fromCore := filepath.Join(out, "pivot.pyattach")
	pyattachOK(t, "bundle CORE --root", bin, env, "bundle", "--root", "/proc/"+strconv.Itoa(ppid)+"/root", core, "-o", fromCore)

	// Nothing of the root is left: the processes end, the copy goes.
	stopChroot()
	stopPivot()
	if err := os.RemoveAll(copyDir); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ what, bundle, app string }{{"chroot, by PID", byPID, "/srv/app.py"}, {"pivot_root, from a core", fromCore, "/mnt/app.py"}} {
		t.Run(c.what, func(t *testing.T) {
			list, _ := pyattachOK(t, "bundle --list", bin, env, "bundle", "--list", c.bundle)
			for _, want := range []string{"python-source", "root" + c.app, "debug/.build-id/", "gdb-extension", "python     3.13"} {
				if !strings.Contains(list, want) {
					t.Errorf("bundle --list lacks %q:\n%s", want, list)
				}
			}
			dump, _ := pyattachOK(t, "dump BUNDLE", bin, env, "dump", c.bundle)
			for _, want := range []string{`File "` + c.app + `", line 5, in inner`, "\n    time.sleep(600)\n", `File "` + c.app + `", line 9, in outer`, "\n    middle()\n"} {
				if !strings.Contains(dump, want) {
					t.Errorf("dump BUNDLE lacks %q:\n%s", want, dump)
				}
			}
			gdb, _ := pyattachOK(t, "gdb -c BUNDLE", bin, env, "gdb", "-nx", "-batch", "-c", c.bundle, "-ex", "bt", "-ex", "py-bt")
			if !nativeFileLine.MatchString(gdb) {
				t.Errorf("gdb bt shows no named C frame with file and line from the bundled debug file:\n%s", gdb)
			}
			checkPyBt(t, "gdb -c BUNDLE", gdb)
			lldb, _ := pyattachOK(t, "lldb -c BUNDLE", bin, append(env, testenv.LLDBEnv()...), "lldb", "-b", "-c", c.bundle, "-o", "bt", "-o", "py-bt")
			if !lldbNativeFileLine.MatchString(lldb) {
				t.Errorf("lldb bt shows no named C frame with file and line from the bundled files:\n%s", lldb)
			}
			checkPyBt(t, "lldb -c BUNDLE", lldb)

			// resolve and debuginfo take the bundle as they take a core:
			// the interpreter's debug file is the bundled one.
			res, _ := pyattachOK(t, "resolve --json BUNDLE", bin, env, "resolve", "--json", c.bundle)
			var r target.Result
			if err := json.Unmarshal([]byte(res), &r); err != nil || r.TargetKind != target.KindCore || !strings.HasPrefix(r.Python.Version, "3.13.") {
				t.Errorf("resolve --json BUNDLE: %v\n%s", err, res)
			}
			dj, _ := pyattachOK(t, "debuginfo --json BUNDLE", bin, env, "--offline", "debuginfo", "--json", c.bundle)
			var di debugsearch.Info
			if err := json.Unmarshal([]byte(dj), &di); err != nil {
				t.Fatalf("debuginfo --json BUNDLE: %v\n%s", err, dj)
			}
			found := false
			for _, m := range di.Modules {
				if m.BuildID == r.BuildID && strings.Contains(m.Debug.Path, "/bundles/") {
					found = true
				}
			}
			if r.BuildID == "" || !found {
				t.Errorf("debuginfo BUNDLE: no module with the interpreter's build-id %q and its debug file from the unpacked bundle:\n%s", r.BuildID, dj)
			}
		})
	}
}

// TestBundleBuildIDMismatch: a mapped file whose build-id is not the
// one the core holds (it changed since the core was written) is not
// packed: the manifest lists it as missing with both build-ids, and
// stderr says so. The core of Debian's python is bundled with --root
// naming a tree where /usr/bin/python3.X is another program.
func TestBundleBuildIDMismatch(t *testing.T) {
	gcore := testenv.Need(t, "gcore")
	py := testenv.Debian(t)
	pid := testenv.StartPython(t, py.Exe, "")
	core := filepath.Join(t.TempDir(), "core")
	if o, err := exec.Command(gcore, "-o", core, strconv.Itoa(pid)).CombinedOutput(); err != nil {
		t.Fatalf("gcore: %v\n%s", err, o)
	}
	core += "." + strconv.Itoa(pid)
	root := t.TempDir()
	other, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	testenv.CopyFile(t, other, filepath.Join(root, py.Exe), 0o755)
	bin := pyattachBin(t)
	env := testEnv(t)
	b := filepath.Join(t.TempDir(), "b.pyattach")
	_, stderr := pyattachOK(t, "bundle --root", bin, env, "bundle", "--root", root, core, "-o", b)
	if !strings.Contains(stderr, py.Exe+" not packed: build-id mismatch") {
		t.Errorf("stderr does not report the mismatch:\n%s", stderr)
	}
	js, _ := pyattachOK(t, "bundle --list --json", bin, env, "bundle", "--list", "--json", b)
	var m struct {
		Entries []struct{ Name string }
		Missing []struct{ Kind, Path, Reason string }
	}
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Entries {
		if e.Name == "root"+py.Exe {
			t.Errorf("the mismatched %s was packed", py.Exe)
		}
	}
	found := false
	for _, x := range m.Missing {
		found = found || x.Kind == "module" && x.Path == py.Exe && strings.Contains(x.Reason, "build-id mismatch")
	}
	if !found {
		t.Errorf("the manifest does not list the mismatch:\n%s", js)
	}
}

// TestBundleNativeSources: Debian's python3.11 bundled with
// --native-sources and CPython's upstream tree as --source: the C files
// of its native frames are packed at the paths its DWARF names
// (/build/reproducible-path/python3.11-X/...), which this machine does
// not have, and gdb's list and lldb's frame select show the line of
// timemodule.c the sleeping frame is at, read from the unpacked bundle.
func TestBundleNativeSources(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	py := testenv.NeedFile(t, "/usr/bin/python3.11", "")
	id := testenv.ReadelfBuildID(t, py)
	testenv.NeedFile(t, filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug"), "")
	tree := cpythonDebianSources(t)
	build := "/build/reproducible-path/python3.11-" + testenv.Debian(t).Version
	if _, err := os.Stat(build); err == nil {
		testenv.Missing(t, "this machine has %s: the bundle's sources could not be told from its own", build)
	}
	pid := startVenvCopies(t, py)
	bin := pyattachBin(t)
	env := testEnv(t)
	b := filepath.Join(t.TempDir(), "native.pyattach")
	pyattachOK(t, "bundle --native-sources", bin, env, "--offline", "--source", "cpython="+tree, "bundle", "--native-sources", strconv.Itoa(pid), "-o", b)
	list, _ := pyattachOK(t, "bundle --list", bin, env, "bundle", "--list", b)
	if !regexp.MustCompile(`(?m)^native-source +\d+ +- +src` + regexp.QuoteMeta(build) + `/Modules/timemodule\.c$`).MatchString(list) {
		t.Errorf("bundle --list lacks timemodule.c as a native source:\n%s", list)
	}
	src, err := os.ReadFile(filepath.Join(tree, "Modules", "timemodule.c"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	// The line the frame is at, and its text, as the debugger prints it.
	sourceLine := func(what, out string, at *regexp.Regexp, format string) {
		t.Helper()
		m := at.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("%s: no frame in timemodule.c:\n%s", what, out)
			return
		}
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(lines) || !strings.Contains(out, fmt.Sprintf(format, n, lines[n-1])) {
			t.Errorf("%s does not show line %s of timemodule.c from the bundle:\n%s", what, m[1], out)
		}
	}
	gdb, _ := pyattachOK(t, "gdb -c BUNDLE", bin, env, "gdb", "-nx", "-batch", "-c", b, "-ex", "frame function time_sleep", "-ex", "info source", "-ex", "list")
	if !regexp.MustCompile(`Located in .*/bundles/[0-9a-f]+/src` + regexp.QuoteMeta(build) + `/Modules/timemodule\.c`).MatchString(gdb) {
		t.Errorf("gdb did not locate timemodule.c in the unpacked bundle:\n%s", gdb)
	}
	sourceLine("gdb list", gdb, regexp.MustCompile(`at \.\./Modules/timemodule\.c:(\d+)`), "\n%d\t%s\n")
	lldb, _ := pyattachOK(t, "lldb -c BUNDLE", bin, append(env, testenv.LLDBEnv()...), "lldb", "-b", "-c", b, "-o", "frame select 1")
	sourceLine("lldb frame select", lldb, regexp.MustCompile("`\\S+ at timemodule\\.c:(\\d+)"), "-> %d\t%s\n")
}
