package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// Code execution as host root: no file reached through a
// debuggee's root is ever code for the debugger, whoever owns it. Each
// test below runs Debian's interpreter in a container (chroot,
// unshare+pivot_root, podman) whose root holds, owned by root, every
// file a debugger on the host might run (hostilePlants), each writing
// its own marker file in a directory of this machine when it runs. Host
// root's pyattach gdb, dump, dump --native and lldb must leave every
// marker absent, and still print the app's Python frames and list every
// thread with its name.

// readyApp is dumpApp (a main thread in leaf <- middle <- handle, a
// worker thread named "worker-1") that always says "ready": whether the
// worker got its OS name is read from /proc. Line numbers are dumpApp's.
var readyApp = strings.Replace(dumpApp, `sys.stdout.write("ready named\n" if named.is_set() else "ready\n")`, `sys.stdout.write("ready\n")`, 1)

// hostileApp is readyApp that also loads libplant.so, the planted
// library that carries .debug_gdb_scripts, on its first line.
var hostileApp = strings.Replace(readyApp, "import sys, time, threading\n",
	"import sys, time, threading, ctypes; ctypes.CDLL(\"/usr/local/lib/libplant.so\")\n", 1)

func init() {
	if readyApp == dumpApp || hostileApp == readyApp {
		panic("dumpApp changed: readyApp and hostileApp no longer apply")
	}
}

// hostilePlant is a set of files a hostile container places in its root:
// Files maps each path as the container sees it to the prepared file on
// this machine (Stage holds them at their in-root paths, so that it can
// serve as an overlay's upper directory); the planted code writes
// Markers/<name> when it runs, as whoever runs it.
type hostilePlant struct {
	Stage   string
	Files   map[string]string
	Markers string
	// Exe is the interpreter, LibDir the directory of libc, in the root.
	Exe, LibDir string
}

// markerScript is Python that records, in dir/name, that it ran and as
// whom.
func markerScript(dir, name string) string {
	return fmt.Sprintf("import os as _m_os; open(%q, \"w\").write(\"ran as uid %%d\\n\" %% _m_os.getuid())\n", filepath.Join(dir, name))
}

