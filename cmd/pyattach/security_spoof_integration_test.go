package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/plan/pyquote"
	"github.com/pyattach/pyattach/detect/testenv"
)

// What a hostile process names its code objects and a thread: an OSC 52
// clipboard write, a clear screen, a fake frame after a newline, a
// right-to-left override.
const (
	spoofOSC   = "\x1b]52;c;SGVsbG8=\x07"
	spoofClear = "\x1b[2J"
	spoofFrame = "x\n  File \"/etc/spoof.py\", line 1, in fake"
)

// spoofApp renames its own code objects through code.replace: leaf's
// name holds the OSC 52 sequence and its file the fake frame, middle's
// name the fake frame and its file a clear screen and a bidi override;
// a worker thread names itself with an escape sequence for the OS.
const spoofApp = `import sys, time, threading
OSC, CLEAR, FRAME = sys.argv[1:4]
def leaf():
    time.sleep(1000)
def middle():
    leaf()
def rename(f, **kw):
    if sys.version_info >= (3, 11) and "co_name" in kw:
        kw["co_qualname"] = kw["co_name"]
    f.__code__ = f.__code__.replace(**kw)
rename(leaf, co_name=OSC + "leaf", co_filename=FRAME)
rename(middle, co_name=FRAME, co_filename="/tmp/" + CLEAR + "\u202eyp.ppa")
def worker():
    import ctypes
    ctypes.CDLL(None).prctl(15, b"w\x1b]0;T\x07", 0, 0, 0)
    started.set()
    time.sleep(1000)
started = threading.Event()
threading.Thread(target=worker, daemon=True).start()
started.wait()
print("ready", flush=True)
middle()
`

// checkNoSpoof: out holds no ESC byte, no line starting a frame in
// /etc/spoof.py, no raw bidi override, and the escaped forms of the names.
func checkNoSpoof(t *testing.T, what, out string, want ...string) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Errorf("%s: the output holds a raw control character:\n%q", what, out)
	}
	if regexp.MustCompile(`(?m)^\s*File "/etc/spoof\.py"`).MatchString(out) {
		t.Errorf("%s: a faked frame line was printed:\n%s", what, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: %q not in the output:\n%s", what, w, out)
		}
	}
}

// TestSpoofedNamesEscaped: a real process that renames its code objects
// and a thread with escape sequences and a newline cannot drive the
// terminal or fake a frame through pyattach dump, the walker's py-bt in
// gdb (pyattach-bt, and py-bt, which CPython's extension would answer
// raw) and in lldb: every name prints escaped; --json keeps it exact.
func TestSpoofedNamesEscaped(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	pys := []testenv.Python{testenv.Debian(t), testenv.Pyenv(t, "3.12"), testenv.Pyenv(t, "3.13+")}
	leafName := `\x1b]52;c;SGVsbG8=\x07leaf`
	fakeEsc := `x\n  File "/etc/spoof.py", line 1, in fake`
	for _, py := range pys {
		t.Run(filepath.Base(py.Prefix)+"-"+py.Version, func(t *testing.T) {
			app := filepath.Join(t.TempDir(), "app.py")
			testenv.WriteFile(t, app, []byte(spoofApp), 0o644)
			cmd := exec.Command(py.Exe, app, spoofOSC, spoofClear, spoofFrame)
			testenv.Start(t, cmd)
			pid := strconv.Itoa(cmd.Process.Pid)
			env := scriptEnv(t.TempDir())
			bin := pyattachBin(t)
			frameLeaf := `File "` + fakeEsc + `", line 4, in ` + leafName
			frameMiddle := `File "/tmp/\x1b[2J\u202eyp.ppa", line 6, in ` + fakeEsc

			out, _ := pyattachOK(t, "pyattach dump", bin, env, "dump", pid)
			checkNoSpoof(t, "dump", out, frameLeaf, frameMiddle, `"w\x1b]0;T\x07"`)

			d := dumpJSON(t, env, pid)
			found := false
			for _, th := range d.Threads {
				for _, f := range th.Frames {
					found = found || f.Function == spoofOSC+"leaf" && f.File == spoofFrame
				}
			}
			if !found {
				t.Errorf("dump --json does not carry the raw names: %+v", d.Threads)
			}
			raw, _ := pyattachOK(t, "pyattach dump --json", bin, env, "dump", "--json", pid)
			checkNoSpoof(t, "dump --json", raw)

			for _, c := range []string{"pyattach-bt", "py-bt", "pyattach-list"} {
				out := mustRunIn(t, "pyattach gdb "+c, "", env, bin, "--offline", "gdb", "-nx", "-batch", "-p", pid, "-ex", c)
				if c == "pyattach-list" {
					checkNoSpoof(t, "gdb "+c, out, "Unable to open "+fakeEsc)
					continue
				}
				checkNoSpoof(t, "gdb "+c, out, frameLeaf, frameMiddle)
			}
			out = mustRunIn(t, "pyattach lldb", "", append(env, testenv.LLDBEnv()...), bin, "--offline", "lldb", "-b", "-p", pid, "-o", "py-bt all")
			// lldb prints the thread names itself when it attaches (its
			// thread-stop-format): only py-bt's output is pyattach's.
			_, out, ok := strings.Cut(out, "(lldb) py-bt all\n")
			if !ok {
				t.Fatalf("lldb ran no py-bt all:\n%s", out)
			}
			checkNoSpoof(t, "lldb py-bt all", out, frameLeaf, frameMiddle, `(os name "w\x1b]0;T\x07")`)
		})
	}
}

