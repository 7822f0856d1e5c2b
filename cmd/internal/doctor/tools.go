package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/cmd/internal/debuggers"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/proc"
)

var gdbVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`GNU gdb .*?(\d+\.\d+)`) })

// checkGDB: gdb is installed, and built with Python.
func (s *Services) checkGDB(ctx context.Context) Check {
	gdb, err := s.FindDebugger("gdb")
	if err != nil {
		return Check{ID: "gdb", Status: Fail, Summary: "gdb is not installed", Fix: "sudo apt-get install gdb (Fedora: sudo dnf install gdb)"}
	}
	out, err := s.run(ctx, gdb, "-nx", "-batch", "-ex", "show version", "-ex", "python import sys; print('PYTHON=' + sys.version.split()[0])")
	if errors.Is(err, context.DeadlineExceeded) {
		return noAnswer("gdb", err)
	}
	ver := "unknown version"
	if m := gdbVersionRE().FindStringSubmatch(out); m != nil {
		ver = m[1]
	}
	i := strings.Index(out, "PYTHON=")
	if i < 0 {
		return Check{ID: "gdb", Status: Fail, Summary: fmt.Sprintf("gdb %s has no Python: py-bt and the CPython extension need it", ver),
			Fix: "install a gdb built with Python (Debian's and Fedora's gdb packages are): sudo apt-get install gdb"}
	}
	py := "unknown"
	if f := strings.Fields(out[i+len("PYTHON="):]); len(f) > 0 {
		py = f[0]
	}
	return Check{ID: "gdb", Status: OK, Summary: fmt.Sprintf("gdb %s (%s) with Python %s", ver, gdb, py)}
}

// LLDBNames are the names lldb is found under, first match wins.
var LLDBNames = []string{"lldb", "lldb-14", "lldb-15", "lldb-16", "lldb-17", "lldb-18", "lldb-19", "lldb-20", "lldb-21", "lldb-22"}

