package pywalk

import (
	"context"
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
	"time"

	"github.com/pyattach/pyattach/detect/testenv"
)

// The program every interpreter runs: a main thread three calls deep and
// a named worker thread, both asleep, so that their stacks hold still.
const appPy = `import sys, time, threading

def leaf(n):
    time.sleep(1000)

def middle(n):
    return leaf(n + 1)

class Handler:
    def handle(self):
        middle(0)

def worker():
    time.sleep(1000)

t = threading.Thread(target=worker, name="worker-1", daemon=True)
t.start()
while t.ident is None:
    time.sleep(0.01)
print("ready", flush=True)
Handler().handle()
`

// interp is one interpreter found on this machine.
type interp struct {
	name    string // "pyenv-3.12.1", "system-python3.11"
	exe     string
	version string
	flags   string
	lib     string // its libpython, "" for a static interpreter
	oracle  string // CPython's own gdb extension for it, "" if none
}

// interpreters discovers CPython 3.7+ builds: pyenv's versions and the
// system's /usr/bin/python3.N[d]. Nothing is named in advance.
func interpreters(t *testing.T) []interp {
	t.Helper()
	root := testenv.PyenvRoot()
	var cands []testenv.Python
	for _, p := range testenv.PyenvVersions() {
		p.Exe = filepath.Join(p.Prefix, "bin", "python3")
		cands = append(cands, p)
	}
	sys, _ := filepath.Glob("/usr/bin/python3.*")
	for _, s := range sys {
		if fi, err := os.Lstat(s); err == nil && fi.Mode().IsRegular() && regexp.MustCompile(`/python3\.\d+d?$`).MatchString(s) {
			if p, err := testenv.Probe(s); err == nil {
				cands = append(cands, p)
			}
		}
	}
	var out []interp
	for _, p := range cands {
		c := p.Exe
		in := interp{exe: c, version: p.Version, flags: p.ABIFlags}
		var maj, min int
		fmt.Sscanf(in.version, "%d.%d", &maj, &min)
		if maj != 3 || min < 7 {
			continue
		}
		if _, err := os.Stat(c); err != nil {
			continue
		}
		real, _ := filepath.EvalSymlinks(c)
		if strings.HasPrefix(c, root) {
			in.name = "pyenv-" + filepath.Base(p.Prefix)
			in.lib = p.Libpython()
			if ext, _ := filepath.Glob(real + "-gdb.py"); len(ext) > 0 {
				in.oracle = ext[0]
			}
		} else {
			in.name = "system-" + filepath.Base(c)
			if _, err := os.Stat("/usr/share/gdb/auto-load" + real + "-gdb.py"); err == nil {
				in.oracle = "/usr/share/gdb/auto-load" + real + "-gdb.py"
			}
		}
		out = append(out, in)
	}
	if len(out) == 0 {
		testenv.Missing(t, "no CPython 3.7+ interpreter found (pyenv versions, /usr/bin/python3.N)")
	}
	return out
}

