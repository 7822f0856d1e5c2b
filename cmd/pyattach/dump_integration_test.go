package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/walkerdir"
	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/pyattach/pyattach/venv/environ"
)

// dumpApp runs a main thread three calls deep and a worker thread that
// names itself "worker-1" for the OS (as py-spy and top show it); both
// sleep. It says "ready named" when the name was set (ctypes loaded).
const dumpApp = `import sys, time, threading
named = threading.Event()
def leaf(n):
    time.sleep(1000)
def middle(n):
    return leaf(n + 1)
class Handler:
    def handle(self):
        middle(0)
def worker():
    try:
        import ctypes
        if ctypes.CDLL(None).prctl(15, b"worker-1", 0, 0, 0) == 0:
            named.set()
    except Exception:
        pass
    started.set()
    time.sleep(1000)
started = threading.Event()
t = threading.Thread(target=worker, name="worker-1", daemon=True)
t.start()
started.wait()
time.sleep(0.2)
sys.stdout.write("ready named\n" if named.is_set() else "ready\n")
sys.stdout.flush()
Handler().handle()
`

// The app's frames, innermost first: the main thread's and the worker's
// (its own frame; the threading module's below it vary by version).
var (
	dumpMain   = []dumpFrame{{Function: "leaf", File: "app.py", Line: intp(4)}, {Function: "middle", File: "app.py", Line: intp(6)}, {Function: "handle", File: "app.py", Line: intp(9)}, {Function: "<module>", File: "app.py", Line: intp(26)}}
	dumpWorker = []dumpFrame{{Function: "worker", File: "app.py", Line: intp(18)}}
)

func intp(i int) *int { return &i }

// dumpInterp is an interpreter found here: Debian's python3.11 and every
// pyenv 3.7+ version, discovered, not named in advance.
type dumpInterp struct {
	name, exe, lib string
}

func dumpInterpreters(t *testing.T) []dumpInterp {
	t.Helper()
	var out []dumpInterp
	if _, err := os.Stat(testenv.DebianPath); err == nil {
		out = append(out, dumpInterp{name: "debian-" + filepath.Base(testenv.DebianPath), exe: testenv.DebianPath})
	} else if testenv.InCI() {
		t.Fatalf("%s is required in CI", testenv.DebianPath)
	}
	for _, p := range testenv.PyenvVersions() {
		var minor int
		if _, err := fmt.Sscanf(p.Version, "3.%d", &minor); err != nil || minor < 7 {
			continue
		}
		out = append(out, dumpInterp{name: "pyenv-" + filepath.Base(p.Prefix), exe: p.Exe, lib: p.Libpython()})
	}
	if len(out) == 0 {
		testenv.Missing(t, "no CPython 3.7+ found")
	}
	return out
}

// dumpJSON runs pyattach dump --json and decodes its output.
func dumpJSON(t *testing.T, env []string, args ...string) dumpOutput {
	t.Helper()
	stdout, _ := pyattachOK(t, "pyattach dump --json "+strings.Join(args, " "), pyattachBin(t), env, append([]string{"dump", "--json"}, args...)...)
	var d dumpOutput
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("pyattach dump --json: %v\n%s", err, stdout)
	}
	return d
}

// appFrames keeps the frames in app.py, with the file's base name.
func appFrames(fs []dumpFrame) []dumpFrame {
	var out []dumpFrame
	for _, f := range fs {
		if filepath.Base(f.File) == "app.py" {
			out = append(out, dumpFrame{Function: f.Function, File: "app.py", Line: f.Line})
		}
	}
	return out
}

func framesString(fs []dumpFrame) string {
	var b strings.Builder
	for _, f := range fs {
		line := "null"
		if f.Line != nil {
			line = strconv.Itoa(*f.Line)
		}
		fmt.Fprintf(&b, "%s:%s:%s ", f.Function, f.File, line)
	}
	return b.String()
}

// taskIDs are the process's kernel thread ids and their names (comm),
// as /proc shows them: the oracle for tid and name.
func taskIDs(t *testing.T, pid int) map[int]string {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid))
		out[tid] = strings.TrimSpace(string(comm))
	}
	return out
}

