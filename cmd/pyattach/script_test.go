package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(removingBin{m}, map[string]func(){
		"pyattach": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())) },
	})
}

// removingBin runs the tests, then removes the pyattach binary that
// pyattachBin built for them (its directory under $TMPDIR).
type removingBin struct{ m *testing.M }

func (r removingBin) Run() int {
	code := r.m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	return code
}

var updateScripts = os.Getenv("PYATTACH_UPDATE_SCRIPTS") == "1"

// TestScript runs testdata/script/*.txtar: one user-visible behaviour
// each. PYATTACH_UPDATE_SCRIPTS=1 rewrites the golden files they hold.
func TestScript(t *testing.T) {
	testscript.Run(t, scriptParams())
}

func scriptParams() testscript.Params {
	return testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		UpdateScripts:       updateScripts,
		Setup: func(e *testscript.Env) error {
			// Keep the user's dirs out of the tests.
			home := filepath.Join(e.WorkDir, "home")
			e.Setenv("HOME", home)
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			e.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
			e.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
			e.Setenv("XDG_CONFIG_DIRS", filepath.Join(e.WorkDir, "etc", "xdg"))
			e.Setenv("PYENV_ROOT", filepath.Join(home, ".pyenv"))
			e.Setenv("DEBUGINFOD_URLS", "")
			e.Setenv("NO_COLOR", "1")
			// The repository, for scripts/ (make-debug-zip.sh).
			repo, err := filepath.Abs(filepath.Join("..", ".."))
			if err != nil {
				return err
			}
			e.Setenv("REPO", repo)
			// Only system directories on PATH, so that the machine's
			// pyenv shims do not leak into candidate searches.
			// testscript put the directory holding pyattach first.
			bin, _, _ := strings.Cut(e.Getenv("PATH"), string(os.PathListSeparator))
			e.Setenv("PATH", bin+":"+filepath.Join(e.WorkDir, ".bin")+":/usr/local/bin:/usr/bin:/bin")
			return os.MkdirAll(home, 0o755)
		},
		Condition: func(cond string) (bool, error) {
			// [have:TOOL] is true when TOOL is installed; in CI a
			// missing tool is an error, never a silent skip.
			if tool, ok := strings.CutPrefix(cond, "have:"); ok {
				_, err := exec.LookPath(tool)
				if err != nil && testenv.InCI() {
					return false, fmt.Errorf("%s is required in CI", tool)
				}
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"cc":         cmdCC,
			"writefile":  noNeg("writefile", cmdWritefile),
			"mkproc":     noNeg("mkproc", cmdMkproc),
			"buildid":    noNeg("buildid", cmdBuildID),
			"startproc":  noNeg("startproc", cmdStartProc),
			"httpserve":  noNeg("httpserve", cmdHTTPServe),
			"debuginfod": noNeg("debuginfod", cmdDebuginfod),
		},
	}
}

// noNeg refuses "! name": a command that sets up a fixture has no
// failure to expect, and a negation it ignored would pass silently.
func noNeg(name string, cmd func(ts *testscript.TestScript, neg bool, args []string)) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg {
			ts.Fatalf("unsupported: ! %s", name)
		}
		cmd(ts, neg, args)
	}
}

// cc runs gcc with the given arguments (the container of all ELF
// fixtures: they are compiled at test time). "! cc" expects gcc to fail,
// and fails when it succeeds.
func cmdCC(ts *testscript.TestScript, neg bool, args []string) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		ts.Fatalf("gcc is not installed (scripts that compile fixtures start with [!have:gcc] skip)")
	}
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			ts.Check(os.MkdirAll(filepath.Dir(ts.MkAbs(args[i+1])), 0o755))
		}
	}
	cmd := exec.Command(gcc, args...)
	cmd.Dir = ts.Getenv("WORK")
	out, err := cmd.CombinedOutput()
	ts.Logf("gcc %s\n%s", strings.Join(args, " "), out)
	switch {
	case err != nil && !neg:
		ts.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	case err == nil && neg:
		ts.Fatalf("gcc %s succeeded; the script expects it to fail", strings.Join(args, " "))
	}
}

// writefile FILE LINE... writes the lines (arguments are expanded by
// testscript, so $WORK may appear in them).
func cmdWritefile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: writefile FILE [LINE...]")
	}
	name := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(name), 0o755))
	content := strings.Join(args[1:], "\n")
	if len(args) > 1 {
		content += "\n"
	}
	ts.Check(os.WriteFile(name, []byte(content), 0o644))
}