// hostilePlants prepares, for Debian's interpreter exe (its in-root
// path) in the root at view (a directory of this machine holding the
// container's files), everything a debugger might run from the
// container's files:
//
//   - CPython's gdb extension where Debian ships it
//     (/usr/share/gdb/auto-load/usr/bin/python3.X-gdb.py): the root's
//     own libpython.py with a marker line on top, so that it is still
//     recognised as the extension ("ext");
//   - a libthread_db.so.1 beside the root's libc whose constructor writes
//     its marker ("libthread_db");
//   - the interpreter's separate debug file
//     (/usr/lib/debug/.build-id/xx/yyyy.debug) with a .debug_gdb_scripts
//     section holding an inline script ("python-debug-section"), a
//     -gdb.py beside it ("python-debug-gdb.py") and one for the objfile
//     in the debug directory, /usr/lib/debug/usr/bin/python3.X-gdb.py
//     ("python-debugdir-gdb.py");
//   - /usr/local/lib/libplant.so, which hostileApp loads, with a
//     .debug_gdb_scripts section ("lib-section"), its separate debug file
//     under .build-id with another ("lib-debug-section") and a -gdb.py
//     beside it ("lib-debug-gdb.py"), a -gdb.py beside the library
//     ("lib-gdb.py"), one in the debug directory
//     ("lib-debugdir-gdb.py") and one in the auto-load directory
//     ("lib-auto-load-gdb.py");
//   - the cpython_lldb module in the site directories of the
//     interpreter's prefix /usr ("lldb-site-packages",
//     "lldb-dist-packages", "lldb-python3-dist-packages",
//     "lldb-local-dist-packages").
func hostilePlants(t *testing.T, view, exe string) *hostilePlant {
	t.Helper()
	testenv.Need(t, "objcopy")
	p := &hostilePlant{Stage: t.TempDir(), Files: map[string]string{}, Markers: t.TempDir()}
	minor := strings.TrimPrefix(filepath.Base(exe), "python")
	put := func(in string, data []byte, mode os.FileMode) string {
		host := filepath.Join(p.Stage, in)
		testenv.WriteFile(t, host, data, mode)
		p.Files[in] = host
		return host
	}
	script := func(name string) []byte { return []byte(markerScript(p.Markers, name)) }

	// The extension: the root's own, with a marker line on top.
	ext := "/usr/share/gdb/auto-load" + exe + "-gdb.py"
	real, err := os.ReadFile(filepath.Join(view, ext))
	if err != nil || !strings.Contains(string(real), "class PyObjectPtr") {
		t.Fatalf("the root has no CPython gdb extension at %s: %v", ext, err)
	}
	put(ext, append(script("ext"), real...), 0o644)

	// libthread_db beside libc.
	libcs, _ := filepath.Glob(filepath.Join(view, "usr/lib/*/libc.so.6"))
	if len(libcs) != 1 {
		t.Fatalf("want one libc.so.6 under %s/usr/lib/*: %v", view, libcs)
	}
	libdir := strings.TrimPrefix(filepath.Dir(libcs[0]), view)
	p.Exe, p.LibDir = exe, libdir
	build := t.TempDir()
	tdb := testenv.CC(t, build, "libthread_db.so.1", fmt.Sprintf(`#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void plant(void) {
	FILE *f = fopen(%q, "w");
	if (f) { fprintf(f, "ran as uid %%d\n", (int)getuid()); fclose(f); }
}
`, filepath.Join(p.Markers, "libthread_db")), "-shared", "-fPIC", "-Wl,-soname,libthread_db.so.1")
	testenv.CopyFile(t, tdb, filepath.Join(p.Stage, libdir, "libthread_db.so.1"), 0o644)
	p.Files[libdir+"/libthread_db.so.1"] = filepath.Join(p.Stage, libdir, "libthread_db.so.1")

	// The interpreter's debug file, with a section, and -gdb.py files.
	id, err := elfinfo.ReadBuildIDFile(filepath.Join(view, exe))
	if err != nil {
		t.Fatal(err)
	}
	pyDebug := "/usr/lib/debug/.build-id/" + id[:2] + "/" + id[2:] + ".debug"
	if _, err := os.Stat(filepath.Join(view, pyDebug)); err != nil {
		t.Fatalf("the root has no debug file for %s: %v", exe, err)
	}
	testenv.CopyFile(t, filepath.Join(view, pyDebug), filepath.Join(p.Stage, pyDebug), 0o644)
	p.Files[pyDebug] = filepath.Join(p.Stage, pyDebug)
	addScriptSection(t, p.Files[pyDebug], "python-debug-section", p.Markers)
	put(pyDebug+"-gdb.py", script("python-debug-gdb.py"), 0o644)
	put("/usr/lib/debug"+exe+"-gdb.py", script("python-debugdir-gdb.py"), 0o644)

	// libplant.so and its debug file.
	lib := testenv.CC(t, build, "libplant.so", "int plant_answer(void) { return 42; }\n", "-g", "-shared", "-fPIC", "-Wl,--build-id")
	libDebugHost := lib + ".debug"
	testenv.SplitDebug(t, lib, libDebugHost)
	addScriptSection(t, lib, "lib-section", p.Markers)
	addScriptSection(t, libDebugHost, "lib-debug-section", p.Markers)
	libID, err := elfinfo.ReadBuildIDFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	const libPath = "/usr/local/lib/libplant.so"
	libDebug := "/usr/lib/debug/.build-id/" + libID[:2] + "/" + libID[2:] + ".debug"
	for in, host := range map[string]string{libPath: lib, libDebug: libDebugHost} {
		testenv.CopyFile(t, host, filepath.Join(p.Stage, in), 0o644)
		p.Files[in] = filepath.Join(p.Stage, in)
	}
	put(libDebug+"-gdb.py", script("lib-debug-gdb.py"), 0o644)
	put(libPath+"-gdb.py", script("lib-gdb.py"), 0o644)
	put("/usr/lib/debug"+libPath+"-gdb.py", script("lib-debugdir-gdb.py"), 0o644)
	put("/usr/share/gdb/auto-load"+libPath+"-gdb.py", script("lib-auto-load-gdb.py"), 0o644)

	// cpython_lldb in the prefix's site directories.
	lldbExt := func(name string) []byte {
		return append([]byte("# cpython_lldb: lldb commands for CPython\nimport lldb\n"), script(name)...)
	}
	put("/usr/lib/python"+minor+"/site-packages/cpython_lldb.py", lldbExt("lldb-site-packages"), 0o644)
	put("/usr/lib/python"+minor+"/dist-packages/cpython_lldb.py", lldbExt("lldb-dist-packages"), 0o644)
	put("/usr/lib/python3/dist-packages/cpython_lldb.py", lldbExt("lldb-python3-dist-packages"), 0o644)
	put("/usr/local/lib/python"+minor+"/dist-packages/cpython_lldb.py", lldbExt("lldb-local-dist-packages"), 0o644)

	return p
}