// walkerDir writes the walker's files where the debuggers import them.
func walkerDir(t *testing.T) string {
	d := t.TempDir()
	for name, b := range Files() {
		if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// walkerDebuggers needs gdb and lldb, and writes the walker's files
// where they import them.
func walkerDebuggers(t *testing.T) string {
	t.Helper()
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	return walkerDir(t)
}

// gcore writes a core of the live process pid with gdb (args come
// before -p: a sysroot, the program) and returns its path and gdb's
// output.
func gcore(t *testing.T, pid string, args ...string) (core, out string) {
	t.Helper()
	core = filepath.Join(t.TempDir(), "core")
	out = run(t, nil, "gdb", append(append([]string{"-nx", "-batch"}, args...), "-p", pid, "-ex", "gcore "+core)...)
	if _, err := os.Stat(core); err != nil {
		t.Fatalf("gcore wrote no core: %v\n%s", err, out)
	}
	return core, out
}

// start runs app.py and waits for its ready line, then until both its
// threads sleep in time.sleep.
func start(t *testing.T, exe string, env []string) *exec.Cmd {
	t.Helper()
	return startSource(t, exe, env, appPy, testenv.TimeSleep...)
}

// startSource runs src as app.py in a new directory and waits for the
// ready line it prints; then, when sleeps names C library functions
// (testenv.WaitSyscall), until every thread of it sits in one of them.
func startSource(t *testing.T, exe string, env []string, src string, sleeps ...string) *exec.Cmd {
	t.Helper()
	d := t.TempDir()
	app := filepath.Join(d, "app.py")
	os.WriteFile(app, []byte(src), 0o644)
	cmd := exec.Command(exe, app)
	cmd.Dir = d
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if line := testenv.Start(t, cmd); line != "ready\n" {
		t.Fatalf("%s app.py did not start: it printed %q", exe, line)
	}
	if len(sleeps) > 0 {
		testenv.WaitSyscall(t, cmd.Process.Pid, testenv.AllThreads(), sleeps...)
	}
	return cmd
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

type frame struct {
	file, name string
	line       string
}

var (
	gdbThreadRe = regexp.MustCompile(`^Thread \d+ \(.*\(LWP (\d+)\)`)
	// lldb's py-bt all heads each stack with its py-threads line:
	// "* 1 Thread 4242 "MainThread" (os name ...), interpreter 0, ...".
	lldbThreadRe = regexp.MustCompile(`^[* ] \d+ Thread (\d+) `)
	fileLineRe   = regexp.MustCompile(`^  File "(.*)", line (\S+), in (.*)$`)
)

// stacks parses py-bt output for every thread, by kernel thread id.
func stacks(out string, threadRe *regexp.Regexp) map[int][]frame {
	res := map[int][]frame{}
	cur := -1
	for _, l := range strings.Split(out, "\n") {
		if m := threadRe.FindStringSubmatch(l); m != nil {
			cur, _ = strconv.Atoi(m[1])
			res[cur] = nil
			continue
		}
		if m := fileLineRe.FindStringSubmatch(l); m != nil && cur >= 0 {
			res[cur] = append(res[cur], frame{filepath.Base(m[1]), m[3], m[2]})
		}
	}
	return res
}

// wantStacks is what app.py's threads must show, innermost first, in
// app.py itself (the threading module's frames vary by version).
func checkApp(t *testing.T, what string, got map[int][]frame) {
	t.Helper()
	var main, worker []frame
	for _, fs := range got {
		var app []frame
		for _, f := range fs {
			if f.file == "app.py" {
				app = append(app, f)
			}
		}
		if len(app) > 0 && app[0].name == "leaf" {
			main = app
		}
		if len(app) > 0 && app[0].name == "worker" {
			worker = app
		}
	}
	wantMain := []frame{{"app.py", "leaf", "4"}, {"app.py", "middle", "7"}, {"app.py", "handle", "11"}, {"app.py", "<module>", "21"}}
	if fmt.Sprint(main) != fmt.Sprint(wantMain) {
		t.Errorf("%s: main thread %v, want %v", what, main, wantMain)
	}
	if fmt.Sprint(worker) != fmt.Sprint([]frame{{"app.py", "worker", "14"}}) {
		t.Errorf("%s: worker thread %v", what, worker)
	}
}

func sameStacks(t *testing.T, what string, got, want map[int][]frame) {
	t.Helper()
	keys := func(m map[int][]frame) []int {
		var k []int
		for id := range m {
			k = append(k, id)
		}
		sort.Ints(k)
		return k
	}
	if fmt.Sprint(keys(got)) != fmt.Sprint(keys(want)) {
		t.Errorf("%s: threads %v, CPython's py-bt saw %v", what, keys(got), keys(want))
	}
	for id, w := range want {
		if fmt.Sprint(got[id]) != fmt.Sprint(w) {
			t.Errorf("%s: thread %d:\n got %v\nwant %v (CPython's py-bt)", what, id, got[id], w)
		}
	}
}

func gdbArgs(dir string, in interp, extra ...string) []string {
	args := []string{"-nx", "-batch",
		"-iex", "set auto-load off",
		"-ex", fmt.Sprintf("python import sys; sys.path.insert(0, %q)", dir),
		// creds: a core's files are read as its owner (root here), as
		// pyattach dump says; without them only what anyone may read.
		"-ex", fmt.Sprintf("python import pyattach_gdb; pyattach_gdb.setup(version=%q, flags=%q, creds=(0, 0, ()))", in.version, in.flags),
	}
	return append(args, extra...)
}

func lldbArgs(dir string, in interp, extra ...string) []string {
	args := []string{"-b"}
	args = append(args, extra...)
	return append(args,
		"-o", "command script import "+filepath.Join(dir, "pyattach_lldb.py"),
		"-o", fmt.Sprintf("script pyattach_lldb.setup(version=%q, flags=%q)", in.version, in.flags),
		"-o", "py-bt all")
}

// TestWalkerEveryInterpreter: for every interpreter here, unstripped and
// stripped, live and from a gcore core, in gdb and in lldb, the walker's
// py-bt prints app.py's frames and lines; where CPython's own extension
// works (the unstripped build in gdb) it prints exactly what that prints.
func TestWalkerEveryInterpreter(t *testing.T) {
	dir := walkerDebuggers(t)
	for _, in := range interpreters(t) {
		t.Run(in.name, func(t *testing.T) {
			testenv.Parallel(t)
			cmd := start(t, in.exe, nil)
			pid := strconv.Itoa(cmd.Process.Pid)
			ours := run(t, nil, "gdb", gdbArgs(dir, in, "-p", pid, "-ex", "thread apply all py-bt")...)
			got := stacks(ours, gdbThreadRe)
			checkApp(t, "gdb", got)
			if in.oracle != "" {
				cp := run(t, nil, "gdb", "-nx", "-batch", "-iex", "set auto-load off", "-p", pid, "-ex", "source "+in.oracle, "-ex", "thread apply all py-bt")
				sameStacks(t, "gdb", got, stacks(cp, gdbThreadRe))
			}
			lldbOut := run(t, testenv.LLDBEnv(), "lldb", lldbArgs(dir, in, "-p", pid)...)
			sameStacks(t, "lldb", stacks(lldbOut, lldbThreadRe), got)

			// A core of the same process.
			core, _ := gcore(t, pid)
			coreOut := run(t, nil, "gdb", gdbArgs(dir, in, in.exe, core, "-ex", "thread apply all py-bt")...)
			sameStacks(t, "gdb core", stacks(coreOut, gdbThreadRe), got)
			lldbCore := run(t, testenv.LLDBEnv(), "lldb", lldbArgs(dir, in, "-c", core, in.exe)...)
			sameStacks(t, "lldb core", stacks(lldbCore, lldbThreadRe), got)
			if t.Failed() {
				t.Logf("gdb:\n%s\nlldb:\n%s\ngdb core:\n%s\nlldb core:\n%s", ours, lldbOut, coreOut, lldbCore)
			}
			cmd.Process.Signal(syscall.SIGKILL)
		})
		t.Run(in.name+"-stripped", func(t *testing.T) {
			testenv.Parallel(t)
			exe, env := testenv.Stripped(t, in.exe)
			cmd := start(t, exe, env)
			pid := strconv.Itoa(cmd.Process.Pid)
			ours := run(t, nil, "gdb", gdbArgs(dir, in, "-p", pid, "-ex", "thread apply all py-bt")...)
			checkApp(t, "gdb stripped", stacks(ours, gdbThreadRe))
			lldbOut := run(t, testenv.LLDBEnv(), "lldb", lldbArgs(dir, in, "-p", pid)...)
			checkApp(t, "lldb stripped", stacks(lldbOut, lldbThreadRe))
			// CPython's own extension loaded too (a fetched libpython.py):
			// it cannot find a frame without DWARF, so py-bt is the walker's.
			var withExt string
			if in.oracle != "" {
				withExt = run(t, nil, "gdb", gdbArgs(dir, in, "-p", pid, "-ex", "source "+in.oracle, "-ex", "python import pyattach_gdb; pyattach_gdb.claim()", "-ex", "thread apply all py-bt")...)
				checkApp(t, "gdb stripped with CPython's extension", stacks(withExt, gdbThreadRe))
			}
			if t.Failed() {
				t.Logf("gdb:\n%s\nlldb:\n%s\ngdb with CPython's extension:\n%s", ours, lldbOut, withExt)
			}
		})
	}
}
