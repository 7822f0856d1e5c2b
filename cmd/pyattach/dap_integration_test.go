//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/dap"
	"github.com/pyattach/pyattach/cmd/internal/dap/daptest"
	"github.com/pyattach/pyattach/cmd/internal/gcore"
	"github.com/pyattach/pyattach/detect/testenv"
)

// proxyApp handles an exception in middle and sleeps in inner with locals
// of every kind, beside a thread named dap-worker; SIGUSR1 appends
// "alive" to $DAP_ALIVE.
const proxyApp = `import os, signal, sys, threading, time
class Box:
    def __init__(self): self.size = 3
def inner(n, items):
    box = Box()
    sys.stdout.write("ready\n"); sys.stdout.flush()
    while True: time.sleep(1000)
def middle():
    try: raise ValueError("bad")
    except ValueError: inner(7, [1, "two", {"k": 3.5}])
def outer():
    middle()
def on_usr1(sig, frame):
    with open(os.environ["DAP_ALIVE"], "a") as f:
        f.write("alive\n")
signal.signal(signal.SIGUSR1, on_usr1)
ev = threading.Event()
threading.Thread(target=ev.wait, name="dap-worker", daemon=True).start()
outer()
`

// proxyPyFrames are proxyApp's Python frames, innermost first: function and
// line.
var proxyPyFrames = []struct {
	name string
	line int64
}{{"inner", 7}, {"middle", 10}, {"outer", 12}, {"<module>", 19}}

// dapSession is pyattach's proxy (or a plain adapter) run as an editor
// runs it, and the client driving it.
type dapSession struct {
	*daptest.Client
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	stdin  interface{ Close() error }
}

func startDAP(t *testing.T, argv []string, env []string) *dapSession {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &dapSession{Client: daptest.New(in, out), cmd: cmd, stderr: &stderr, stdin: in}
	if testing.Verbose() {
		s.Log = func(dir string, m dap.Message) {
			b, _ := json.Marshal(m)
			if len(b) > 3000 {
				b = append(b[:3000], "..."...)
			}
			t.Logf("%s %s", dir, b)
		}
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("adapter's stderr:\n%s", stderr.String())
		}
	})
	return s
}