// checkDump checks a dump of the app: every OS thread once, the main
// thread's and the worker's frames, with files and lines.
func checkDump(t *testing.T, what string, d dumpOutput, pid int, tasks map[int]string, named bool) {
	t.Helper()
	var tids []int
	var main, worker *dumpThread
	for i, th := range d.Threads {
		tids = append(tids, th.TID)
		if th.TID == pid {
			main = &d.Threads[i]
		} else if fs := appFrames(th.Frames); len(fs) > 0 && fs[0].Function == "worker" {
			worker = &d.Threads[i]
		}
		if tasks != nil {
			if th.OSName == nil || *th.OSName != tasks[th.TID] {
				t.Errorf("%s: thread %d has OS name %v, /proc says %q", what, th.TID, th.OSName, tasks[th.TID])
			}
		}
		for _, f := range th.Frames {
			if f.Function == "" || f.File == "" {
				t.Errorf("%s: thread %d: frame without function or file: %+v", what, th.TID, f)
			}
		}
	}
	sort.Ints(tids)
	if tasks != nil {
		var want []int
		for tid := range tasks {
			want = append(want, tid)
		}
		sort.Ints(want)
		if fmt.Sprint(tids) != fmt.Sprint(want) {
			t.Errorf("%s: threads %v, /proc/%d/task has %v", what, tids, pid, want)
		}
	}
	if main == nil {
		t.Fatalf("%s: no thread %d (the main thread) in %+v", what, pid, d.Threads)
	}
	if got := appFrames(main.Frames); framesString(got) != framesString(dumpMain) {
		t.Errorf("%s: main thread frames\n got %s\nwant %s", what, framesString(got), framesString(dumpMain))
	}
	if worker == nil {
		t.Fatalf("%s: no thread shows worker(): %+v", what, d.Threads)
	}
	if got := appFrames(worker.Frames); framesString(got) != framesString(dumpWorker) {
		t.Errorf("%s: worker frames\n got %s\nwant %s", what, framesString(got), framesString(dumpWorker))
	}
	if named && tasks != nil && (worker.Name == nil || *worker.Name != "worker-1") {
		t.Errorf("%s: the worker thread is named %v, want worker-1", what, worker.Name)
	}
}

// checkDumpText checks the text output: a line per thread with its id
// and name, then py-bt's lines with the source lines.
func checkDumpText(t *testing.T, what, out string, pid int, named bool) {
	t.Helper()
	head := regexp.MustCompile(fmt.Sprintf(`(?m)^Thread %d "MainThread"[^\n]*:\nTraceback \(most recent call first\):\n  File ".*/app\.py", line 4, in leaf\n    time\.sleep\(1000\)\n  File ".*/app\.py", line 6, in middle\n    return leaf\(n \+ 1\)\n  File ".*/app\.py", line 9, in handle\n    middle\(0\)\n`, pid))
	if !head.MatchString(out) {
		t.Errorf("%s: no py-bt of thread %d with source lines:\n%s", what, pid, out)
	}
	worker := `(?m)^Thread \d+ "worker-1"[^\n]*:\nTraceback \(most recent call first\):\n  File ".*/app\.py", line 18, in worker\n`
	if named {
		worker = `(?m)^Thread \d+ "worker-1"( \(os name "worker-1"\))?, interpreter 0, [^\n]*:\nTraceback \(most recent call first\):\n  File ".*/app\.py", line 18, in worker\n`
	}
	if !regexp.MustCompile(worker).MatchString(out) {
		t.Errorf("%s: no py-bt of the worker thread:\n%s", what, out)
	}
}

// startDumpApp runs dumpApp with exe (env added to the environment)
// from a new directory, and returns its PID and whether it could name
// its worker thread.
func startDumpApp(t *testing.T, exe string, env ...string) (pid int, named bool) {
	t.Helper()
	app := filepath.Join(t.TempDir(), "app.py")
	if err := os.WriteFile(app, []byte(dumpApp), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, app)
	cmd.Env = append(os.Environ(), env...)
	named = strings.TrimSpace(testenv.Start(t, cmd)) == "ready named"
	return cmd.Process.Pid, named
}