// addScriptSection adds to the ELF file elf a .debug_gdb_scripts section
// holding one inline Python script (entry kind 4: the byte 4, the
// script's name on the first line, its text, a NUL) that writes
// markers/name.
func addScriptSection(t *testing.T, elf, name, markers string) {
	t.Helper()
	sec := filepath.Join(t.TempDir(), "section")
	data := "\x04pyattach_plant_" + strings.NewReplacer("-", "_", ".", "_").Replace(name) + "\n" + markerScript(markers, name) + "\x00"
	testenv.WriteFile(t, sec, []byte(data), 0o644)
	testenv.Run(t, "", "objcopy", "--add-section", ".debug_gdb_scripts="+sec, elf)
}

// ranMarkers returns the markers the planted code wrote (name: what it
// wrote), and removes them, so that the next command starts clean.
func ranMarkers(t *testing.T, p *hostilePlant) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(p.Markers)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		f := filepath.Join(p.Markers, e.Name())
		b, _ := os.ReadFile(f)
		out[e.Name()] = strings.TrimSpace(string(b))
		os.Remove(f)
	}
	return out
}

// checkNoMarkers fails the test for every planted file whose code ran
// during what.
func checkNoMarkers(t *testing.T, what string, p *hostilePlant) {
	t.Helper()
	ran := ranMarkers(t, p)
	names := make([]string, 0, len(ran))
	for n := range ran {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Errorf("%s ran the container's code: planted %q wrote its marker (%s)", what, n, ran[n])
	}
}

// hostileTasks are the app's threads as /proc shows them (tid: comm),
// with whether the worker carries its OS name "worker-1".
func hostileTasks(t *testing.T, pid int) (map[int]string, bool) {
	t.Helper()
	tasks := taskIDs(t, pid)
	if len(tasks) < 2 {
		t.Fatalf("/proc/%d/task lists %v: the app's worker thread is missing", pid, tasks)
	}
	named := false
	for _, comm := range tasks {
		named = named || comm == "worker-1"
	}
	return tasks, named
}

var (
	// A gdb "info threads" line: by pthread id (libthread_db) or as an
	// LWP (without it), with the thread's name.
	gdbThreadLine = regexp.MustCompile(`(?m)^[* ] +\d+ +(?:Thread 0x[0-9a-f]+ \(LWP (\d+)\)|LWP (\d+)) "([^"]*)"`)
	// An lldb "thread list" line.
	lldbThreadLine = regexp.MustCompile(`(?m)^[* ] thread #\d+: tid = (\d+),.*?name = '([^']*)'`)
	// The worker's own frame in a py-bt.
	workerFrame = regexp.MustCompile(`File ".*app\.py", line 18, in worker`)
	// The main thread's frames in a py-bt, innermost first.
	hostileMainFrames = []*regexp.Regexp{
		regexp.MustCompile(`File ".*app\.py", line 4, in leaf`),
		regexp.MustCompile(`File ".*app\.py", line 6, in middle`),
		regexp.MustCompile(`File ".*app\.py", line 9, in handle`),
	}
)

// checkFrames: out holds res in order.
func checkFrames(t *testing.T, what, out string, res []*regexp.Regexp) {
	t.Helper()
	last := -1
	for _, re := range res {
		loc := re.FindStringIndex(out)
		if loc == nil {
			t.Errorf("%s: no %q:\n%s", what, re, out)
			return
		}
		if loc[0] < last {
			t.Errorf("%s: frames out of order:\n%s", what, out)
			return
		}
		last = loc[0]
	}
}