var answer42 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^42$`) })

// checkLLDB: lldb's script command runs Python.
func (s *Services) checkLLDB(ctx context.Context) Check {
	lldb, err := s.FindDebugger(LLDBNames...)
	if err != nil {
		return Check{ID: "lldb", Status: Skip, Summary: "lldb is not installed (only needed for pyattach lldb)", Fix: "sudo apt-get install lldb python3-lldb-14"}
	}
	out, err := s.run(ctx, lldb, "-b", "-o", "script print(6*7)")
	if errors.Is(err, context.DeadlineExceeded) {
		return noAnswer("lldb", err)
	}
	if answer42().MatchString(out) {
		return Check{ID: "lldb", Status: OK, Summary: fmt.Sprintf("lldb (%s): its script command works", lldb)}
	}
	dir := s.lldbPythonDir(ctx, lldb)
	if dir == "" {
		return Check{ID: "lldb", Status: Warn, Summary: fmt.Sprintf("lldb (%s): its script command fails and its Python package was not found", lldb),
			Fix: "install lldb's Python bindings: sudo apt-get install python3-lldb-14"}
	}
	// pyattach lldb passes that directory itself: only plain lldb minds.
	return Check{ID: "lldb", Status: Note,
		Summary: fmt.Sprintf("lldb (%s): pyattach lldb works; plain lldb's script command fails: `lldb -P` names a directory without lldb's Python package (Debian's lldb 14)", lldb),
		Fix:     fmt.Sprintf("pyattach lldb sets it for you; for plain lldb: PYTHONPATH=%s %s", shquote.Quote(dir), filepath.Base(lldb))}
}

// lldbPythonDir returns the directory holding lldb's Python package when
// `lldb -P` names one that does not (Debian's lldb 14), else "".
func (s *Services) lldbPythonDir(ctx context.Context, lldb string) string {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	return debuggers.LLDBPythonDir(ctx, s.Run, s.Env, lldb)
}

// checkDebuginfod: the servers of DEBUGINFOD_URLS answer.
func (s *Services) checkDebuginfod(ctx context.Context) Check {
	urls := strings.Fields(s.getenv("DEBUGINFOD_URLS"))
	if len(urls) == 0 {
		return Check{ID: "debuginfod", Status: Skip, Summary: "no debuginfod servers configured (DEBUGINFOD_URLS is empty)",
			Fix: "to fetch missing debug files automatically, set DEBUGINFOD_URLS to your distribution's server (see debuginfod(8))"}
	}
	if s.Offline {
		return Check{ID: "debuginfod", Status: Skip, Summary: "offline: debuginfod servers not checked"}
	}
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.reachURL(ctx, u)
		}()
	}
	wg.Wait()
	var bad []string
	for i, err := range errs {
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s (%v)", urls[i], err))
		}
	}
	if len(bad) > 0 {
		return Check{ID: "debuginfod", Status: Warn, Summary: fmt.Sprintf("debuginfod servers not reachable within %s: %s", s.timeout(), strings.Join(bad, ", ")),
			Fix: "check the network or DEBUGINFOD_URLS; pyattach --offline uses local files and the cache only"}
	}
	return Check{ID: "debuginfod", Status: OK, Summary: "debuginfod servers reachable: " + strings.Join(urls, " ")}
}

// reachURL asks a debuginfod server for its metrics page, briefly: any
// HTTP answer means it is reachable.
func (s *Services) reachURL(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(u, "/")+"/metrics", nil)
	if err != nil {
		return err
	}
	client := s.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// checkPtrace says whether this user may attach to the process of res
// (nil, or not a process: in general).
func (s *Services) checkPtrace(res *target.Result) Check {
	if goos := cmp.Or(s.GOOS, runtime.GOOS); goos != "linux" {
		return Check{ID: "ptrace", Status: Skip, Summary: fmt.Sprintf("not checked on %s: pyattach reads running processes on Linux only", goos)}
	}
	p := proc.New(s.procRoot())
	root := s.Euid == 0
	scope := -1
	if b, err := fs.ReadFile(p.FS, "sys/kernel/yama/ptrace_scope"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			scope = n
		}
	}
	if res != nil && res.PID != 0 {
		if st, err := p.Status(res.PID); err == nil {
			if st.TracerPID != 0 {
				comm := ""
				if tp, _ := p.Process(st.TracerPID); tp != nil {
					comm = tp.Comm
				}
				return Check{ID: "ptrace", Status: Fail, Summary: fmt.Sprintf("process %d is already traced by %d (%s): a process has one tracer", res.PID, st.TracerPID, comm),
					Fix: fmt.Sprintf("detach that debugger or strace first (kill -CONT %d if it was left stopped)", res.PID)}
			}
			if !root && st.UID != s.UID {
				return Check{ID: "ptrace", Status: Fail, Summary: fmt.Sprintf("process %d belongs to uid %d, you are uid %d", res.PID, st.UID, s.UID),
					Fix: "run as that user, or with sudo"}
			}
		}
	}
	if self, err := p.SelfStatus(); err == nil && self.Seccomp == 2 {
		return Check{ID: "ptrace", Status: Warn, Summary: "pyattach runs under a seccomp filter (a container?): ptrace may be refused",
			Fix: "docker run --cap-add=SYS_PTRACE --security-opt seccomp=unconfined ..., or debug from the host"}
	}
	switch {
	case scope < 0:
		return Check{ID: "ptrace", Status: OK, Summary: "no Yama ptrace restriction (kernel.yama.ptrace_scope absent)"}
	case scope == 0:
		return Check{ID: "ptrace", Status: OK, Summary: "ptrace_scope 0: processes of the same user can be attached"}
	case scope == 1 && root:
		return Check{ID: "ptrace", Status: OK, Summary: "ptrace_scope 1, and you are root (CAP_SYS_PTRACE)"}
	case scope == 1:
		return Check{ID: "ptrace", Status: Warn, Summary: "ptrace_scope 1: only a parent process (or root) may attach; gdb -p will fail with 'Operation not permitted'",
			Fix: "sudo pyattach gdb -p PID, or for this boot: echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope"}
	case scope == 2 && root:
		return Check{ID: "ptrace", Status: OK, Summary: "ptrace_scope 2, and you are root"}
	case scope == 2:
		return Check{ID: "ptrace", Status: Fail, Summary: "ptrace_scope 2: only root may attach", Fix: "sudo pyattach gdb -p PID"}
	default:
		return Check{ID: "ptrace", Status: Fail, Summary: fmt.Sprintf("ptrace_scope %d: no process may attach until reboot", scope), Fix: "reboot with kernel.yama.ptrace_scope=0 or 1 (sysctl.d)"}
	}
}