// buildid VAR FILE sets $VAR to FILE's build-id as readelf prints it, an
// oracle independent of pyattach's own ELF reader.
func cmdBuildID(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: buildid VAR FILE")
	}
	out, err := exec.Command("readelf", "-n", ts.MkAbs(args[1])).Output()
	ts.Check(err)
	for _, line := range strings.Split(string(out), "\n") {
		if _, id, ok := strings.Cut(line, "Build ID: "); ok {
			ts.Setenv(args[0], strings.TrimSpace(id))
			return
		}
	}
	ts.Fatalf("%s has no build-id", args[1])
}

// mkproc DIR PID key=value... makes a fake /proc/PID under DIR:
//
//	exe=PATH      PID/exe symlink (a target ending in " (deleted)" is
//	              taken literally: the fixture file has that name)
//	root=PATH     PID/root symlink (default /)
//	mnt=ID        PID/ns/mnt -> mnt:[ID] (default: same as self)
//	comm=NAME     PID/stat comm, and PID/cmdline
//	ppid=N        PID/stat parent
//	uid=N         PID/status Uid
//	maps=P1,P2    PID/maps: one r-xp mapping per path
//	cmdline=A B   PID/cmdline (words split at spaces)
//	exefrom=FILE  exe's PATH is made, as a hard link to FILE
//	state=L       PID/stat state (default S; Z: a zombie)
//	children=A,B  PID/task/PID/children (no task directory without it)
//
// A value in double quotes is a Go string literal ("a\x1b\nb").
// DIR/self/ns/mnt is made once, as mnt:[4026531840].
func cmdMkproc(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: mkproc DIR PID key=value...")
	}
	dir := ts.MkAbs(args[0])
	pid, err := strconv.Atoi(args[1])
	ts.Check(err)
	kv := map[string]string{"root": "/", "mnt": "4026531840", "comm": "python3", "ppid": "1", "uid": "0", "state": "S"}
	for _, a := range args[2:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("mkproc: %q is not key=value", a)
		}
		if strings.HasPrefix(v, `"`) {
			// A Go string literal: what a process may hold (\x1b, \n).
			u, err := strconv.Unquote(v)
			ts.Check(err)
			v = u
		}
		kv[k] = v
	}
	if from := kv["exefrom"]; from != "" {
		// The exe's own name holds what a literal gave: a link to from.
		ts.Check(os.MkdirAll(filepath.Dir(kv["exe"]), 0o755))
		ts.Check(os.Link(ts.MkAbs(from), kv["exe"]))
	}
	self := filepath.Join(dir, "self", "ns")
	if _, err := os.Lstat(filepath.Join(self, "mnt")); err != nil {
		ts.Check(os.MkdirAll(self, 0o755))
		ts.Check(os.Symlink("mnt:[4026531840]", filepath.Join(self, "mnt")))
	}
	p := filepath.Join(dir, strconv.Itoa(pid))
	ts.Check(os.MkdirAll(filepath.Join(p, "ns"), 0o755))
	ts.Check(os.MkdirAll(filepath.Join(p, "map_files"), 0o755))
	if exe := kv["exe"]; exe != "" {
		ts.Check(os.Symlink(exe, filepath.Join(p, "exe")))
	}
	ts.Check(os.Symlink(kv["root"], filepath.Join(p, "root")))
	ts.Check(os.Symlink("mnt:["+kv["mnt"]+"]", filepath.Join(p, "ns", "mnt")))
	stat := fmt.Sprintf("%d (%s) %s %s %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n", pid, kv["comm"], kv["state"], kv["ppid"], pid, pid)
	if c, ok := kv["children"]; ok {
		// children=PID,PID: the main thread's children file, as a kernel
		// with CONFIG_PROC_CHILDREN writes it.
		task := filepath.Join(p, "task", strconv.Itoa(pid))
		ts.Check(os.MkdirAll(task, 0o755))
		ts.Check(os.WriteFile(filepath.Join(task, "children"), []byte(strings.ReplaceAll(c, ",", " ")), 0o644))
	}
	ts.Check(os.WriteFile(filepath.Join(p, "stat"), []byte(stat), 0o644))
	status := fmt.Sprintf("Name:\t%s\nPPid:\t%s\nUid:\t%s\t%s\t%s\t%s\n", kv["comm"], kv["ppid"], kv["uid"], kv["uid"], kv["uid"], kv["uid"])
	ts.Check(os.WriteFile(filepath.Join(p, "status"), []byte(status), 0o644))
	cmdline := kv["comm"] + "\x00"
	if c, ok := kv["cmdline"]; ok {
		cmdline = strings.ReplaceAll(c, " ", "\x00") + "\x00"
	}
	ts.Check(os.WriteFile(filepath.Join(p, "cmdline"), []byte(cmdline), 0o644))
	var maps strings.Builder
	addr := uint64(0x400000)
	for i, m := range strings.Split(kv["maps"], ",") {
		if m == "" {
			continue
		}
		// The kernel writes a newline in a path as \012.
		fmt.Fprintf(&maps, "%x-%x r-xp 00000000 fd:01 %d                    %s\n", addr, addr+0x1000, 1000+i, strings.ReplaceAll(m, "\n", `\012`))
		// map_files/START-END names the mapped file, deleted or not.
		ts.Check(os.Symlink(m, filepath.Join(p, "map_files", fmt.Sprintf("%x-%x", addr, addr+0x1000))))
		addr += 0x100000
	}
	fmt.Fprintf(&maps, "7ffd4a1f2000-7ffd4a1f4000 r-xp 00000000 00:00 0                          [vdso]\n")
	ts.Check(os.WriteFile(filepath.Join(p, "maps"), []byte(maps.String()), 0o644))
}

