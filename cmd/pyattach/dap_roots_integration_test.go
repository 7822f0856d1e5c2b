//go:build linux

package main

import (
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

// The DAP acceptance tests on Debian sid's adapters: gdb 18 (gdb
// -i=dap) and lldb-dap-22, run inside the sid root as an editor in that
// system would run them, on a python3.14 of the same root; and the same
// on Debian 13 (trixie)'s, gdb 16 and lldb-dap-19, on trixie's
// python3.13 (Debian 12 cannot have lldb-19 beside lldb-14). The Python
// runs in a pivot_root container of the root (an overlay: the cached
// root is never written; its /proc is mounted); each adapter runs in
// that container's mount and PID namespaces and root (nsenter -r -w),
// its stdin and stdout the DAP stream to the test, and attaches by the
// PID the container sees. pyattach lies in the overlay at
// /usr/local/bin/pyattach.
//
// What the plain adapters answer (measured here, Debian sid, November
// 2026; gdb 18.1-3, lldb 22.1.8; sid's libc has no debug symbols in
// the root):
//
// gdb -i=dap:
//   - initialize: success, then an "initialized" event; the banner comes
//     as "output" events (category stdout).
//   - attach {pid}: no answer until configurationDone (gdb defers the
//     attach); then configurationDone's response, attach's, the
//     "process", "thread" and "module" events, and "stopped" (reason
//     "attach", allThreadsStopped).
//   - threads: {"id": 1, "name": "python3.14"}, {"id": 2, "name":
//     "sleeper"}: gdb's global thread numbers, the OS thread name (3.14
//     gives a threading.Thread's name to its OS thread; the main thread
//     keeps the program's).
//   - stackTrace of thread 1, C frames only: "???" (libc, line 0),
//     clock_nanosleep, pysleep (timemodule.c:2267), time_sleep (:408),
//     _PyObject_VectorcallTstate, PyObject_Vectorcall,
//     _PyEval_EvalFrameDefault (generated_cases.c.h:1621),
//     PyEval_EvalCode, run_mod, _PyRun_File, ... main; the sources by
//     their build paths (/build/reproducible-path/python3.14-...),
//     each with a sourceReference.
//   - evaluate "py-bt" (repl): CPython's own extension (sid's
//     python3.14-gdb.py, auto-loaded) prints the Python traceback; that
//     is all the Python an editor gets.
//   - disconnect {terminateDebuggee: false}: gdb detaches, sends
//     "thread exited", "exited" (exitCode 0: gdb's word for detached)
//     and "terminated", and ends; the process runs on.
//   - attach {coreFile, program}: the same stop (reason "attach") and
//     C frames; threads named "Thread #1", "Thread #2".
//
// lldb-dap-22:
//   - initialize: success with "$__lldb_version"; "initialized" comes
//     after attach.
//   - attach {pid}: answered with configurationDone; without
//     stopOnEntry lldb-dap resumes the process at configurationDone
//     (stackTrace then fails "invalid thread", evaluate "can't evaluate
//     expressions when the process is running"), so the tests pass
//     stopOnEntry: true, as an editor's attach configuration can; then
//     "stopped" (reason "entry", signal SIGSTOP).
//   - threads: {"id": TID, "name": "python3.14"}: the OS thread ids
//     (as the container sees them).
//   - stackTrace: C frames only: ___lldb_unnamed_symbol_N and
//     clock_nanosleep (libc, "deemphasize", with a sourceReference for
//     their disassembly), pysleep, time_sleep, ...,
//     _PyEval_EvalFrameDefault, PyEval_EvalCode, ... (build paths
//     without "build-static/..").
//   - evaluate "`bt" (repl): lldb's bt; plain lldb has no py-bt.
//   - disconnect: detaches, answers, ends; the process runs on.
//   - attach {coreFile, program}: "stopped" (reason "entry") for each
//     thread, the same C frames; disconnect {terminateDebuggee: false}
//     fails: "error: elf-core does not support detaching from processes".
//
// Time from sending attach to the first stackTrace answer (runs on a
// 2-CPU machine shared with other jobs, so only the spread means
// anything; -v logs each run's):
//
//	                   live         core
//	gdb 18 plain       1.7-3.5 s    2.1-3.3 s
//	pyattach gdb       2.3-4.0 s    1.8-3.0 s
//	lldb-dap-22 plain  0.7-1.9 s    0.65-1.8 s
//	pyattach lldb-dap  0.9-2.2 s    0.7-1.5 s
//
// Trixie (gdb 16.3-1, lldb 19.1.7, python3.13 3.13.5 with its -dbg):
// gdb 16's DAP answers as gdb 18's, but its attach takes no coreFile
// (gdb 17 added it): "attach requires either 'pid' or 'target'", which
// pyattach passes on (dapRootSuite.gdbCore). lldb-dap-19's unwind ends
// after time_sleep on this python3.13 (dapRootSuite.lldbCut), so
// pyattach lldb-dap shows its C frames unmerged there; and lldb-dap-19
// aborts as it exits (dapRootAdapter.exitAborts). gdb 16 plain 1.6-2.5
// s, pyattach gdb 1.8-3.0 s; lldb-dap-19 plain 0.8-1.3 s, pyattach
// lldb-dap 0.9-1.6 s.
//
// pyattach's proxy adds its plan (resolved at attach) and one walker
// call per stackTrace: within the noise of the plain adapters here.
//
// Before the proxy, pyattach's plan under plain gdb -i=dap broke gdb's
// stackTrace ("'NoneType' object cannot be interpreted as an integer"):
// gdb's DAP runs the frame filters, and the bt filter's Python frames
// have no address; the proxy turns the filter off.

// dapRootApp: the main thread sleeps in inner, called from middle, outer
// and the module (inner's locals of several kinds), a second thread
// "sleeper" sleeps in nap while it handles a ValueError. Lines below
// (dapRootLine) name where each frame is.
const dapRootApp = `import sys, threading, time

def nap():
    try:
        raise ValueError("bad value")
    except ValueError:
        time.sleep(3600)

def inner(n):
    text = "hello"
    items = [1, 2, n]
    table = {"key": n}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(3600)

def middle(n):
    inner(n + 1)

def outer():
    middle(41)

threading.Thread(target=nap, name="sleeper", daemon=True).start()
outer()
`

// dapRootLine is the line each Python frame of dapRootApp runs.
var dapRootLine = map[string]int{"nap": 7, "inner": 15, "middle": 18, "outer": 21, "<module>": 24}

// dapRoot is a Debian root (sid or trixie) with python3.MINOR, gdb and
// that suite's lldb-dap-NN.
type dapRoot struct {
	suite, dir, exe string
	dapRootSuite
}

// dapRootSuite is what a suite's root has and what its adapters can do.
type dapRootSuite struct {
	lldbDAP string // the root's lldb-dap-NN (scripts/make-roots.sh installs it)
	// gdbCore: gdb's DAP attach takes coreFile (gdb 17+). gdb 16's
	// attach takes only pid or target ("attach requires either 'pid'
	// or 'target'"), and pyattach passes gdb's answer on.
	gdbCore bool
	// lldbCut: lldb's unwinder stops at time_sleep. lldb 19, with the
	// DWARF of trixie's python3.13-dbg (found by build id), takes a
	// function split by LTO into a hot and a cold part (DW_AT_ranges)
	// to start at its cold part and unwinds time_sleep's caller with
	// that part's CFI: the stack ends with garbage ("_PyRuntime")
	// after time_sleep, live and in a core, plain lldb as well. Without
	// the debug file (symbols.enable-external-lookup false) lldb 19
	// unwinds to _start. No eval-loop frame, so nothing to merge the
	// Python frames into: the proxy shows the C frames as lldb gives
	// them, then a label frame (dapCutLabel) and the Python frames the
	// walker read.
	lldbCut bool
}

var dapRootSuites = map[string]dapRootSuite{
	"sid":    {lldbDAP: "lldb-dap-22", gdbCore: true},
	"trixie": {lldbDAP: "lldb-dap-19", lldbCut: true},
}

func findDAPRoot(t *testing.T, suite, minor string) dapRoot {
	t.Helper()
	testenv.NeedRoot(t, "unshare, overlay mounts, pivot_root and nsenter")
	testenv.Need(t, "unshare")
	testenv.Need(t, "nsenter")
	for _, r := range testenv.Roots(t) {
		if r.Suite == suite && r.Minor == minor {
			s := dapRoot{suite: suite, dir: r.Dir, exe: r.Exe(), dapRootSuite: dapRootSuites[suite]}
			for _, p := range []string{s.exe, "/usr/bin/gdb", "/usr/bin/" + s.lldbDAP} {
				testenv.NeedFile(t, filepath.Join(s.dir, p), "sudo scripts/make-roots.sh makes the "+suite+" root with python"+minor+", gdb and "+s.lldbDAP)
			}
			return s
		}
	}
	testenv.Missing(t, "no %s root with Python %s in %s (sudo scripts/make-roots.sh)", suite, minor, testenv.RootsDir())
	return dapRoot{}
}

// dapRootProc is dapRootApp running in a container of a root.
type dapRootProc struct {
	root   dapRoot
	pid    int    // as this machine sees it
	nspid  int    // as the container (and the adapters) see it
	appDir string // this machine's directory that is the container's /mnt
}

// startDAPRootApp runs dapRootApp with the root's python in a container
// (pyattach in its overlay) and returns once both threads sleep.
func startDAPRootApp(t *testing.T, r dapRoot) dapRootProc {
	t.Helper()
	upper := t.TempDir()
	// The test binary's pyattach needs only the C library, which the
	// roots' is a newer one of.
	testenv.CopyFile(t, pyattachBin(t), filepath.Join(upper, "usr", "local", "bin", "pyattach"), 0o755)
	appDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(appDir, "app.py"), []byte(dapRootApp), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(dapRootApp, "\n")
	for fn, n := range dapRootLine {
		if want := map[string]string{"nap": "time.sleep", "inner": "time.sleep", "middle": "inner(", "outer": "middle(", "<module>": "outer()"}[fn]; !strings.Contains(lines[n-1], want) {
			t.Fatalf("dapRootLine[%s] = %d, but that line is %q", fn, n, lines[n-1])
		}
	}
	pid := startPivotedChild(t, r.dir, upper, appDir, r.exe)
	testenv.WaitSyscall(t, pid, testenv.AllThreads(), testenv.TimeSleep...)
	return dapRootProc{root: r, pid: pid, nspid: nsPID(t, pid), appDir: appDir}
}

// nsPID is pid as its own (innermost) PID namespace numbers it.
func nsPID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "NSpid:" {
			n, err := strconv.Atoi(f[len(f)-1])
			if err != nil {
				t.Fatalf("NSpid of %d: %q", pid, l)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/status has no NSpid", pid)
	return 0
}

// dapRootAdapter is an adapter command as the root runs it.
type dapRootAdapter struct {
	name string
	argv []string
	lldb bool // lldb-dap: thread ids are TIDs, attach needs stopOnEntry
	// exitAborts: lldb-dap 19 aborts as it exits ("terminate called
	// without an active exception"), after disconnect too: only its end
	// is checked, not how.
	exitAborts bool
}

func dapRootPlainAdapters(r dapRoot) []dapRootAdapter {
	return []dapRootAdapter{
		{name: "gdb", argv: []string{"gdb", "-i=dap"}},
		{name: r.lldbDAP, argv: []string{r.lldbDAP}, lldb: true, exitAborts: r.lldbDAP == "lldb-dap-19"},
	}
}

func dapRootPyattachAdapters(r dapRoot) []dapRootAdapter {
	return []dapRootAdapter{
		{name: "pyattach-gdb", argv: []string{"pyattach", "gdb", "-i=dap"}},
		{name: "pyattach-lldb-dap", argv: []string{"pyattach", "lldb-dap"}, lldb: true, exitAborts: r.lldbDAP == "lldb-dap-19"},
	}
}

// startDAPRootAdapter runs a inside p's container, on stdio.
func startDAPRootAdapter(t *testing.T, p dapRootProc, a dapRootAdapter) *dapClient {
	t.Helper()
	args := append([]string{"-t", strconv.Itoa(p.pid), "-m", "-p", "-r", "-w", "--"}, a.argv...)
	cmd := exec.Command(testenv.Need(t, "nsenter"), args...)
	cmd.Env = dapRootEnv
	return startDAPClient(t, a.name, cmd)
}

// dapRootEnv is the environment of the commands run in the root.
var dapRootEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8", "DEBUGINFOD_URLS="}

// dapStart is initialize, attach (args), configurationDone, and the
// stop; it returns when attach was sent.
func dapStart(t *testing.T, c *dapClient, args map[string]any) time.Time {
	t.Helper()
	c.call("initialize", map[string]any{"clientID": "pyattach-test", "adapterID": "pyattach",
		"linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"}, nil)
	// gdb answers attach only after configurationDone: send both first.
	sent := time.Now()
	attachCmd, attach := c.send("attach", args)
	doneCmd, done := c.send("configurationDone", nil)
	if m := c.response(attachCmd, attach); !m.Bool("success") {
		c.fail("attach %s failed: %s", dapJSON(args), dapJSON(m))
	}
	if m := c.response(doneCmd, done); !m.Bool("success") {
		c.fail("configurationDone failed: %s", dapJSON(m))
	}
	c.event("stopped", 0)
	return sent
}

func dapRootLiveAttach(p dapRootProc, a dapRootAdapter) map[string]any {
	args := map[string]any{"pid": p.nspid}
	if a.lldb {
		args["stopOnEntry"] = true
	}
	return args
}

func dapRootCoreAttach(p dapRootProc, core string) map[string]any {
	return map[string]any{"coreFile": core, "program": p.root.exe}
}

// dapThreadStacks lists the threads and each one's stackTrace; the first
// stackTrace's answer time is returned too.
func dapThreadStacks(t *testing.T, c *dapClient) ([]dapcThread, map[int][]dapcFrame, time.Time) {
	t.Helper()
	var th struct {
		Threads []dapcThread `json:"threads"`
	}
	c.call("threads", nil, &th)
	if len(th.Threads) != 2 {
		t.Fatalf("%s: threads %+v, want 2 (main and sleeper)", c.name, th.Threads)
	}
	stacks := map[int][]dapcFrame{}
	var first time.Time
	for _, x := range th.Threads {
		var st struct {
			StackFrames []dapcFrame `json:"stackFrames"`
		}
		c.call("stackTrace", map[string]any{"threadId": x.ID, "startFrame": 0, "levels": 1000}, &st)
		if first.IsZero() {
			first = time.Now()
		}
		stacks[x.ID] = st.StackFrames
	}
	return th.Threads, stacks, first
}

// dapMainStack is the stack among stacks that has a frame named by any
// of names (the main thread's PyEval_EvalCode or <module>).
func dapMainStack(t *testing.T, what string, stacks map[int][]dapcFrame, names ...string) (int, []dapcFrame) {
	t.Helper()
	for id, fs := range stacks {
		for _, n := range names {
			if dapFrameIndex(fs, n) >= 0 {
				return id, fs
			}
		}
	}
	t.Fatalf("%s: no thread's stack has %v:\n%s", what, names, dapStacksText(stacks))
	return 0, nil
}

// dapFrameIndex is the index of the first frame named name (a Python
// frame's name may carry a decoration around the function's name).
func dapFrameIndex(fs []dapcFrame, name string) int {
	re := regexp.MustCompile(`(^|[^\w<>.])` + regexp.QuoteMeta(name) + `($|[^\w<>])`)
	for i, f := range fs {
		if re.MatchString(f.Name) {
			return i
		}
	}
	return -1
}

func dapFramesText(fs []dapcFrame) string {
	var b strings.Builder
	for _, f := range fs {
		src := ""
		if f.Source != nil {
			src = f.Source.Path
			if f.Source.SourceReference != 0 {
				src += fmt.Sprintf(" (ref %d)", f.Source.SourceReference)
			}
		}
		hint := ""
		if f.PresentationHint != "" {
			hint = " [" + f.PresentationHint + "]"
		}
		fmt.Fprintf(&b, "  #%d %q line %d %s%s\n", f.ID, f.Name, f.Line, src, hint)
	}
	return b.String()
}

func dapStacksText(stacks map[int][]dapcFrame) string {
	var b strings.Builder
	for id, fs := range stacks {
		fmt.Fprintf(&b, "thread %d:\n%s", id, dapFramesText(fs))
	}
	return b.String()
}

// dapDisconnectRunsOn disconnects (the debuggee not terminated), waits for
// the adapter to end, and checks that the process runs on, untraced,
// both threads back in their sleep.
func dapDisconnectRunsOn(t *testing.T, c *dapClient, a dapRootAdapter, p dapRootProc) {
	t.Helper()
	c.call("disconnect", map[string]any{"terminateDebuggee": false}, nil)
	dapFinish(t, c, a)
	checkRunning(t, c.name+" after disconnect", p.pid)
	testenv.WaitSyscall(t, p.pid, testenv.AllThreads(), testenv.TimeSleep...)
}

// dapFinish waits for the adapter to end after disconnect: it exits 0
// (or ends at all, for an adapter that aborts as it exits; pyattach
// itself never panics).
func dapFinish(t *testing.T, c *dapClient, a dapRootAdapter) {
	t.Helper()
	err := c.finish()
	switch {
	case strings.Contains(c.stderrText(), "panic"):
		t.Errorf("%s: stderr after disconnect:\n%s", c.name, c.stderrText())
	case err != nil && a.exitAborts:
		t.Logf("%s: exit after disconnect: %v (exitAborts)", c.name, err)
	case err != nil:
		t.Errorf("%s: exit after disconnect: %v\nstderr:\n%s", c.name, err, c.stderrText())
	}
}

// dapRootCore takes a core of p with the root's gcore (gdb 18) inside the
// container, as a user of that system would, into its /mnt, and returns
// the core's path there; p runs on. A core written from this machine
// (gcore.Take, or gdb 13's gcore) names the threads by this machine's
// TIDs, while the root's libthread_db names them by the container's:
// gdb 18 then lists each thread twice (gdb 13's gcore also writes one
// thread under the container's TID without registers).
func dapRootCore(t *testing.T, p dapRootProc) string {
	t.Helper()
	cmd := exec.Command(testenv.Need(t, "nsenter"), "-t", strconv.Itoa(p.pid), "-m", "-p", "-r", "-w", "--",
		"gcore", "-o", "/mnt/core", strconv.Itoa(p.nspid))
	cmd.Env = dapRootEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the root's gcore: %v\n%s", err, out)
	}
	checkRunning(t, "after gcore", p.pid)
	return "/mnt/core." + strconv.Itoa(p.nspid)
}

// dapDisconnectCore ends a core's session: lldb-dap refuses to detach
// from a core ("elf-core does not support detaching from processes"),
// so the request says terminateDebuggee, which for a core ends nothing
// but the session.
func dapDisconnectCore(t *testing.T, c *dapClient, a dapRootAdapter) {
	t.Helper()
	c.call("disconnect", map[string]any{"terminateDebuggee": true}, nil)
	dapFinish(t, c, a)
}

// TestDAPSidPlain is the baseline: the plain adapters of the sid root
// (gdb 18's DAP, lldb-dap-22) attached to python3.14, then to a core
// of it, answer initialize, attach, configurationDone, threads (two,
// named python3.14) and stackTrace with C frames only (time_sleep,
// _PyEval_EvalFrameDefault, PyEval_EvalCode, no Python function), and
// leave the process running after disconnect. It checks the harness the
// pyattach tests use and logs (-v) the stackTrace and the time from
// attach to its answer.
func TestDAPSidPlain(t *testing.T) { testDAPRootPlain(t, "sid", "3.14") }

// TestDAPTrixiePlain is TestDAPSidPlain in the trixie root: gdb 16's
// DAP and lldb-dap-19 (Debian 13's lldb-19) on trixie's python3.13.
func TestDAPTrixiePlain(t *testing.T) { testDAPRootPlain(t, "trixie", "3.13") }

func testDAPRootPlain(t *testing.T, suite, minor string) {
	r := findDAPRoot(t, suite, minor)
	p := startDAPRootApp(t, r)
	core := dapRootCore(t, p)
	for _, a := range dapRootPlainAdapters(r) {
		t.Run(a.name, func(t *testing.T) {
			c := startDAPRootAdapter(t, p, a)
			attach := dapStart(t, c, dapRootLiveAttach(p, a))
			threads, stacks, first := dapThreadStacks(t, c)
			t.Logf("%s: attach to the first stackTrace answer: %v", a.name, first.Sub(attach).Round(time.Millisecond))
			t.Logf("%s: threads %+v", a.name, threads)
			if a.lldb && r.lldbCut {
				checkDAPCut(t, a.name, stacks)
			} else {
				_, fs := dapMainStack(t, a.name, stacks, "PyEval_EvalCode")
				t.Logf("%s: the main thread's stackTrace:\n%s", a.name, dapFramesText(fs))
				checkDAPPlainStack(t, a.name, fs)
			}
			dapDisconnectRunsOn(t, c, a, p)

			t.Run("core", func(t *testing.T) {
				c := startDAPRootAdapter(t, p, a)
				if !a.lldb && !r.gdbCore {
					checkDAPNoGDBCore(t, c, a, p, core)
					return
				}
				attach := dapStart(t, c, dapRootCoreAttach(p, core))
				_, stacks, first := dapThreadStacks(t, c)
				t.Logf("%s core: attach to the first stackTrace answer: %v", a.name, first.Sub(attach).Round(time.Millisecond))
				if a.lldb && r.lldbCut {
					checkDAPCut(t, a.name+" core", stacks)
				} else {
					_, fs := dapMainStack(t, a.name+" core", stacks, "PyEval_EvalCode")
					checkDAPPlainStack(t, a.name+" core", fs)
				}
				dapDisconnectCore(t, c, a)
			})
		})
	}
}

// checkDAPCut: lldb's unwind of each thread reaches time_sleep and no
// eval-loop frame (dapRootSuite.lldbCut). When this fails because the
// stacks go on, the lldb in the root unwinds such functions now: drop
// lldbCut for its suite.
func checkDAPCut(t *testing.T, what string, stacks map[int][]dapcFrame) {
	t.Helper()
	for _, fs := range stacks {
		if dapFrameIndex(fs, "time_sleep") < 0 || dapFrameIndex(fs, "_PyEval_EvalFrameDefault") >= 0 || dapFrameIndex(fs, "PyEval_EvalCode") >= 0 {
			t.Errorf("%s: want lldb's unwind cut after time_sleep (lldbCut), got:\n%s", what, dapStacksText(stacks))
			return
		}
	}
	t.Logf("%s: lldb's unwind ends after time_sleep (lldbCut):\n%s", what, dapStacksText(stacks))
}

// checkDAPNoGDBCore: gdb 16's DAP refuses an attach with coreFile
// (dapRootSuite.gdbCore), with an error response, and ends after
// disconnect.
func checkDAPNoGDBCore(t *testing.T, c *dapClient, a dapRootAdapter, p dapRootProc, core string) {
	t.Helper()
	c.call("initialize", map[string]any{"clientID": "pyattach-test", "adapterID": "pyattach",
		"linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"}, nil)
	attachCmd, attach := c.send("attach", dapRootCoreAttach(p, core))
	doneCmd, done := c.send("configurationDone", nil)
	m := c.response(attachCmd, attach)
	if m.Bool("success") || !strings.Contains(m.Str("message"), "attach requires either 'pid' or 'target'") {
		t.Errorf("%s: attach with coreFile: %s, want gdb 16's refusal (attach requires either 'pid' or 'target'); if it opens cores now, set gdbCore for the root", c.name, dapJSON(m))
	}
	c.response(doneCmd, done)
	t.Logf("%s: attach with coreFile: %s", c.name, m.Str("message"))
	dapDisconnectCore(t, c, a)
}

// checkDAPPlainStack: C frames in their order, no Python function.
func checkDAPPlainStack(t *testing.T, what string, fs []dapcFrame) {
	t.Helper()
	last := -1
	for _, n := range []string{"time_sleep", "_PyEval_EvalFrameDefault", "PyEval_EvalCode"} {
		i := dapFrameIndex(fs, n)
		if i <= last {
			t.Errorf("%s: frame %s at %d, want after %d:\n%s", what, n, i, last, dapFramesText(fs))
		}
		last = i
	}
	for fn := range dapRootLine {
		if i := dapFrameIndex(fs, fn); i >= 0 {
			t.Errorf("%s: the plain adapter shows a Python frame %q: the baseline changed:\n%s", what, fs[i].Name, dapFramesText(fs))
		}
	}
}

// TestDAPSidPython: pyattach gdb -i=dap (gdb 18) and pyattach lldb-dap
// (lldb-dap-22) inside the sid root, attached to python3.14 (and
// python3.15, the root's other Python) as an editor does: threads has
// the Python thread names; the main thread's stackTrace has inner,
// middle, outer and <module> (each at its line in app.py, by path or by
// a sourceReference that serves app.py) where the eval loop ran them,
// among the C frames, in the order they run (no _PyEval_EvalFrameDefault
// left); the sleeper thread's has nap, whose scopes hold the ValueError
// it handles; inner's scopes show its locals with their reprs, a list
// and a dict expand to their items; `py-bt` typed in the debug console
// prints the Python stack; forged ids get error responses; after
// disconnect (terminateDebuggee false) the process runs on, untraced.
// Then a core of the process (attach with coreFile and program) shows
// the same Python frames, exception and locals. -v logs the time from
// attach to the first stackTrace answer, to set against
// TestDAPSidPlain's.
func TestDAPSidPython(t *testing.T) { testDAPRootPython(t, "sid", "3.14", "3.15") }

// TestDAPTrixiePython is TestDAPSidPython in the trixie root:
// pyattach gdb -i=dap with gdb 16 and pyattach lldb-dap with
// lldb-dap-19, on trixie's python3.13.
func TestDAPTrixiePython(t *testing.T) { testDAPRootPython(t, "trixie", "3.13") }

func testDAPRootPython(t *testing.T, suite string, minors ...string) {
	for _, minor := range minors {
		t.Run("python"+minor, func(t *testing.T) {
			r := findDAPRoot(t, suite, minor)
			p := startDAPRootApp(t, r)
			core := dapRootCore(t, p)
			for _, a := range dapRootPyattachAdapters(r) {
				t.Run(a.name, func(t *testing.T) {
					cut := a.lldb && r.lldbCut
					mem := dapFileMappings(t, p.pid)
					c := startDAPRootAdapter(t, p, a)
					attach := dapStart(t, c, dapRootLiveAttach(p, a))
					threads, stacks, first := dapThreadStacks(t, c)
					t.Logf("%s: attach to the first stackTrace answer: %v", a.name, first.Sub(attach).Round(time.Millisecond))
					names := map[string]bool{}
					for _, th := range threads {
						names[th.Name] = true
					}
					if !names["MainThread"] || !names["sleeper"] {
						t.Errorf("%s: threads %+v, want MainThread and sleeper", a.name, threads)
					}
					pyStack := checkDAPPyStack
					if cut {
						pyStack = checkDAPCutPyStack
					}
					main, fs := dapMainStack(t, a.name, stacks, "<module>")
					t.Logf("%s: the main thread's stackTrace:\n%s", a.name, dapFramesText(fs))
					inner := pyStack(t, c, a.name, fs)
					for id, fs := range stacks {
						if id != main {
							checkDAPSleeper(t, c, a.name, fs)
						}
					}
					checkDAPInnerLocals(t, c, a.name, inner)
					if !cut {
						// lldb-dap-19 sometimes drops the pause that
						// follows a continue (seen in the trixie root):
						// the stale-id check runs on the other adapters.
						fs = checkDAPStaleAfterResume(t, c, p, a.name, main, inner, pyStack)
					}
					checkDAPPyBt(t, c, a.name, fs[0].ID)
					checkDAPForged(t, c, a.name)
					dapDisconnectRunsOn(t, c, a, p)
					checkDAPFileMappings(t, a.name, p.pid, mem)

					t.Run("core", func(t *testing.T) {
						c := startDAPRootAdapter(t, p, a)
						if !a.lldb && !r.gdbCore {
							checkDAPNoGDBCore(t, c, a, p, core)
							return
						}
						attach := dapStart(t, c, dapRootCoreAttach(p, core))
						_, stacks, first := dapThreadStacks(t, c)
						t.Logf("%s core: attach to the first stackTrace answer: %v", a.name, first.Sub(attach).Round(time.Millisecond))
						main, fs := dapMainStack(t, a.name+" core", stacks, "<module>")
						for id, fs := range stacks {
							if id != main {
								checkDAPSleeper(t, c, a.name+" core", fs)
							}
						}
						inner := pyStack(t, c, a.name+" core", fs)
						checkDAPInnerLocals(t, c, a.name+" core", inner)
						dapDisconnectCore(t, c, a)
					})
				})
			}
		})
	}
}

// checkDAPStaleAfterResume: after `continue`, the frame id and the
// variablesReference handed out before it (inner's frame, its locals)
// get error responses; after `pause` (the process stops again, back in
// its sleep) the new stackTrace's inner has its locals, and the old ids
// still fail. It returns the main thread's new frames.
func checkDAPStaleAfterResume(t *testing.T, c *dapClient, p dapRootProc, what string, main int, inner dapcFrame, pyStack func(*testing.T, *dapClient, string, []dapcFrame) dapcFrame) []dapcFrame {
	t.Helper()
	scopes := dapcScopes(t, c, inner.ID)
	if len(scopes) == 0 {
		t.Fatalf("%s: inner has no scopes", what)
	}
	oldRef := scopes[0].VariablesReference
	stale := func(when string) {
		t.Helper()
		for _, r := range []struct {
			command string
			args    map[string]any
		}{
			{"scopes", map[string]any{"frameId": inner.ID}},
			{"variables", map[string]any{"variablesReference": oldRef}},
			{"evaluate", map[string]any{"expression": "n", "context": "watch", "frameId": inner.ID}},
		} {
			if m := c.response(c.send(r.command, r.args)); m.Bool("success") {
				t.Errorf("%s: %s: %s %s with an id from before continue succeeded: %s", what, when, r.command, dapJSON(r.args), dapJSON(m))
			}
		}
	}
	c.call("continue", map[string]any{"threadId": main}, nil)
	stale("running")
	// pause before the adapter let the threads run stops nothing.
	waitDAPUntraced(t, p.pid)
	testenv.WaitSyscall(t, p.pid, testenv.AllThreads(), testenv.TimeSleep...)
	after := len(c.c.Events())
	c.call("pause", map[string]any{"threadId": main}, nil)
	c.event("stopped", after)
	stale("stopped again")
	_, stacks, _ := dapThreadStacks(t, c)
	_, fs := dapMainStack(t, what+" after pause", stacks, "<module>")
	again := pyStack(t, c, what+" after pause", fs)
	if again.ID == inner.ID {
		t.Errorf("%s: inner's frame id %d handed out again after the resume", what, inner.ID)
	}
	checkDAPInnerLocals(t, c, what+" after pause", again)
	return fs
}

// checkDAPPyStack checks the main thread's frames: time_sleep, then inner,
// middle, outer, <module> at their lines in app.py, then
// PyEval_EvalCode; no eval-loop frame left. It returns inner's frame.
func checkDAPPyStack(t *testing.T, c *dapClient, what string, fs []dapcFrame) dapcFrame {
	t.Helper()
	last := -1
	for _, n := range []string{"time_sleep", "inner", "middle", "outer", "<module>", "PyEval_EvalCode"} {
		i := dapFrameIndex(fs, n)
		if i <= last {
			t.Fatalf("%s: frame %s at %d, want after %d:\n%s", what, n, i, last, dapFramesText(fs))
		}
		last = i
		if want, ok := dapRootLine[n]; ok {
			checkDAPPyFrame(t, c, what, fs[i], want)
		}
	}
	if i := dapFrameIndex(fs, "_PyEval_EvalFrameDefault"); i >= 0 {
		t.Errorf("%s: the eval loop's frame #%d is left among the Python frames:\n%s", what, i, dapFramesText(fs))
	}
	return fs[dapFrameIndex(fs, "inner")]
}

// dapCutLabel is the frame the proxy puts between the C frames of a
// stack the debugger stopped unwinding before the eval loop and the
// Python frames the walker read.
const dapCutLabel = "[the debugger did not unwind further; Python frames read from memory]"

// checkDAPCutPyStack is checkDAPPyStack for a stack the debugger stopped
// unwinding after time_sleep (dapRootSuite.lldbCut): the Python frames
// follow time_sleep and the proxy's label, in order, at their lines.
func checkDAPCutPyStack(t *testing.T, c *dapClient, what string, fs []dapcFrame) dapcFrame {
	t.Helper()
	checkDAPCut(t, what, map[int][]dapcFrame{0: fs})
	label := -1
	for i, f := range fs {
		if f.Name == dapCutLabel && f.PresentationHint == "label" {
			label = i
		}
	}
	if label < 0 || label < dapFrameIndex(fs, "time_sleep") {
		t.Fatalf("%s: no label frame after time_sleep:\n%s", what, dapFramesText(fs))
	}
	last := label
	for _, n := range []string{"inner", "middle", "outer", "<module>"} {
		i := dapFrameIndex(fs, n)
		if i <= last {
			t.Fatalf("%s: frame %s at %d, want after %d:\n%s", what, n, i, last, dapFramesText(fs))
		}
		last = i
		checkDAPPyFrame(t, c, what, fs[i], dapRootLine[n])
	}
	return fs[dapFrameIndex(fs, "inner")]
}

// checkDAPSleeper: the sleeper thread's stack has nap at its line, and
// nap's scopes, the Locals and the exception it handles: ValueError('bad
// value').
func checkDAPSleeper(t *testing.T, c *dapClient, what string, fs []dapcFrame) {
	t.Helper()
	i := dapFrameIndex(fs, "nap")
	if i < 0 || i < dapFrameIndex(fs, "time_sleep") {
		t.Errorf("%s: the sleeper thread has no nap frame after time_sleep:\n%s", what, dapFramesText(fs))
		return
	}
	checkDAPPyFrame(t, c, what, fs[i], dapRootLine["nap"])
	scopes := dapcScopes(t, c, fs[i].ID)
	for _, sc := range scopes[min(1, len(scopes)):] {
		for _, v := range dapcVariables(t, c, sc.VariablesReference) {
			if strings.Contains(v.Name+" "+v.Type, "ValueError") && strings.Contains(v.Value, "bad value") {
				return
			}
		}
	}
	t.Errorf("%s: nap's scopes %+v: none after the locals holds the ValueError it handles", what, scopes)
}

// dapcScopes is frame id's scopes.
func dapcScopes(t *testing.T, c *dapClient, id int) []dapcScope {
	t.Helper()
	var sc struct {
		Scopes []dapcScope `json:"scopes"`
	}
	c.call("scopes", map[string]any{"frameId": id}, &sc)
	return sc.Scopes
}

// checkDAPPyFrame: a Python frame is at line want of app.py, which the
// editor opens by path (as the adapter sees it: the container's
// /mnt/app.py) or reads through the source request.
func checkDAPPyFrame(t *testing.T, c *dapClient, what string, f dapcFrame, want int) {
	t.Helper()
	if f.Line != want {
		t.Errorf("%s: frame %q at line %d, want %d", what, f.Name, f.Line, want)
	}
	switch {
	case f.Source == nil:
		t.Errorf("%s: frame %q has no source", what, f.Name)
	case f.Source.SourceReference > 0:
		var src struct {
			Content string `json:"content"`
		}
		c.call("source", map[string]any{"source": f.Source, "sourceReference": f.Source.SourceReference}, &src)
		if src.Content != dapRootApp {
			t.Errorf("%s: frame %q: source %d reads %q, want app.py", what, f.Name, f.Source.SourceReference, src.Content)
		}
	case f.Source.Path != "/mnt/app.py":
		t.Errorf("%s: frame %q: source path %q, want /mnt/app.py", what, f.Name, f.Source.Path)
	}
}

// checkDAPInnerLocals: inner's scopes have a Locals scope with its
// arguments and locals (reprs as the terminal shows them); items and
// table expand to their items.
func checkDAPInnerLocals(t *testing.T, c *dapClient, what string, inner dapcFrame) {
	t.Helper()
	scopes := dapcScopes(t, c, inner.ID)
	if len(scopes) != 1 || scopes[0].VariablesReference <= 0 {
		t.Fatalf("%s: inner's scopes %+v, want its locals (and no exception: the main thread handles none)", what, scopes)
	}
	vars := dapcVariables(t, c, scopes[0].VariablesReference)
	want := map[string]string{"n": "42", "text": "'hello'", "items": "[1, 2, 42]", "table": "{'key': 42}"}
	got := map[string]dapcVariable{}
	for _, v := range vars {
		got[v.Name] = v
	}
	for name, value := range want {
		if got[name].Value != value {
			t.Errorf("%s: inner's local %s = %q, want %q (locals %+v)", what, name, got[name].Value, value, vars)
		}
	}
	children := map[string]map[string]string{
		"items": {"[0]": "1", "[1]": "2", "[2]": "42"},
		"table": {"'key'": "42"},
	}
	for name, want := range children {
		ref := got[name].VariablesReference
		if ref <= 0 {
			t.Errorf("%s: inner's %s cannot be expanded (variablesReference %d)", what, name, ref)
			continue
		}
		kids := map[string]string{}
		for _, v := range dapcVariables(t, c, ref) {
			kids[v.Name] = v.Value
		}
		for k, v := range want {
			if kids[k] != v {
				t.Errorf("%s: %s's child %s = %q, want %q (children %v)", what, name, k, kids[k], v, kids)
			}
		}
	}
}

func dapcVariables(t *testing.T, c *dapClient, ref int) []dapcVariable {
	t.Helper()
	var vs struct {
		Variables []dapcVariable `json:"variables"`
	}
	c.call("variables", map[string]any{"variablesReference": ref}, &vs)
	return vs.Variables
}

// checkDAPPyBt: `py-bt` typed in the debug console (evaluate, context
// repl, the innermost frame selected) prints the main thread's Python
// stack, innermost first, in the result or as output events. It logs
// (does not fail on) the process running meanwhile: under pyattach gdb
// on sid's python3.14 (live), py-bt makes gdb 18 call a function in the
// process ("continued", then "stopped" with reason "function call", and
// the proxy drops its ids), seen every run (November 2026); CPython
// 3.14's python3.14-gdb.py finds the thread state through
// pthread_getspecific(...) when _Py_tss_tstate is 0 (the GIL released
// in time.sleep), which is such a call.
func checkDAPPyBt(t *testing.T, c *dapClient, what string, frame int) {
	t.Helper()
	after := len(c.c.Events())
	var ev struct {
		Result string `json:"result"`
	}
	c.call("evaluate", map[string]any{"expression": "py-bt", "context": "repl", "frameId": frame}, &ev)
	out := ev.Result
	for _, e := range c.c.Events()[after:] {
		switch e.Str("event") {
		case "output":
			out += e.Obj("body").Str("output")
		case "continued", "stopped":
			// An inferior call (gdb: stopped, reason "function call").
			t.Logf("%s: py-bt in the debug console: the process ran: %s", what, dapJSON(e))
		}
	}
	last := -1
	for _, fn := range []string{"inner", "middle", "outer", "<module>"} {
		s := fmt.Sprintf(`File "/mnt/app.py", line %d, in %s`, dapRootLine[fn], fn)
		i := strings.Index(out, s)
		if i <= last {
			t.Errorf("%s: py-bt in the debug console: no %q after the frames before it in:\n%s", what, s, out)
		}
		last = i
	}
}

// checkDAPForged: a frameId, variablesReference or sourceReference the
// proxy never handed out gets an error response (and the session goes
// on: the process still answers threads).
func checkDAPForged(t *testing.T, c *dapClient, what string) {
	t.Helper()
	const forged = 987654321
	for _, r := range []struct {
		command string
		args    map[string]any
	}{
		{"scopes", map[string]any{"frameId": forged}},
		{"variables", map[string]any{"variablesReference": forged}},
		{"source", map[string]any{"sourceReference": int64(1)<<40 + forged, "source": map[string]any{"sourceReference": int64(1)<<40 + forged}}},
		{"evaluate", map[string]any{"expression": "1", "context": "watch", "frameId": forged}},
	} {
		if m := c.response(c.send(r.command, r.args)); m.Bool("success") {
			t.Errorf("%s: %s %s with a forged id succeeded: %s", what, r.command, dapJSON(r.args), dapJSON(m))
		}
	}
	c.call("threads", nil, nil)
}

// dapFileMappings reads the bytes of pid's file-backed mappings that
// cannot be written (no "w": code, read-only data, RELRO) through
// /proc/PID/mem, keyed by their maps line. Writable mappings (.data,
// .bss, heap, stacks, the kernel's rseq area) change as the process
// runs; these change only when a debugger writes them (a breakpoint, a
// patched instruction).
func dapFileMappings(t *testing.T, pid int) map[string][]byte {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	got := map[string][]byte{}
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || strings.Contains(f[1], "w") || !strings.HasPrefix(f[1], "r") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			t.Fatalf("/proc/%d/maps: %q", pid, l)
		}
		b := make([]byte, end-start)
		if _, err := mem.ReadAt(b, int64(start)); err != nil {
			t.Fatalf("/proc/%d/mem at %s: %v", pid, f[0], err)
		}
		got[l] = b
	}
	if len(got) == 0 {
		t.Fatalf("/proc/%d/maps has no read-only file mapping", pid)
	}
	return got
}