// hostileFilesApp runs a chain of one-line functions whose code objects
// name, as their files, the paths given as arguments (each frame's line
// is 1), and sleeps in the innermost.
const hostileFilesApp = `import sys, time
names = sys.argv[1:]
def leaf(): time.sleep(1000)
fns = [leaf]
for i, name in enumerate(names):
    exec("def f%d(): fns[%d]()" % (i, i))
    f = globals()["f%d" % i]
    f.__code__ = f.__code__.replace(co_filename=name, co_firstlineno=1)
    fns.append(f)
print("ready", flush=True)
fns[-1]()
`

// TestDumpFilesTheTargetNames: source lines are read only from regular
// files the process itself could read. A process of user nobody whose
// frames name a root-only secret, /etc/shadow, /dev/zero and a FIFO;
// and a root process naming /dev/zero and a FIFO: pyattach dump
// finishes, prints every frame, prints no line of either file, and
// leaves the process running, not stopped.
func TestDumpFilesTheTargetNames(t *testing.T) {
	testenv.NeedRoot(t, "to run a target as nobody and plant a root-only file")
	testenv.Need(t, "gdb")
	py := testenv.Debian(t)
	dir := searchableTempDir(t, "pyattach-hostile")
	secret := filepath.Join(dir, "secret.py")
	const secretLine = "PYATTACH-SECRET-LINE-4242"
	testenv.WriteFile(t, secret, []byte(secretLine+"\n"), 0o600)
	fifo := filepath.Join(dir, "fifo.py")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(fifo, 0o666)
	app := filepath.Join(dir, "app.py")
	testenv.WriteFile(t, app, []byte(hostileFilesApp), 0o644)
	shadowFirst := ""
	if b, err := os.ReadFile("/etc/shadow"); err == nil {
		shadowFirst, _, _ = strings.Cut(string(b), "\n")
	}

	for _, c := range []struct {
		name   string
		nobody bool
		files  []string
	}{
		{"nobody", true, []string{secret, "/etc/shadow", "/dev/zero", fifo}},
		{"root", false, []string{"/dev/zero", fifo}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(py.Exe, append([]string{app}, c.files...)...)
			cmd.Dir = dir
			if c.nobody {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			testenv.Start(t, cmd)
			pid := cmd.Process.Pid
			env := scriptEnv(t.TempDir())

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			run := exec.CommandContext(ctx, pyattachBin(t), "dump", strconv.Itoa(pid))
			run.Env = env
			outb, err := run.CombinedOutput()
			out := string(outb)
			if ctx.Err() != nil {
				t.Fatalf("pyattach dump did not finish: %s", out)
			}
			if err != nil {
				t.Fatalf("pyattach dump: %v\n%s", err, out)
			}
			for i, f := range c.files {
				if !strings.Contains(out, fmt.Sprintf("File %q, line 1, in f%d\n", f, i)) {
					t.Errorf("no frame in %s:\n%s", f, out)
				}
			}
			if !strings.Contains(out, "in leaf\n") {
				t.Errorf("no leaf frame:\n%s", out)
			}
			if c.nobody && strings.Contains(out, secretLine) {
				t.Errorf("a line of the root-only %s was printed:\n%s", secret, out)
			}
			if shadowFirst != "" && strings.Contains(out, shadowFirst) {
				t.Errorf("the first line of /etc/shadow was printed:\n%s", out)
			}
			if st := procState(t, pid); st == "t" || st == "T" {
				t.Errorf("the process is left stopped (state %s)", st)
			}
		})
	}
}