// startproc VAR PROGRAM ARGS... starts a real process in the background,
// waits until it prints a line on stdout (the programs used here print
// "ready" once they are inside the function they sleep in), sets $VAR to
// its PID, and kills it when the script ends.
func cmdStartProc(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: startproc VAR PROGRAM [ARGS...]")
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(os.Environ(), "HOME="+ts.Getenv("HOME"))
	cmd.Stderr = os.Stderr
	_, stop, err := testenv.StartReady(cmd)
	if stop != nil {
		ts.Defer(stop)
	}
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(cmd.Process.Pid))
}

// httpserve VAR DIR serves DIR over HTTP on 127.0.0.1 until the script
// ends and sets $VAR to its URL. Requests are logged to DIR.log.
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: httpserve VAR DIR")
	}
	dir := ts.MkAbs(args[1])
	fsrv := http.FileServer(http.Dir(dir))
	logf, err := os.Create(dir + ".log")
	ts.Check(err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(logf, "%s %s\n", r.Method, r.URL.Path)
		fsrv.ServeHTTP(w, r)
	}))
	ts.Defer(func() {
		srv.Close()
		logf.Close()
	})
	ts.Setenv(args[0], srv.URL)
}

// debuginfod VAR DIR BUILDID runs a real debuginfod server (elfutils)
// indexing DIR on a free port of 127.0.0.1, waits until it serves
// BUILDID's debuginfo, sets $VAR to its URL, and kills it at the end.
func cmdDebuginfod(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: debuginfod VAR DIR BUILDID")
	}
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		ts.Fatalf("debuginfod is not installed (scripts using it start with [!have:debuginfod] skip)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	cmd := exec.Command(bin, "-F", ts.MkAbs(args[1]), "-p", strconv.Itoa(port), "-d", ts.MkAbs("debuginfod.sqlite"))
	logf, err := os.Create(ts.MkAbs("debuginfod.log"))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ts.Check(cmd.Start())
	ts.Defer(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		logf.Close()
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/buildid/" + args[2] + "/debuginfo")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ts.Setenv(args[0], url)
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("debuginfod did not serve %s within 60s (see debuginfod.log)", args[2])
}

// recordT is a testscript.T that records whether a script failed instead
// of failing the test that runs it.
type recordT struct {
	mu     sync.Mutex
	failed bool
	log    strings.Builder
}

func (r *recordT) Skip(args ...any)  { r.Log(args...); runtime.Goexit() }
func (r *recordT) Fatal(args ...any) { r.Log(args...); r.FailNow() }
func (r *recordT) Parallel()         {}
func (r *recordT) Verbose() bool     { return false }
func (r *recordT) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(&r.log, args...)
}
func (r *recordT) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recordT) Run(name string, f func(testscript.T)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}

// TestScriptNegation: "! cc" fails when gcc succeeds and passes when it
// fails; the fixture commands refuse "!" rather than ignore it.
func TestScriptNegation(t *testing.T) {
	testenv.Need(t, "gcc")
	for _, c := range []struct {
		name, script string
		pass         bool
	}{
		{"cc-fails", "! cc -c -o x.o x.c\n-- x.c --\nint main(void) { return }\n", true},
		{"cc-succeeds", "! cc -c -o x.o x.c\n-- x.c --\nint main(void) { return 0; }\n", false},
		{"cc", "cc -c -o x.o x.c\nexists x.o\n-- x.c --\nint main(void) { return 0; }\n", true},
		{"writefile", "! writefile a b\n", false},
		{"buildid", "! buildid ID x\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, c.name+".txtar"), []byte(c.script), 0o644); err != nil {
				t.Fatal(err)
			}
			p := scriptParams()
			p.Dir = dir
			p.UpdateScripts = false
			var r recordT
			testscript.RunT(&r, p)
			if r.failed == c.pass {
				t.Errorf("script %q: failed = %v, want %v\n%s", c.script, r.failed, !c.pass, r.log.String())
			}
		})
	}
}