// checkThreadList: the listing names every thread of tasks, once, with
// its /proc name; tidName extracts (tid, name) pairs from out.
func checkThreadList(t *testing.T, what, out string, tasks map[int]string, pairs [][2]string) {
	t.Helper()
	seen := map[int]string{}
	for _, p := range pairs {
		tid, _ := strconv.Atoi(p[0])
		if _, dup := seen[tid]; dup {
			t.Errorf("%s: thread %d listed twice:\n%s", what, tid, out)
		}
		seen[tid] = p[1]
	}
	if len(seen) != len(tasks) {
		t.Errorf("%s: %d threads listed, /proc has %d (%v):\n%s", what, len(seen), len(tasks), tasks, out)
	}
	for tid, comm := range tasks {
		name, ok := seen[tid]
		switch {
		case !ok:
			t.Errorf("%s: thread %d (%q) not listed:\n%s", what, tid, comm, out)
		case name != comm:
			t.Errorf("%s: thread %d named %q, /proc says %q", what, tid, name, comm)
		}
	}
}

// section returns the part of out after the line "@@name" up to the
// next "@@" line.
func section(out, name string) string {
	_, rest, ok := strings.Cut(out, "@@"+name+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "@@"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// checkHostile runs host root's pyattach gdb, dump and lldb on pid, a
// python running hostileApp or readyApp among plants p, each as a
// subtest (gdb, dump, dump-native, lldb), so that one failing stops none of the
// others.
func checkHostile(t *testing.T, what string, pid int, p *hostilePlant) {
	t.Helper()
	env := scriptEnv(t.TempDir())
	t.Run("gdb", func(t *testing.T) { checkHostileGDB(t, what, pid, p, env) })
	t.Run("dump", func(t *testing.T) { checkHostileDump(t, what, pid, p, env) })
	t.Run("dump-native", func(t *testing.T) { checkHostileDump(t, what, pid, p, env, "--native") })
	t.Run("lldb", func(t *testing.T) { checkHostileLLDB(t, what, pid, p, env) })
}

// checkPlantsLive is the control: plain gdb told to trust every path
// (auto-load safe-path /), the root's libthread_db and its extension
// runs the planted code, so that a marker left absent by pyattach means
// pyattach kept it out, not that the plant was inert. sysroot is the
// sysroot for gdb ("": gdb's default, target:); want lists the markers plain gdb must write.
func checkPlantsLive(t *testing.T, pid int, p *hostilePlant, sysroot string, want ...string) {
	t.Helper()
	gdb := testenv.Need(t, "gdb")
	root := "/proc/" + strconv.Itoa(pid) + "/root"
	args := []string{"-nx", "-batch", "-iex", "set auto-load safe-path /", "-iex", "set debuginfod enabled off",
		"-iex", "set libthread-db-search-path " + filepath.Join(root, p.LibDir)}
	if sysroot != "" {
		args = append(args, "-iex", "set sysroot "+sysroot, filepath.Join(sysroot, p.Exe))
	}
	args = append(args, "-p", strconv.Itoa(pid), "-ex", "info threads",
		"-ex", "source "+filepath.Join(root, "/usr/share/gdb/auto-load"+p.Exe+"-gdb.py"))
	out, _ := exec.Command(gdb, args...).CombinedOutput()
	ran := ranMarkers(t, p)
	for _, m := range want {
		if _, ok := ran[m]; !ok {
			t.Errorf("control: plain gdb trusting every path did not run planted %q (ran %v): the plant is inert\n%s", m, ran, out)
		}
	}
	t.Logf("control: plain gdb trusting every path ran %d plants: %v", len(ran), ran)
}

// checkHostileGDB runs host root's pyattach gdb on pid, a container's
// python running hostileApp among plants: py-bt, info threads and
// thread apply all py-bt work, and no planted code runs.
func checkHostileGDB(t *testing.T, what string, pid int, p *hostilePlant, env []string) {
	t.Helper()
	failed := t.Failed()
	tasks, _ := hostileTasks(t, pid)
	code, out, errOut := runPyattach(t, pyattachBin(t), env, "gdb", "-nx", "-batch", "-p", strconv.Itoa(pid),
		"-ex", `echo @@py-bt\n`, "-ex", "py-bt",
		"-ex", `echo @@info-threads\n`, "-ex", "info threads",
		"-ex", `echo @@apply-all\n`, "-ex", "thread apply all py-bt",
		"-ex", `echo @@end\n`)
	out += errOut
	what += ": pyattach gdb"
	checkNoMarkers(t, what, p)
	if code != 0 {
		t.Errorf("%s: exit %d\n%s", what, code, out)
	}
	checkFrames(t, what+": py-bt", section(out, "py-bt"), hostileMainFrames)
	var pairs [][2]string
	for _, m := range gdbThreadLine.FindAllStringSubmatch(section(out, "info-threads"), -1) {
		pairs = append(pairs, [2]string{m[1] + m[2], m[3]})
	}
	checkThreadList(t, what+": info threads", section(out, "info-threads"), tasks, pairs)
	all := section(out, "apply-all")
	checkFrames(t, what+": thread apply all py-bt", all, hostileMainFrames)
	if !workerFrame.MatchString(all) {
		t.Errorf("%s: thread apply all py-bt lacks the worker's frame %q:\n%s", what, workerFrame, out)
	}
	if t.Failed() && !failed {
		t.Logf("%s output:\n%s", what, out)
	}
}

// checkHostileDump runs host root's pyattach dump and dump --json, with
// flags, on pid: every thread with its /proc name and the app's frames,
// and no planted code runs.
func checkHostileDump(t *testing.T, what string, pid int, p *hostilePlant, env []string, flags ...string) {
	t.Helper()
	tasks, named := hostileTasks(t, pid)
	what += ": pyattach dump" + strings.TrimRight(" "+strings.Join(flags, " "), " ")
	code, out, errOut := runPyattach(t, pyattachBin(t), env, append(append([]string{"dump"}, flags...), strconv.Itoa(pid))...)
	checkNoMarkers(t, what, p)
	if code != 0 {
		t.Errorf("%s: exit %d\n%s%s", what, code, out, errOut)
	} else {
		checkDumpText(t, what, pythonOnly(out), pid, named)
	}

	// The default reader of a live process is the direct one (ptrace,
	// the host's python3 over /proc/PID/mem), in a container too.
	code, out, errOut = runPyattach(t, pyattachBin(t), env, append(append([]string{"dump", "-v", "--json"}, flags...), strconv.Itoa(pid))...)
	checkNoMarkers(t, what+" --json", p)
	if code != 0 {
		t.Fatalf("%s --json: exit %d\n%s%s", what, code, out, errOut)
	}
	if len(flags) == 0 && !strings.Contains(errOut, "pyattach: reader: direct") {
		t.Errorf("%s -v --json: the direct reader did not run:\n%s", what, errOut)
	}
	var d dumpOutput
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%s --json: %v\n%s", what, err, out)
	}
	checkDump(t, what+" --json", d, pid, tasks, named)
}

// checkHostileLLDB runs host root's pyattach lldb on pid: py-bt all
// shows the main thread's and the worker's frames, thread list every
// thread with its name, and no planted code runs.
func checkHostileLLDB(t *testing.T, what string, pid int, p *hostilePlant, env []string) {
	t.Helper()
	testenv.Need(t, "lldb")
	failed := t.Failed()
	tasks, _ := hostileTasks(t, pid)
	code, out, errOut := runPyattach(t, pyattachBin(t), env, "lldb", "-b", "-p", strconv.Itoa(pid),
		"-o", "script print('@@py-bt')", "-o", "py-bt all",
		"-o", "script print('@@threads')", "-o", "thread list",
		"-o", "script print('@@end')")
	out += errOut
	what += ": pyattach lldb"
	checkNoMarkers(t, what, p)
	if code != 0 || strings.Contains(out, "attach failed") {
		t.Fatalf("%s: exit %d\n%s", what, code, out)
	}
	bt := section(out, "py-bt")
	checkFrames(t, what+": py-bt all", bt, hostileMainFrames)
	if !workerFrame.MatchString(bt) {
		t.Errorf("%s: py-bt all lacks the worker's frame %q:\n%s", what, workerFrame, out)
	}
	var pairs [][2]string
	for _, m := range lldbThreadLine.FindAllStringSubmatch(section(out, "threads"), -1) {
		pairs = append(pairs, [2]string{m[1], m[2]})
	}
	checkThreadList(t, what+": thread list", section(out, "threads"), tasks, pairs)
	if t.Failed() && !failed {
		t.Logf("%s output:\n%s", what, out)
	}
}

// hostileRoot is the root the hostile tests run: the first of the
// cached roots (Debian's python3.13 in trixie) or, with last, the
// newest.
func hostileRoot(t *testing.T, last bool) pivotRoot {
	t.Helper()
	roots := pivotRoots(t, "", func(pivotRoot) bool { return true })
	if last {
		return roots[len(roots)-1]
	}
	return roots[0]
}

// TestHostileContainerChroot: Debian's interpreter under `unshare
// --mount chroot` in an overlay of a cached root (mounted on this
// machine, so that /proc/PID/root is a host path) that holds
// hostilePlants. pyattach gdb, dump, dump --native and lldb run as host
// root; none runs a planted file, and each still reads the app's
// frames and threads.
func TestHostileContainerChroot(t *testing.T) {
	testenv.NeedRoot(t, "overlay mounts and chroot")
	testenv.Need(t, "gdb")
	testenv.Need(t, "unshare")
	chroot := testenv.Need(t, "chroot")
	r := hostileRoot(t, false)
	p := hostilePlants(t, r.root, r.exe)
	testenv.WriteFile(t, filepath.Join(p.Stage, "mnt", "app.py"), []byte(hostileApp), 0o644)

	d := t.TempDir()
	merged := filepath.Join(d, "merged")
	for _, sub := range []string{"work", "merged"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("mount", "-t", "overlay", "overlay", "-o",
		"lowerdir="+r.root+",upperdir="+p.Stage+",workdir="+filepath.Join(d, "work"), merged).CombinedOutput(); err != nil {
		testenv.Missing(t, "overlay mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", merged).Run() })

	cmd := exec.Command("unshare", "--mount", "--fork", "--kill-child", chroot, merged, r.exe, "/mnt/app.py")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"}
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("app.py in the chroot did not start: stdout %q", line)
	}
	kids, err := childPIDs(cmd.Process.Pid)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of unshare (pid %d): %v %v", cmd.Process.Pid, kids, err)
	}
	pid := kids[0]
	if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/root"); err != nil || l != merged {
		t.Fatalf("/proc/%d/root reads %q (%v), want %s", pid, l, err, merged)
	}
	checkNoMarkers(t, "starting the app", p)
	// With the root as its sysroot, gdb finds the planted debug files
	// and libraries itself: every gdb plant is live.
	checkPlantsLive(t, pid, p, "/proc/"+strconv.Itoa(pid)+"/root", "ext", "libthread_db",
		"python-debug-section", "python-debug-gdb.py", "lib-section", "lib-debug-section", "lib-debug-gdb.py", "lib-gdb.py")
	checkHostile(t, "chroot", pid, p)
}