// procState is the state letter of /proc/PID/stat.
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) == 0 {
		t.Fatalf("bad /proc/%d/stat: %q", pid, s)
	}
	return f[0]
}

// renameApp names a worker thread plainly and waits for the file named
// by its argument (gdb writes it once attached, then continues); then
// the thread renames itself with an escape sequence and signals itself:
// gdb's stop notice names the thread.
const renameApp = `import ctypes, os, signal, sys, threading, time
signal.signal(signal.SIGUSR1, lambda *a: None)
def worker():
    ctypes.CDLL(None).prctl(15, b"plain", 0, 0, 0)
    started.set()
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.05)
    ctypes.CDLL(None).prctl(15, b"r\x1b]0;T\x07", 0, 0, 0)
    signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
    time.sleep(1000)
started = threading.Event()
threading.Thread(target=worker, daemon=True).start()
started.wait()
print("ready", flush=True)
time.sleep(1000)
`

// TestThreadNamesEscaped: the debuggers' own listings of a real process
// whose thread names itself with an escape sequence print the name
// escaped: gdb's info threads and thread apply headers, lldb's stop
// report on attach and thread list; and gdb's stop notice for a thread
// renamed while running shows no raw name either.
func TestThreadNamesEscaped(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	py := testenv.Debian(t)
	const escaped = `w\x1b]0;T\x07`
	noRaw := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s: the output holds a raw ESC or BEL:\n%q", what, out)
		}
	}
	app := filepath.Join(t.TempDir(), "app.py")
	testenv.WriteFile(t, app, []byte(spoofApp), 0o644)
	cmd := exec.Command(py.Exe, app, spoofOSC, spoofClear, spoofFrame)
	testenv.Start(t, cmd)
	pid := strconv.Itoa(cmd.Process.Pid)
	env := scriptEnv(t.TempDir())
	bin := pyattachBin(t)

	out := mustRunIn(t, "pyattach gdb", "", env, bin, "--offline", "gdb", "-nx", "-batch", "-p", pid, "-ex", "info threads", "-ex", "thread apply all bt 1")
	noRaw("gdb", out)
	if !regexp.MustCompile(`(?m)^  2 +Thread .*"` + regexp.QuoteMeta(escaped) + `" `).MatchString(out) {
		t.Errorf("gdb: info threads shows no escaped name %q:\n%s", escaped, out)
	}
	if !regexp.MustCompile(`(?m)^Thread 2 \(.*"` + regexp.QuoteMeta(escaped) + `"\):$`).MatchString(out) {
		t.Errorf("gdb: thread apply all shows no escaped name %q in its header:\n%s", escaped, out)
	}

	out = mustRunIn(t, "pyattach lldb", "", append(env, testenv.LLDBEnv()...), bin, "--offline", "lldb", "-b", "-p", pid, "-o", "thread list")
	noRaw("lldb", out)
	report, list, ok := strings.Cut(out, "(lldb) thread list\n")
	if !ok {
		t.Fatalf("lldb ran no thread list:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^  thread #2, name = '` + regexp.QuoteMeta(escaped) + `', stop reason = `).MatchString(report) {
		t.Errorf("lldb: the stop report on attach shows no escaped name %q:\n%s", escaped, report)
	}
	if !regexp.MustCompile(`(?m)^  thread #2: tid = \d+, .*, name = '` + regexp.QuoteMeta(escaped) + `', stop reason = `).MatchString(list) {
		t.Errorf("lldb: thread list shows no escaped name %q:\n%s", escaped, list)
	}
	if !strings.Contains(list, "thread #1: tid = "+pid+", ") || !strings.Contains(list, ", name = 'python3") {
		t.Errorf("lldb: thread list lost the rest of its format:\n%s", list)
	}

	// Renamed while gdb lets it run: the stop notice ("Thread 2 NAME
	// received signal") is printed before gdb's Python hears of the stop.
	t.Run("renamed", func(t *testing.T) {
		dir := t.TempDir()
		app, goFile := filepath.Join(dir, "rename.py"), filepath.Join(dir, "go")
		testenv.WriteFile(t, app, []byte(renameApp), 0o644)
		cmd := exec.Command(py.Exe, app, goFile)
		testenv.Start(t, cmd)
		out := mustRunIn(t, "pyattach gdb continue", "", env, bin, "--offline", "gdb", "-nx", "-batch", "-p", strconv.Itoa(cmd.Process.Pid),
			"-ex", "info threads", "-ex", "python open("+pyquote.String(goFile)+", 'w').close()", "-ex", "continue", "-ex", "info threads")
		noRaw("gdb continue", out)
		if !strings.Contains(out, "received signal SIGUSR1") {
			t.Fatalf("gdb saw no signal:\n%s", out)
		}
		if !regexp.MustCompile(`(?m)^\* 2 +Thread .*"r\\x1b\]0;T\\x07" `).MatchString(out) {
			t.Errorf("gdb: info threads after the stop shows no escaped name:\n%s", out)
		}
	})
}