// TestDumpEveryInterpreter: pyattach dump of Debian's python3.11 and of
// every pyenv 3.7+ version, each in a --copies venv, live (text and
// JSON) and from a gcore core, and of a stripped copy: every OS thread
// with its kernel id and name, the app's frames with their lines.
func TestDumpEveryInterpreter(t *testing.T) {
	testenv.Need(t, "gdb")
	gcore := testenv.Need(t, "gcore")
	for _, in := range dumpInterpreters(t) {
		t.Run(in.name, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			venv := makeVenv(t, in.exe, true)
			pid, named := startDumpApp(t, filepath.Join(venv, "bin", "python"))
			if !named && strings.HasPrefix(in.name, "debian") {
				t.Errorf("the app could not name its worker thread with ctypes; the names are not checked")
			}
			tasks := taskIDs(t, pid)

			d := dumpJSON(t, env, strconv.Itoa(pid))
			if d.PID != pid || d.Core != "" || !strings.HasPrefix(in.name, "debian") && !strings.HasSuffix(in.name, d.Python.Version) {
				t.Errorf("pid %d core %q python %q, want pid %d and the version of %s", d.PID, d.Core, d.Python.Version, pid, in.name)
			}
			checkDump(t, "live", d, pid, tasks, named)

			out, _ := pyattachOK(t, "pyattach dump", pyattachBin(t), env, "dump", strconv.Itoa(pid))
			checkDumpText(t, "live text", out, pid, named)

			if strings.HasPrefix(in.name, "debian") {
				// --native: gdb's own C frames too, for every thread.
				dn := dumpJSON(t, env, "--native", strconv.Itoa(pid))
				checkDump(t, "native", dn, pid, tasks, named)
				for _, th := range dn.Threads {
					eval := false
					for _, f := range derefNative(th.Native) {
						eval = eval || f.Function != nil && strings.Contains(*f.Function, "_PyEval_EvalFrameDefault")
					}
					if !eval {
						t.Errorf("native: thread %d has no _PyEval_EvalFrameDefault C frame: %+v", th.TID, derefNative(th.Native))
					}
				}
			}

			core := filepath.Join(t.TempDir(), "core")
			if out, err := exec.Command(gcore, "-o", core, strconv.Itoa(pid)).CombinedOutput(); err != nil {
				t.Fatalf("gcore: %v\n%s", err, out)
			}
			core += "." + strconv.Itoa(pid)
			dc := dumpJSON(t, env, core)
			if dc.Core != core || dc.PID != 0 {
				t.Errorf("core dump names pid %d core %q, want core %q", dc.PID, dc.Core, core)
			}
			checkDump(t, "core", dc, pid, nil, named)
			if len(dc.Threads) != len(tasks) {
				t.Errorf("core: %d threads, the process had %d", len(dc.Threads), len(tasks))
			}
			os.Remove(core)

			exe, senv := testenv.Stripped(t, in.exe)
			spid, named := startDumpApp(t, exe, senv...)
			checkDump(t, "stripped", dumpJSON(t, env, strconv.Itoa(spid)), spid, taskIDs(t, spid), named)
		})
	}
}

// TestDumpReadsNoDWARF: pyattach dump never reads debug information. A
// copy of a pyenv interpreter and libpython whose .debug_info sections
// are garbage runs fine (nothing reads them at run time); gdb reading
// them says "Dwarf Error" (checked: pyattach dump --native --reader gdb,
// which loads debug information), and pyattach dump --verbose, which shows gdb's own
// messages, must not, and must still print every frame.
func TestDumpReadsNoDWARF(t *testing.T) {
	testenv.Need(t, "gdb")
	var in *dumpInterp
	for _, c := range dumpInterpreters(t) {
		if c.lib != "" && hasSection(c.lib, ".debug_info") && hasSection(c.exe, ".debug_info") {
			c := c
			in = &c
			break
		}
	}
	if in == nil {
		testenv.Missing(t, "no pyenv build with DWARF in its executable and libpython")
	}
	d := t.TempDir()
	exe := filepath.Join(d, "bin", filepath.Base(in.exe))
	lib := filepath.Join(d, "lib", filepath.Base(in.lib))
	for from, to := range map[string]string{in.exe: exe, in.lib: lib} {
		os.MkdirAll(filepath.Dir(to), 0o755)
		testenv.CopyFile(t, from, to, 0o755)
		os.Chmod(to, 0o755)
		spoilSection(t, to, ".debug_info")
	}
	out, _ := exec.Command(in.exe, "-c", "import sys; print(sys.base_prefix)").Output()
	ipid, named := startDumpApp(t, exe, "LD_LIBRARY_PATH="+filepath.Dir(lib), "PYTHONHOME="+strings.TrimSpace(string(out)))
	pid := strconv.Itoa(ipid)
	env := scriptEnv(t.TempDir())
	bin := pyattachBin(t)

	stdout, stderr := pyattachOK(t, "pyattach dump --verbose", bin, env, "dump", "--verbose", pid)
	if strings.Contains(stderr, "Dwarf Error") || strings.Contains(stderr, "DWARF") {
		t.Errorf("pyattach dump read DWARF:\n%s", stderr)
	}
	checkDumpText(t, "spoiled DWARF", stdout, ipid, named)

	// The control: reading the spoiled DWARF shows (gdb, whose --native
	// loads debug information).
	_, _, nstderr := runPyattach(t, bin, env, "dump", "--native", "--reader", "gdb", "--verbose", pid)
	if !strings.Contains(nstderr, "Dwarf Error") {
		t.Errorf("gdb reading the spoiled .debug_info did not say so; this test proves nothing:\n%s", nstderr)
	}
}

func hasSection(path, name string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := f.Section(name)
	return s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0
}