// checkDAPFileMappings: pid's read-only file mappings are the ones of
// before, byte for byte (nothing the debugger wrote is left in them).
func checkDAPFileMappings(t *testing.T, what string, pid int, before map[string][]byte) {
	t.Helper()
	after := dapFileMappings(t, pid)
	for l, b := range before {
		a, ok := after[l]
		switch {
		case !ok:
			t.Errorf("%s: after disconnect the mapping %q is gone", what, l)
		case string(a) != string(b):
			i := 0
			for i < len(a) && a[i] == b[i] {
				i++
			}
			t.Errorf("%s: after disconnect the mapping %q differs at offset %#x", what, l, i)
		}
	}
	for l := range after {
		if _, ok := before[l]; !ok {
			t.Errorf("%s: after disconnect a new read-only file mapping %q", what, l)
		}
	}
	t.Logf("%s: %d read-only file mappings unchanged", what, len(before))
}

// waitDAPUntraced waits until no thread of pid is in a tracing stop
// (state "t" in /proc/PID/task/TID/stat): the debugger let them run.
func waitDAPUntraced(t *testing.T, pid int) {
	t.Helper()
	ctx, cancel := testenv.Context(t)
	defer cancel()
	for {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(tasks) == 0 {
			t.Fatalf("threads of %d: %v", pid, err)
		}
		stopped := ""
		for _, task := range tasks {
			b, err := os.ReadFile(task)
			if err != nil {
				stopped = task
				break
			}
			// pid (comm) STATE ...: comm may hold spaces and parentheses.
			if i := strings.LastIndexByte(string(b), ')'); i < 0 || i+2 >= len(b) || b[i+2] == 't' || b[i+2] == 'T' {
				stopped = task
				break
			}
		}
		if stopped == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the threads of %d never ran after continue (%s)", pid, stopped)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