// TestDumpCoreReadsAsItsUser: a core's source files are read as the
// core's user (NT_PRPSINFO's pr_uid and pr_gid). A process of user
// nobody names a file in a 0700 directory of nobody's and a root-only
// file; from its gcore core, pyattach dump and the walker's py-bt in
// gdb print the line of nobody's file and not the root-only one.
func TestDumpCoreReadsAsItsUser(t *testing.T) {
	testenv.NeedRoot(t, "to run a target as nobody and plant a root-only file")
	testenv.Need(t, "gdb")
	gcore := testenv.Need(t, "gcore")
	py := testenv.Debian(t)
	dir := searchableTempDir(t, "pyattach-corecreds")
	private := filepath.Join(dir, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(private, "own.py")
	const ownLine, secretLine = "PYATTACH-OWN-LINE-4242", "PYATTACH-SECRET-LINE-4242"
	testenv.WriteFile(t, own, []byte(ownLine+"\n"), 0o600)
	for _, p := range []string{private, own} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(dir, "secret.py")
	testenv.WriteFile(t, secret, []byte(secretLine+"\n"), 0o600)
	app := filepath.Join(dir, "app.py")
	testenv.WriteFile(t, app, []byte(hostileFilesApp), 0o644)

	cmd := exec.Command(py.Exe, app, own, secret)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	testenv.Start(t, cmd)
	pid := strconv.Itoa(cmd.Process.Pid)
	core := filepath.Join(t.TempDir(), "core")
	if out, err := exec.Command(gcore, "-o", core, pid).CombinedOutput(); err != nil {
		t.Fatalf("gcore: %v\n%s", err, out)
	}
	core += "." + pid
	env := scriptEnv(t.TempDir())
	bin := pyattachBin(t)

	check := func(what, out string) {
		t.Helper()
		if !strings.Contains(out, fmt.Sprintf("File %q, line 1, in f0\n    %s\n", own, ownLine)) {
			t.Errorf("%s: the line of nobody's own %s is not printed:\n%s", what, own, out)
		}
		if !strings.Contains(out, fmt.Sprintf("File %q, line 1, in f1\n", secret)) {
			t.Errorf("%s: no frame in %s:\n%s", what, secret, out)
		}
		if strings.Contains(out, secretLine) {
			t.Errorf("%s: a line of the root-only %s was printed:\n%s", what, secret, out)
		}
	}
	out, _ := pyattachOK(t, "pyattach dump CORE", bin, env, "dump", core)
	check("dump", out)
	out = mustRunIn(t, "pyattach gdb -c CORE", "", env, bin, "--offline", "gdb", "-nx", "-batch", "-c", core, "-ex", "pyattach-bt")
	check("gdb pyattach-bt", out)

	// The same core, owned by another user who could have written any
	// pr_uid into it: read as anyone, nobody's line is not printed.
	if err := os.Chown(core, 1, 1); err != nil {
		t.Fatal(err)
	}
	out, _ = pyattachOK(t, "pyattach dump CORE (owned by uid 1)", bin, env, "dump", core)
	if strings.Contains(out, ownLine) || strings.Contains(out, secretLine) {
		t.Errorf("a core another user wrote: its claimed user's files were read:\n%s", out)
	}
}

// searchableTempDir is a directory under /tmp that every user may
// search (t.TempDir's are 0700 under a 0700 parent), removed at the end:
// a target run as nobody reaches the files the test puts there.
func searchableTempDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