// attach runs an editor's start: initialize, attach (args), the
// initialized event, configurationDone, then (pause: lldb-dap lets an
// attached process run on) a pause of thread pause, and the stopped
// event.
func (s *dapSession) attach(t *testing.T, args map[string]any, pause int) {
	t.Helper()
	if _, err := s.Request("initialize", map[string]any{"clientID": "pyattach-test", "adapterID": "lldb-dap", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path", "supportsRunInTerminalRequest": false}); err != nil {
		t.Fatal(err)
	}
	_, attach := s.Send("attach", args)
	if _, _, err := s.Event("initialized", 0); err != nil {
		t.Fatal(err)
	}
	// gdb answers the attach only after configurationDone, lldb-dap
	// before: an editor waits for the initialized event only.
	_, done := s.Send("configurationDone", nil)
	if r, err := s.Wait("attach", attach); err != nil || !r.Bool("success") {
		t.Fatalf("attach: %v %v\n%s", r, err, s.stderr)
	}
	if r, err := s.Wait("configurationDone", done); err != nil || !r.Bool("success") {
		t.Fatalf("configurationDone: %v %v", r, err)
	}
	if pause != 0 {
		// lldb-dap 19 drops a pause that arrives while it is still
		// resuming the process: pause it once it runs, again if need
		// be, as a user would.
		waitRunning(t, pause)
		for i := 0; ; i++ {
			if _, err := s.Request("pause", map[string]any{"threadId": pause}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.EventWithin("stopped", 0, 5*time.Second); err == nil {
				return
			} else if i == 5 {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := s.Event("stopped", 0); err != nil {
		t.Fatal(err)
	}
}

// checkProxyStack checks the merged stack of thread tid against plain,
// the frame names the adapter alone lists: each eval-loop frame of
// plain is replaced by Python frames, proxyApp's in order, each at app
// and its line; every other frame is there as plain has it. It returns
// the frames and inner's.
func checkProxyStack(t *testing.T, s *dapSession, tid int64, app string, plain []string) ([]daptest.Frame, daptest.Frame) {
	t.Helper()
	frames, total, err := s.StackTrace(tid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if int(total) != len(frames) {
		t.Errorf("totalFrames %d, %d frames", total, len(frames))
	}
	var lines, cNames []string
	for _, f := range frames {
		l := fmt.Sprintf("%d %s %s", f.ID, f.Name, f.Hint)
		if f.Source != nil {
			l += fmt.Sprintf(" %s:%d ref=%d", f.Source.Path, f.Line, f.Source.Ref)
		}
		lines = append(lines, l)
	}
	dump := strings.Join(lines, "\n")
	t.Logf("stack:\n%s", dump)
	next := 0
	var inner daptest.Frame
	for _, f := range frames {
		if next < len(proxyPyFrames) && f.Name == proxyPyFrames[next].name {
			if f.Source == nil || !sameFile(f.Source.Path, app) || f.Line != proxyPyFrames[next].line {
				t.Errorf("frame %s: source %+v line %d, want %s:%d", f.Name, f.Source, f.Line, app, proxyPyFrames[next].line)
			}
			if next == 0 {
				inner = f
			}
			next++
			continue
		}
		if f.Source == nil || !sameFile(f.Source.Path, app) {
			cNames = append(cNames, f.Name)
		}
	}
	if next != len(proxyPyFrames) {
		t.Fatalf("the Python frames are not all there, in order:\n%s\n%s", dump, s.stderr)
	}
	var wantC []string
	for _, n := range plain {
		if n != "_PyEval_EvalFrameDefault" {
			wantC = append(wantC, n)
		}
	}
	if strings.Join(cNames, ",") != strings.Join(wantC, ",") {
		t.Errorf("the C frames are not the adapter's:\n%q\nwant\n%q", cNames, wantC)
	}
	if first := slicesIndex(frames, inner.ID); first == 0 || !strings.Contains(strings.Join(lines[:first], "\n"), "sleep") {
		t.Errorf("no C frame (sleep) before the Python frames:\n%s", dump)
	}
	// Paging: the frames one at a time are the same frames.
	for i := range frames {
		page, total2, err := s.StackTrace(tid, int64(i), 1)
		if err != nil || len(page) != 1 || page[0].ID != frames[i].ID || total2 != total {
			t.Fatalf("page %d: %+v %v", i, page, err)
		}
	}
	return frames, inner
}

func slicesIndex(frames []daptest.Frame, id int64) int {
	for i, f := range frames {
		if f.ID == id {
			return i
		}
	}
	return -1
}

// checkProxyLocals checks inner's scopes and locals, expanded.
func checkProxyLocals(t *testing.T, s *dapSession, inner daptest.Frame, live bool) {
	t.Helper()
	scopes, err := s.Scopes(inner.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(scopes) == 0 || scopes[0].Name != "Locals" {
		t.Fatalf("scopes: %+v", scopes)
	}
	vars, err := s.Variables(scopes[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]daptest.Var{}
	for _, v := range vars {
		byName[v.Name] = v
	}
	if v := byName["n"]; v.Value != "7" || v.Ref != 0 {
		t.Errorf("n: %+v (all: %+v)", v, vars)
	}
	items := byName["items"]
	if items.Value != `[1, 'two', {'k': 3.5}]` || items.Ref == 0 {
		t.Fatalf("items: %+v (all: %+v)", items, vars)
	}
	kids, err := s.Variables(items.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 3 || kids[0].Name != "[0]" || kids[0].Value != "1" || kids[1].Value != "'two'" || kids[2].Ref == 0 {
		t.Fatalf("items' children: %+v", kids)
	}
	d, err := s.Variables(kids[2].Ref)
	if err != nil || len(d) != 1 || d[0].Name != "'k'" || d[0].Value != "3.5" {
		t.Fatalf("the dict's children: %+v %v", d, err)
	}
	box := byName["box"]
	if box.Ref == 0 {
		t.Fatalf("box is not expandable: %+v", box)
	}
	attrs, err := s.Variables(box.Ref)
	if err != nil || len(attrs) != 1 || attrs[0].Name != "size" || attrs[0].Value != "3" {
		t.Fatalf("box's attributes: %+v %v", attrs, err)
	}
	// Hover on a local's name answers its value.
	ev, err := s.Request("evaluate", map[string]any{"expression": "n", "frameId": inner.ID, "context": "hover"})
	if err != nil || ev.Str("result") != "7" {
		t.Errorf("hover n: %v %v", ev, err)
	}
	if live {
		// The exception middle handles, where the thread handles it.
		if len(scopes) < 2 || scopes[1].Name != "Exception" {
			t.Errorf("no Exception scope: %+v", scopes)
		} else if ex, err := s.Variables(scopes[1].Ref); err != nil || len(ex) == 0 || ex[0].Name != "ValueError" || !strings.Contains(ex[0].Value, "bad") {
			t.Errorf("exception: %+v %v", ex, err)
		}
	}
	// A forged reference gets an error, and the session goes on.
	if r, err := s.Raw("variables", map[string]any{"variablesReference": 987654321}); err != nil || r.Bool("success") {
		t.Errorf("a forged variablesReference: %v %v", r, err)
	}
}

// needLLDBVSCode14 is Debian 12's lldb-vscode-14 (package lldb-14),
// lldb 14's DAP adapter under its name before lldb-dap: the host's
// adapter (lldb-19 cannot be installed beside lldb-14 there). lldb-dap
// 19 and 22 are tested in the trixie and sid roots.
func needLLDBVSCode14(t *testing.T) string {
	t.Helper()
	return testenv.Need(t, "lldb-vscode-14")
}

// memImage is what a process's memory shows of its writers: its
// mappings, and the bytes of its file-backed read-only and executable
// ones (where a breakpoint or a patch would show). A debugger that
// allocated memory in the process (an expression run there) or left a
// byte changed in its code makes another image.
type memImage struct {
	maps   []string
	hashes map[string][32]byte
}

func memSnapshot(t *testing.T, pid int) memImage {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	img := memImage{hashes: map[string][32]byte{}}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		img.maps = append(img.maps, l)
		f := strings.Fields(l)
		// address perms offset dev inode path
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || strings.Contains(f[1], "w") || !strings.HasPrefix(f[1], "r") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		z, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || z <= a {
			t.Fatalf("maps line %q", l)
		}
		buf := make([]byte, z-a)
		if _, err := mem.ReadAt(buf, int64(a)); err != nil {
			t.Fatalf("read %s of process %d: %v", f[0], pid, err)
		}
		img.hashes[l] = sha256.Sum256(buf)
	}
	return img
}

// checkMemUnchanged compares pid's memory image with before's.
func checkMemUnchanged(t *testing.T, pid int, before memImage) {
	t.Helper()
	after := memSnapshot(t, pid)
	if strings.Join(after.maps, "\n") != strings.Join(before.maps, "\n") {
		t.Errorf("the process's mappings changed (memory allocated in it?):\nbefore:\n%s\nafter:\n%s", strings.Join(before.maps, "\n"), strings.Join(after.maps, "\n"))
		return
	}
	for l, h := range before.hashes {
		if after.hashes[l] != h {
			t.Errorf("the process's memory was written to: %s", l)
		}
	}
	if len(before.hashes) == 0 {
		t.Errorf("no code mapping of the process was compared")
	}
}

// plainStack is the frame names of thread pid as the adapter argv
// (lldb-dap on its own) lists them after an editor's attach and pause.
func plainStack(t *testing.T, argv []string, args map[string]any, pid int, pause bool) []string {
	t.Helper()
	s := startDAP(t, argv, os.Environ())
	p := 0
	if pause {
		p = pid
	}
	s.attach(t, args, p)
	frames, _, err := s.StackTrace(int64(pid), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range frames {
		names = append(names, f.Name)
	}
	if _, err := s.Request("disconnect", map[string]any{"terminateDebuggee": false}); err != nil {
		t.Fatal(err)
	}
	s.stdin.Close()
	if err := waitExit(s.cmd, 30*time.Second); err != nil {
		t.Logf("plain adapter after disconnect: %v", err)
	}
	return names
}

// TestDAPLLDBVenvCopies: `pyattach lldb-dap` with lldb-vscode-14,
// driven as an editor drives it, attached to Debian's python3.11 from a
// --copies venv and to a stripped pyenv 3.11 (no symbol table, no
// debug file): the Python frames among the C frames, their locals, the
// exception the thread handles, the thread names, py-bt in the
// console; after disconnect the process runs on, its memory as it was.
func TestDAPLLDBVenvCopies(t *testing.T) {
	adapter := needLLDBVSCode14(t)
	type target struct {
		name string
		exe  string
		env  []string
		// escape: the commandEscapePrefix of the attach request
		// ("": none).
		escape string
	}
	deb := testenv.Debian(t)
	pyenv := testenv.Pyenv(t, "3.11")
	stripped, senv := testenv.Stripped(t, pyenv.Exe)
	targets := []target{
		{"debian-venv-copies-" + deb.Version, filepath.Join(makeVenv(t, deb.Exe, true), "bin", "python"), nil, ""},
		// An editor's commandEscapePrefix, which lldb-vscode 14 does not
		// know: the proxy's commands still run.
		{"pyenv-stripped-" + pyenv.Version, stripped, senv, ":"},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			dir := t.TempDir()
			alive := filepath.Join(dir, "alive")
			pid := testenv.StartPython(t, tg.exe, proxyApp, append(append([]string(nil), tg.env...), "DAP_ALIVE="+alive)...)
			app := procCwdFile(t, pid)
			plain := plainStack(t, []string{adapter}, map[string]any{"pid": pid}, pid, true)
			if !slicesContain(plain, "_PyEval_EvalFrameDefault") {
				t.Fatalf("lldb-vscode-14 alone does not unwind to the eval loop: %q", plain)
			}
			checkStillRunning(t, pid, alive, 1)
			before := memSnapshot(t, pid)

			s := startDAP(t, []string{pyattachBin(t), "--offline", "lldb-dap", "--lldb-dap", adapter}, testEnv(t))
			args := map[string]any{"pid": pid}
			if tg.escape != "" {
				args["commandEscapePrefix"] = tg.escape
			}
			s.attach(t, args, pid)
			th, err := s.Request("threads", nil)
			if err != nil {
				t.Fatal(err)
			}
			// lldb-vscode names threads "Thread #2"; dump names the
			// worker by its threading name.
			if !strings.Contains(string(th["threads"]), `"name":"dap-worker"`) || !strings.Contains(string(th["threads"]), `"name":"MainThread"`) {
				t.Errorf("threads: %s", th["threads"])
			}
			_, inner := checkProxyStack(t, s, int64(pid), app, plain)
			checkProxyLocals(t, s, inner, true)
			// A forged frame id gets an error, and the session goes on.
			if r, err := s.Raw("scopes", map[string]any{"frameId": 987654321}); err != nil || r.Bool("success") {
				t.Errorf("a forged frameId: %v %v", r, err)
			}
			ev, err := s.Request("evaluate", map[string]any{"expression": "`py-bt", "frameId": inner.ID, "context": "repl"})
			if err != nil {
				t.Fatal(err)
			}
			out := ev.Str("result") + s.Output()
			if !strings.Contains(out, "in inner") || !strings.Contains(out, "in outer") {
				t.Errorf("py-bt in the console:\n%s", out)
			}
			if _, err := s.Request("disconnect", map[string]any{"terminateDebuggee": false}); err != nil {
				t.Fatal(err)
			}
			s.stdin.Close()
			if err := waitExit(s.cmd, 30*time.Second); err != nil {
				t.Errorf("pyattach lldb-dap after disconnect: %v", err)
			}
			if strings.Contains(s.stderr.String(), "panic") {
				t.Errorf("stderr:\n%s", s.stderr)
			}
			checkMemUnchanged(t, pid, before)
			checkStillRunning(t, pid, alive, 2)
		})
	}
}

func slicesContain(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestDAPLLDBCore: the same frames and locals from a core of the
// process (lldb-dap's attach with coreFile and program), and from a
// bundle of it named as coreFile alone (its sources the bundle's
// copies).
func TestDAPLLDBCore(t *testing.T) {
	lldbdap := needLLDBVSCode14(t)
	testenv.NeedRoot(t, "gcore stops the process with ptrace")
	dir := t.TempDir()
	py := testenv.Pyenv(t, "3.11").Exe
	pid := testenv.StartPython(t, py, proxyApp, "DAP_ALIVE="+filepath.Join(dir, "alive"))
	app := procCwdFile(t, pid)
	core := filepath.Join(dir, "core")
	if _, err := gcore.Take(context.Background(), pid, core, gcore.Options{}); err != nil {
		t.Fatalf("gcore.Take: %v", err)
	}
	real, err := filepath.EvalSymlinks(py)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"coreFile": core, "program": real}
	plain := plainStack(t, []string{lldbdap}, args, pid, false)
	s := startDAP(t, []string{pyattachBin(t), "lldb-dap", "--lldb-dap", lldbdap}, testEnv(t))
	s.attach(t, args, 0)
	_, inner := checkProxyStack(t, s, int64(pid), app, plain)
	checkProxyLocals(t, s, inner, false)
	if _, err := s.Request("disconnect", map[string]any{"terminateDebuggee": false}); err != nil {
		t.Fatal(err)
	}

	// A bundle of the process, named as the core alone: its unpacked
	// core and program, its copy of app.py.
	bundle := filepath.Join(dir, "app.pyattach")
	if out, err := runIn(t, "", testEnv(t), pyattachBin(t), "bundle", strconv.Itoa(pid), "-o", bundle); err != nil {
		t.Fatalf("pyattach bundle: %v\n%s", err, out)
	}
	b := startDAP(t, []string{pyattachBin(t), "lldb-dap", "--lldb-dap", lldbdap}, testEnv(t))
	b.attach(t, map[string]any{"coreFile": bundle}, 0)
	_, inner = checkProxyStack(t, b, int64(pid), app, plain)
	checkProxyLocals(t, b, inner, false)
	if _, err := b.Request("disconnect", map[string]any{"terminateDebuggee": false}); err != nil {
		t.Fatal(err)
	}
}

// procCwdFile is the script pid runs (its argv[1]).
func procCwdFile(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(args) < 2 {
		t.Fatalf("cmdline %q", b)
	}
	return args[1]
}

func waitExit(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("still running after %v", d)
	}
}

// waitRunning waits until pid's main thread is no longer stopped by its
// tracer (state "S" or "R" in /proc/PID/stat).
func waitRunning(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 3000; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && (f[0] == "S" || f[0] == "R") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d was not resumed after configurationDone", pid)
}

// sameFile says whether path is file, or file under a root (a bundle's
// copy, /proc/PID/root).
func sameFile(path, file string) bool {
	return path == file || strings.HasSuffix(path, "/root"+file)
}

// TestDAPLLDBLaunch: a launch request (program, args) is resolved as
// `pyattach lldb -- PROGRAM ARGS` is: the Python frames of the program
// lldb-dap starts.
func TestDAPLLDBLaunch(t *testing.T) {
	lldbdap := needLLDBVSCode14(t)
	dir := t.TempDir()
	venv := makeVenv(t, testenv.Pyenv(t, "3.11").Exe, true)
	app := filepath.Join(dir, "app.py")
	if err := os.WriteFile(app, []byte(proxyApp), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startDAP(t, []string{pyattachBin(t), "lldb-dap", "--lldb-dap", lldbdap}, testEnv(t))
	if _, err := s.Request("initialize", map[string]any{"clientID": "pyattach-test", "adapterID": "lldb-dap", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"}); err != nil {
		t.Fatal(err)
	}
	_, launch := s.Send("launch", map[string]any{"program": filepath.Join(venv, "bin", "python"), "args": []string{app}, "env": []string{"DAP_ALIVE=" + filepath.Join(dir, "alive")}})
	if _, _, err := s.Event("initialized", 0); err != nil {
		t.Fatal(err)
	}
	_, done := s.Send("configurationDone", nil)
	if r, err := s.Wait("launch", launch); err != nil || !r.Bool("success") {
		t.Fatalf("launch: %v %v\n%s", r, err, s.stderr)
	}
	if _, err := s.Wait("configurationDone", done); err != nil {
		t.Fatal(err)
	}
	ev, _, err := s.Event("process", 0)
	if err != nil {
		t.Fatal(err)
	}
	pid64, _ := ev.Obj("body").Int("systemProcessId")
	pid := int(pid64)
	if pid <= 0 {
		t.Fatalf("process event: %v", ev)
	}
	// Whatever happens to lldb-dap, the program it started ends with
	// the test.
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	for i := 0; !strings.Contains(s.Output(), "ready"); i++ {
		if i > 1000 {
			t.Fatalf("the program did not start: %q", s.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitRunning(t, pid)
	for i := 0; ; i++ {
		if _, err := s.Request("pause", map[string]any{"threadId": pid}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.EventWithin("stopped", 0, 5*time.Second); err == nil {
			break
		} else if i == 5 {
			t.Fatal(err)
		}
	}
	frames, _, err := s.StackTrace(int64(pid), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range frames {
		names = append(names, f.Name)
	}
	got := strings.Join(names, ",")
	if !strings.Contains(got, "inner,middle,outer,<module>") {
		t.Errorf("launched program's stack: %s\n%s", got, s.stderr)
	}
	if _, err := s.Request("disconnect", map[string]any{"terminateDebuggee": true}); err != nil {
		t.Fatal(err)
	}
}
