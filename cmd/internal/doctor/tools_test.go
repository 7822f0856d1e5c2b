package doctor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckGDB(t *testing.T) {
	ctx := context.Background()
	s, _ := newServices(t)
	want(t, "not installed", s.checkGDB(ctx), Fail, "gdb is not installed", "apt-get install gdb")

	s, fr := newServices(t, rule{match: []string{"/opt/gdb", "show version"}, out: "GNU gdb (Debian 13.1-3) 13.1\nCopyright\nPython scripting is not supported in this copy of GDB.\n"})
	s.FindDebugger = fakeDebuggers(map[string]string{"gdb": "/opt/gdb"})
	want(t, "no Python", s.checkGDB(ctx), Fail, "gdb 13.1 has no Python", "a gdb built with Python")
	if len(fr.calls) != 1 || !strings.Contains(fr.calls[0], "-nx -batch") {
		t.Errorf("gdb ran as %q", fr.calls)
	}

	s, _ = newServices(t, rule{match: []string{"/opt/gdb", "show version"}, out: "GNU gdb (GDB) 14.2\nPYTHON=3.12.4\n"})
	s.FindDebugger = fakeDebuggers(map[string]string{"gdb": "/opt/gdb"})
	want(t, "with Python", s.checkGDB(ctx), OK, "gdb 14.2 (/opt/gdb) with Python 3.12.4", "")

	s, _ = newServices(t, rule{match: []string{"/opt/gdb"}, out: "garbage PYTHON="})
	s.FindDebugger = fakeDebuggers(map[string]string{"gdb": "/opt/gdb"})
	want(t, "unparsable output", s.checkGDB(ctx), OK, "gdb unknown version (/opt/gdb) with Python unknown", "")
}

func TestCheckLLDB(t *testing.T) {
	ctx := context.Background()
	s, _ := newServices(t)
	want(t, "not installed", s.checkLLDB(ctx), Skip, "lldb is not installed", "python3-lldb-14")

	s, _ = newServices(t, rule{match: []string{"script print(6*7)"}, out: "(lldb) script print(6*7)\n42\n"})
	s.FindDebugger = fakeDebuggers(map[string]string{"lldb-14": "/opt/lldb-14"})
	want(t, "script works", s.checkLLDB(ctx), OK, "lldb (/opt/lldb-14): its script command works", "")

	// Debian's lldb 14: the script fails, `lldb -P` names a directory
	// without the package, which lies beside lldb's real file.
	dir := t.TempDir()
	llvm := filepath.Join(dir, "llvm-14")
	writeFile(t, filepath.Join(llvm, "bin", "lldb"), "")
	pkgs := filepath.Join(llvm, "lib", "python3.11", "dist-packages")
	writeFile(t, filepath.Join(pkgs, "lldb", "__init__.py"), "")
	link := filepath.Join(dir, "bin", "lldb")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(filepath.Join(llvm, "bin", "lldb"), link); err != nil {
		t.Fatal(err)
	}
	fails := rule{match: []string{"script print(6*7)"}, out: "error: embedded Python interpreter could not be loaded\nModuleNotFoundError: No module named 'lldb'\n", err: &exitErr{}}
	s, fr := newServices(t, fails, rule{match: []string{"lldb -P"}, out: "/usr/lib/python3/dist-packages\n"})
	s.FindDebugger = fakeDebuggers(map[string]string{"lldb": link})
	c := s.checkLLDB(ctx)
	want(t, "wrong lldb -P", c, Note, "pyattach lldb works; plain lldb's script command fails: `lldb -P` names a directory without lldb's Python package", "PYTHONPATH="+pkgs+" lldb")
	if !strings.Contains(strings.Join(fr.calls, "\n"), link+" -P") {
		t.Errorf("lldb -P not run through the runner: %q", fr.calls)
	}

	// The script fails and no package is anywhere.
	bare := filepath.Join(t.TempDir(), "bin", "lldb")
	writeFile(t, bare, "")
	s, _ = newServices(t, fails, rule{match: []string{"lldb -P"}, out: "/usr/lib/python3/dist-packages\n"})
	s.FindDebugger = fakeDebuggers(map[string]string{"lldb": bare})
	want(t, "no package", s.checkLLDB(ctx), Warn, "its script command fails and its Python package was not found", "apt-get install python3-lldb-14")

	// `lldb -P` names the right directory, yet the script fails: no
	// PYTHONPATH would help.
	s, _ = newServices(t, fails, rule{match: []string{"lldb -P"}, out: pkgs + "\n"})
	s.FindDebugger = fakeDebuggers(map[string]string{"lldb": link})
	want(t, "lldb -P right", s.checkLLDB(ctx), Warn, "its Python package was not found", "")
}

type exitErr struct{}

func (*exitErr) Error() string { return "exit status 1" }

func TestCheckDebuginfod(t *testing.T) {
	ctx := context.Background()
	s, _ := newServices(t)
	want(t, "no servers", s.checkDebuginfod(ctx), Skip, "no debuginfod servers configured", "set DEBUGINFOD_URLS")

	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		http.NotFound(w, r) // any answer is an answer
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server at %s, not on 127.0.0.1", srv.URL)
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()

	s.Env = append(s.Env, "DEBUGINFOD_URLS="+srv.URL+"/")
	s.HTTP = srv.Client()
	s.Offline = true
	want(t, "offline", s.checkDebuginfod(ctx), Skip, "offline: debuginfod servers not checked", "")
	if len(asked) != 0 {
		t.Errorf("offline, yet asked %q", asked)
	}
	s.Offline = false
	want(t, "reachable", s.checkDebuginfod(ctx), OK, "debuginfod servers reachable: "+srv.URL+"/", "")
	if len(asked) != 1 || asked[0] != "/metrics" {
		t.Errorf("asked %q, want /metrics", asked)
	}

	s.Env = append(s.Env, "DEBUGINFOD_URLS="+srv.URL+" "+goneURL)
	want(t, "one unreachable", s.checkDebuginfod(ctx), Warn, "debuginfod servers not reachable within "+DefaultTimeout.String()+": "+goneURL+" (", "pyattach --offline")
}