// TestHostileContainerPivotRoot: the same with the newest root's
// interpreter in new mount and PID namespaces after pivot_root (as
// container engines run it), hostilePlants in the overlay's upper
// directory.
func TestHostileContainerPivotRoot(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "unshare")
	testenv.Need(t, "pivot_root")
	r := hostileRoot(t, true)
	p := hostilePlants(t, r.root, r.exe)
	pid := startPivotedApp(t, r.root, p.Stage, r.exe, func(dir string) {
		testenv.WriteFile(t, filepath.Join(dir, "app.py"), []byte(hostileApp), 0o644)
	})
	if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/root"); err != nil || l != "/" {
		t.Fatalf("/proc/%d/root reads %q (%v), not / as under pivot_root", pid, l, err)
	}
	checkNoMarkers(t, "starting the app", p)
	// Through target:, gdb auto-loads nothing from the root's files by
	// itself; the rest guards a pyattach that would hand it the root's
	// debug directories.
	checkPlantsLive(t, pid, p, "", "ext", "libthread_db")
	checkHostile(t, "pivot_root", pid, p)
}

// TestHostileContainerPodman: the same with a real engine: rootful
// podman (runc) runs the first root's interpreter from an image of the
// root, with hostilePlants bind-mounted over the image's files (owned
// by root, as an image's are).
func TestHostileContainerPodman(t *testing.T) {
	testenv.Need(t, "gdb")
	podman := testenv.Need(t, "podman")
	testenv.Need(t, "runc")
	r := hostileRoot(t, false)
	image := podmanImage(t, podman, r.root)
	p := hostilePlants(t, r.root, r.exe)
	app := t.TempDir()
	testenv.WriteFile(t, filepath.Join(app, "app.py"), []byte(hostileApp), 0o644)
	args := []string{"-v", app + ":/mnt:ro"}
	ins := make([]string, 0, len(p.Files))
	for in := range p.Files {
		ins = append(ins, in)
	}
	sort.Strings(ins)
	for _, in := range ins {
		args = append(args, "-v", p.Files[in]+":"+in+":ro")
	}
	args = append(args, image, r.exe, "/mnt/app.py")
	pid := podmanRun(t, podman, "hostile", args...)
	checkNoMarkers(t, "starting the app", p)
	// Through target:, gdb auto-loads nothing from the root's files by
	// itself; the rest guards a pyattach that would hand it the root's
	// debug directories.
	checkPlantsLive(t, pid, p, "", "ext", "libthread_db")
	checkHostile(t, "podman", pid, p)
}