// spoilSection overwrites the start of a section's contents with 0xff.
func spoilSection(t *testing.T, path, name string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(name)
	f.Close()
	if s == nil {
		t.Fatalf("%s has no %s", path, name)
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	n := s.Size
	if n > 1<<20 {
		n = 1 << 20
	}
	junk := make([]byte, n)
	for i := range junk {
		junk[i] = 0xff
	}
	if _, err := w.WriteAt(junk, int64(s.Offset)); err != nil {
		t.Fatal(err)
	}
}

// TestDumpNotPython: a real process that is not Python gives one error
// line and a hint, exit 1, and no gdb is needed for it.
func TestDumpNotPython(t *testing.T) {
	sleep := testenv.Need(t, "sleep")
	cmd := exec.Command("sh", "-c", "echo ready; exec "+sleep+" 600")
	testenv.Start(t, cmd)
	code, stdout, stderr := runPyattach(t, pyattachBin(t), scriptEnv(t.TempDir()), "dump", strconv.Itoa(cmd.Process.Pid))
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 1 || stdout != "" || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "pyattach: error: dump "+strconv.Itoa(cmd.Process.Pid)+": ") || !strings.Contains(lines[0], "is not a Python process") ||
		!strings.HasPrefix(lines[1], "  hint: ") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

func derefNative(n *[]nativeFrame) []nativeFrame {
	if n == nil {
		return nil
	}
	return *n
}

// TestDumpOldPython: Python 3.6 and older (no _PyRuntime) give one error
// line and a hint naming pyattach gdb, exit 1.
func TestDumpOldPython(t *testing.T) {
	old := testenv.Pyenv(t, "3.6")
	cmd := exec.Command(old.Exe, "-c", "import sys, time; print('ready'); sys.stdout.flush(); time.sleep(600)")
	testenv.Start(t, cmd)
	pid := strconv.Itoa(cmd.Process.Pid)
	code, stdout, stderr := runPyattach(t, pyattachBin(t), scriptEnv(t.TempDir()), "dump", pid)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 1 || stdout != "" || len(lines) != 2 || !strings.Contains(lines[0], "has no _PyRuntime symbol") ||
		!strings.Contains(lines[1], "pyattach gdb -p "+pid) {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

// TestGDBCommandPyattachDump: the walker's gdb command pyattach-dump FILE
// writes the stacks as JSON, in a gdb started by hand.
func TestGDBCommandPyattachDump(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	pid, named := startDumpApp(t, testenv.Debian(t).Exe)
	wdir, err := writeWalkerTo(t)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "stacks file.json")
	log, err := exec.Command(gdb, "-nx", "-batch",
		"-ex", "python import sys; sys.path.insert(0, "+strconv.Quote(wdir)+")",
		"-ex", "python import pyattach_gdb; pyattach_gdb.setup(version=\"3.11\")",
		"-p", strconv.Itoa(pid),
		"-ex", "pyattach-dump '"+out+"'").CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, log)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("pyattach-dump wrote nothing: %v\n%s", err, log)
	}
	var d dumpOutput
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	checkDump(t, "pyattach-dump", d, pid, taskIDs(t, pid), named)
}

// writeWalkerTo writes the walker as pyattach does, under a temporary
// XDG_DATA_HOME.
func writeWalkerTo(t *testing.T) (string, error) {
	return walkerdir.Write(environ.Env{"XDG_DATA_HOME=" + t.TempDir()}.Dirs().DataHome)
}

// TestDumpTracedAlready: a process another tracer holds cannot be
// attached; the error says which tracer.
func TestDumpTracedAlready(t *testing.T) {
	testenv.Need(t, "gdb")
	strace := testenv.Need(t, "strace")
	py := testenv.Debian(t).Exe
	cmd := exec.Command(py, "-c", "import time; print('ready', flush=True); time.sleep(600)")
	testenv.Start(t, cmd)
	pid := strconv.Itoa(cmd.Process.Pid)
	tr := exec.Command(strace, "-o", "/dev/null", "-p", pid)
	if err := tr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Process.Kill(); tr.Wait() })
	for i := 0; i < 100 && tracerOf("/proc", cmd.Process.Pid) == ""; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	// The direct reader cannot stop it either: dump falls back to gdb,
	// which says why it cannot attach; -v says so.
	code, _, stderr := runPyattach(t, pyattachBin(t), scriptEnv(t.TempDir()), "dump", "-v", pid)
	want := fmt.Sprintf("hint: the process is traced already, by %d (strace)", tr.Process.Pid)
	if code != 1 || !strings.Contains(stderr, "gdb cannot attach") || !strings.Contains(stderr, want) ||
		!strings.Contains(stderr, "the direct reader cannot run (cannot stop process "+pid+" with ptrace") {
		t.Errorf("exit %d, stderr:\n%s\nwant %q", code, stderr, want)
	}
	code, _, stderr = runPyattach(t, pyattachBin(t), scriptEnv(t.TempDir()), "dump", "--reader", "direct", pid)
	if code != 1 || !strings.Contains(stderr, "cannot stop process "+pid+" with ptrace") || !strings.Contains(stderr, want) {
		t.Errorf("--reader direct: exit %d, stderr:\n%s\nwant %q", code, stderr, want)
	}
}