// A fake proc root per case: ptrace_scope, the target's and self's
// status, a tracer.
func TestCheckPtrace(t *testing.T) {
	const pid = 4242
	status := func(uid, tracer int) string {
		return "Name:\tpython3\nUid:\t" + itoa(uid) + "\t" + itoa(uid) + "\t" + itoa(uid) + "\t" + itoa(uid) + "\nTracerPid:\t" + itoa(tracer) + "\nSeccomp:\t0\n"
	}
	type tc struct {
		name          string
		scope         string // "" for no Yama
		euid          int
		targetStatus  string // "" for no target
		self          string
		status, summ  string
		fix           string
		withTracerDir bool
	}
	cases := []tc{
		{name: "no Yama", status: OK, summ: "kernel.yama.ptrace_scope absent"},
		{name: "scope 0", scope: "0\n", status: OK, summ: "ptrace_scope 0: processes of the same user can be attached"},
		{name: "scope 1", scope: "1\n", status: Warn, summ: "ptrace_scope 1: only a parent process", fix: "echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope"},
		{name: "scope 1 root", scope: "1\n", euid: -1, status: OK, summ: "ptrace_scope 1, and you are root"},
		{name: "scope 2", scope: "2\n", status: Fail, summ: "ptrace_scope 2: only root may attach", fix: "sudo pyattach gdb -p PID"},
		{name: "scope 2 root", scope: "2\n", euid: -1, status: OK, summ: "ptrace_scope 2, and you are root"},
		{name: "scope 3", scope: "3\n", status: Fail, summ: "ptrace_scope 3: no process may attach until reboot", fix: "sysctl.d"},
		{name: "traced", scope: "0\n", targetStatus: status(1000, 77), withTracerDir: true, status: Fail, summ: "process 4242 is already traced by 77 (strace): a process has one tracer", fix: "kill -CONT 4242"},
		{name: "other uid", scope: "0\n", targetStatus: status(1001, 0), status: Fail, summ: "process 4242 belongs to uid 1001, you are uid 1000", fix: "run as that user, or with sudo"},
		{name: "other uid, as root", scope: "1\n", euid: -1, targetStatus: status(1001, 0), status: OK, summ: "ptrace_scope 1, and you are root"},
		{name: "own process", scope: "0\n", targetStatus: status(1000, 0), status: OK, summ: "ptrace_scope 0"},
		{name: "seccomp", scope: "0\n", self: "Uid:\t1000\t1000\t1000\t1000\nSeccomp:\t2\n", status: Warn, summ: "runs under a seccomp filter", fix: "--cap-add=SYS_PTRACE"},
		{name: "strict seccomp only", scope: "0\n", self: "Uid:\t1000\t1000\t1000\t1000\nSeccomp:\t0\n", status: OK, summ: "ptrace_scope 0"},
	}
	for _, c := range cases {
		s, _ := newServices(t)
		if c.euid == -1 {
			s.Euid = 0
		}
		if c.scope != "" {
			writeFile(t, filepath.Join(s.ProcRoot, "sys/kernel/yama/ptrace_scope"), c.scope)
		}
		if c.self != "" {
			writeFile(t, filepath.Join(s.ProcRoot, "self/status"), c.self)
		}
		var res = newResult()
		if c.targetStatus != "" {
			res.PID = pid
			writeFile(t, filepath.Join(s.ProcRoot, itoa(pid), "status"), c.targetStatus)
		}
		if c.withTracerDir {
			writeFile(t, filepath.Join(s.ProcRoot, "77", "stat"), "77 (strace) S 1 77 77 0 -1\n")
			writeFile(t, filepath.Join(s.ProcRoot, "77", "status"), status(1000, 0))
			writeFile(t, filepath.Join(s.ProcRoot, "77", "cmdline"), "strace\x00-p\x004242\x00")
		}
		want(t, c.name, s.checkPtrace(res), c.status, c.summ, c.fix)
	}
	// Without a target (doctor with no argument), the same scope rules.
	s, _ := newServices(t)
	writeFile(t, filepath.Join(s.ProcRoot, "sys/kernel/yama/ptrace_scope"), "2\n")
	want(t, "no target", s.checkPtrace(nil), Fail, "ptrace_scope 2", "")
	// On macOS there is no /proc to read: the check is skipped, not
	// answered from files that are not there.
	s.GOOS = "darwin"
	want(t, "darwin", s.checkPtrace(nil), Skip, "not checked on darwin: pyattach reads running processes on Linux only", "")
}

// A debugger that does not answer by the deadline is reported as such,
// not as a gdb without Python or an lldb without its package.
func TestCheckDebuggerNoAnswer(t *testing.T) {
	hang := func(ctx context.Context, env []string, name string, args ...string) (string, error) {
		<-ctx.Done()
		return "", &exitErr{}
	}
	s, _ := newServices(t)
	s.Timeout = 50 * time.Millisecond
	s.Run = hang
	s.FindDebugger = fakeDebuggers(map[string]string{"gdb": "/opt/gdb", "lldb": "/opt/lldb"})
	want(t, "gdb hangs", s.checkGDB(context.Background()), Warn, "gdb did not answer within 50ms: not checked", "pyattach doctor again")
	want(t, "lldb hangs", s.checkLLDB(context.Background()), Warn, "lldb did not answer within 50ms: not checked", "pyattach doctor again")
}