// TestHostileVenvOtherUser: a process of another user on this machine
// (nobody), running the python of its own --copies venv (owned by
// nobody). The venv holds what gdb or lldb might run: CPython's gdb
// extension beside the binary (bin/python3.X-gdb.py, python3-gdb.py,
// python-gdb.py: the host's libpython.py with a marker line on top),
// a .debug_gdb_scripts section in the venv's python, and cpython_lldb
// in its site-packages. Host root's pyattach gdb, dump, dump --native
// and lldb run none of it and still read the app's frames and threads.
func TestHostileVenvOtherUser(t *testing.T) {
	testenv.NeedRoot(t, "to run a process as another user")
	testenv.Need(t, "gdb")
	testenv.Need(t, "objcopy")
	setpriv := testenv.Need(t, "setpriv")
	py := testenv.Debian(t)
	const nobody = 65534
	asNobody := func(name string, args ...string) *exec.Cmd {
		return exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", name}, args...)...)
	}
	dir, err := os.MkdirTemp("", "pyattach-other-user")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(dir, "venv")
	if out, err := asNobody(py.Exe, "-m", "venv", "--without-pip", "--copies", venv).CombinedOutput(); err != nil {
		t.Fatalf("venv as nobody: %v\n%s", err, out)
	}
	p := &hostilePlant{Files: map[string]string{}, Markers: t.TempDir()}
	ext := []byte("import gdb\nclass PyObjectPtr(object):\n    pass\n")
	if real, err := os.ReadFile("/usr/share/gdb/auto-load" + py.Exe + "-gdb.py"); err == nil {
		ext = real
	}
	plant := func(path string, data []byte) {
		testenv.WriteFile(t, path, data, 0o644)
		if err := os.Chown(path, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		p.Files[path] = path
	}
	for _, name := range []string{"python" + py.Minor() + "-gdb.py", "python3-gdb.py", "python-gdb.py"} {
		plant(filepath.Join(venv, "bin", name), append([]byte(markerScript(p.Markers, "venv-"+name)), ext...))
	}
	plant(filepath.Join(venv, "lib", "python"+py.Minor(), "site-packages", "cpython_lldb.py"),
		append([]byte("# cpython_lldb: lldb commands for CPython\nimport lldb\n"), markerScript(p.Markers, "venv-cpython_lldb")...))
	exe := filepath.Join(venv, "bin", "python"+py.Minor())
	if st, err := os.Lstat(exe); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("%s is not a copy: %v", exe, err)
	}
	addScriptSection(t, exe, "venv-python-section", p.Markers)
	os.Chown(exe, nobody, nobody)
	plant(filepath.Join(dir, "app.py"), []byte(readyApp))

	cmd := asNobody(exe, filepath.Join(dir, "app.py"))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"}
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("app.py as nobody did not start: stdout %q", line)
	}
	pid := cmd.Process.Pid
	if st, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil || st.Sys().(*syscall.Stat_t).Uid != nobody {
		t.Fatalf("process %d is not nobody's: %v", pid, err)
	}
	checkNoMarkers(t, "starting the app", p)
	// The control: plain gdb trusting every path, given the venv's
	// python, runs the file beside it and its section.
	out, _ := exec.Command("gdb", "-nx", "-batch", "-iex", "set auto-load safe-path /", "-iex", "set debuginfod enabled off",
		exe, "-p", strconv.Itoa(pid)).CombinedOutput()
	ran := ranMarkers(t, p)
	for _, m := range []string{"venv-python" + py.Minor() + "-gdb.py", "venv-python-section"} {
		if _, ok := ran[m]; !ok {
			t.Errorf("control: plain gdb trusting every path did not run planted %q (ran %v): the plant is inert\n%s", m, ran, out)
		}
	}
	checkHostile(t, "another user's venv", pid, p)
}
