package doctor

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/debuggers"
	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
)

// Check is one finding. Its JSON form is what `pyattach doctor --json`
// prints in {checks: [...]}.
type Check struct {
	ID      string `json:"id"`
	Status  string `json:"status"` // OK, Warn, Fail, Skip or Note
	Summary string `json:"summary"`
	Fix     string `json:"fix"`
	// Details are the facts behind the summary, one a line (for a
	// missing extension: every place looked at, and what was there).
	Details []string `json:"details,omitempty"`
}

// Statuses of a check.
//
// Fail and Warn are what the user can act on and what changes what they
// will see (py-bt missing, in plain gdb -p of a copied venv too; frames
// shown as ??). Note is a fact that does not (an -O3 build the walker
// reads, the distribution's C sources): doctor prints notes with
// --verbose only.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail"
	Skip = "skip"
	Note = "note"
)

// DefaultTimeout bounds one external command or one request to a
// debuginfod server.
const DefaultTimeout = 8 * time.Second

// overallTimeout bounds all the checks together.
const overallTimeout = 20 * time.Second

// Runner runs an external command (debuggers.Runner): every command
// doctor runs goes through it, with a deadline.
type Runner = debuggers.Runner

// SourceMap is what the sources check needs of a source mapping (pyattach
// srcmap): how many modules and rules, and the groups of missing files.
type SourceMap struct {
	Modules    int
	Rules      int
	Unresolved []SourceGroup
}

// SourceGroup is a group of source files that no source root resolves.
type SourceGroup struct {
	Prefix string
	Files  int
	Hint   string // what makes them found
	// Shipped: the files of a build the user did not make
	// (srcmap.Shipped), a note rather than a warning.
	Shipped bool
}

// SourceRootsError is returned by Services.Sources when the source roots
// themselves are wrong (a --source that is not a directory): a warning,
// where a mapping that cannot be made is a skip.
type SourceRootsError struct{ Err error }

func (e *SourceRootsError) Error() string { return e.Err.Error() }
func (e *SourceRootsError) Unwrap() error { return e.Err }

// Services are everything doctor reads from outside: the proc file
// system, the host's files, the environment and the caller's ids, the
// external commands, the network, and what other packages compute about
// a target. Production values come from cmd/pyattach; tests fake each.
type Services struct {
	// ProcRoot is the proc file system ("/proc"): ptrace_scope, self's
	// and the target's status are read under it.
	ProcRoot string
	// GOOS is the system whose rules apply ("" for the running one):
	// outside Linux there is no /proc, and ptrace is not checked.
	GOOS string
	// HostRoot is where the host's own system files are read
	// (/etc/debian_version, /etc/fedora-release, /var/lib/dpkg/info):
	// "" for the real root. A container's are read under its root.
	HostRoot string
	// Env is the environment: commands run with it, and DEBUGINFOD_URLS
	// is read from it (through getenv).
	Env []string
	// Euid and UID are the caller's effective and real user ids.
	Euid, UID int
	// Offline: debuginfod servers are not asked.
	Offline bool
	// CacheDir is pyattach's cache; the gdb extension is looked for in
	// its extensions/ directory.
	CacheDir string
	// Timeout bounds each command and request; DefaultTimeout when 0.
	Timeout time.Duration
	// Run runs every external command (gdb, lldb, dpkg), under Timeout;
	// the package starts no process itself.
	Run Runner
	// HTTP asks the debuginfod servers whether they answer.
	HTTP *http.Client
	// FindDebugger returns the path of the first of names found on PATH.
	FindDebugger func(names ...string) (string, error)
	// Resolve finds the interpreter a target names.
	Resolve func(ctx context.Context, tgt string) (*target.Result, error)
	// DebugInfo collects the debug information and extensions of a
	// resolved target.
	DebugInfo func(ctx context.Context, tgt string, res *target.Result) (*debugsearch.Info, error)
	// Sources maps the target's source files onto the source roots; nil
	// skips the sources check.
	Sources func(ctx context.Context, res *target.Result, di *debugsearch.Info) (*SourceMap, error)
	// Hint is the advice for an error resolving the target, or "".
	Hint func(error) string
	// IsMachO reports whether a file target is a Mach-O file, whose
	// .dSYMs MachODebugInfo finds (debugsearch.Collector.CollectMachO);
	// nil: no Mach-O checks.
	IsMachO        func(tgt string) bool
	MachODebugInfo func(ctx context.Context, tgt string) (*debugsearch.Info, error)
}

// getenv is the one place doctor reads the environment.
func (s *Services) getenv(key string) string {
	for i := len(s.Env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(s.Env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func (s *Services) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// run runs a command through s.Run with the deadline of one check.
// A command still running at the deadline returns an error that
// errors.Is context.DeadlineExceeded, whatever the runner returned.
func (s *Services) run(ctx context.Context, name string, args ...string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	out, err := s.Run(cctx, s.Env, name, args...)
	if cctx.Err() == context.DeadlineExceeded {
		return out, &timeoutError{filepath.Base(name), s.timeout()}
	}
	return out, err
}

// timeoutError is a command that did not answer by its deadline.
type timeoutError struct {
	name string
	d    time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("%s did not answer within %s", e.name, e.d)
}

func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// noAnswer is the check for a debugger that did not answer in time: not
// a diagnosis of the debugger itself.
func noAnswer(id string, err error) Check {
	return Check{ID: id, Status: Warn, Summary: err.Error() + ": not checked",
		Fix: "run pyattach doctor again; if it keeps happening, check that `" + id + "` starts by itself"}
}

// sysFile is where a system file p (/etc/debian_version) of the machine
// that runs res is read: under a container's root, else under HostRoot.
func (s *Services) sysFile(res *target.Result, p string) string {
	if res != nil && res.Container {
		return debugfile.HostPath(res.Root, p)
	}
	return filepath.Join(s.HostRoot, p)
}

func (s *Services) procRoot() string {
	if s.ProcRoot == "" {
		return "/proc"
	}
	return s.ProcRoot
}

// Run runs every check, in parallel where they are independent, and
// returns them by what they cost the user (failures, then warnings, ok,
// skipped, notes), each status in a fixed order of ids. Without a target only the
// debuggers, ptrace and debuginfod are checked.
func Run(ctx context.Context, s *Services, tgt string) []Check {
	ctx, cancel := context.WithTimeout(ctx, overallTimeout)
	defer cancel()
	var mu sync.Mutex
	var checks []Check
	var wg sync.WaitGroup
	run := func(f func() []Check) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := f()
			mu.Lock()
			checks = append(checks, cs...)
			mu.Unlock()
		}()
	}
	run(func() []Check { return []Check{s.checkGDB(ctx)} })
	run(func() []Check { return []Check{s.checkLLDB(ctx)} })
	run(func() []Check { return []Check{s.checkDebuginfod(ctx)} })
	if tgt == "" {
		run(func() []Check { return []Check{s.checkPtrace(nil)} })
	} else if s.IsMachO != nil && s.MachODebugInfo != nil && s.IsMachO(tgt) {
		run(func() []Check { return s.machOChecks(ctx, tgt) })
	} else {
		run(func() []Check { return s.targetChecks(ctx, tgt) })
	}
	wg.Wait()
	sort.SliceStable(checks, func(i, j int) bool {
		si, sj := statusOrder(checks[i].Status), statusOrder(checks[j].Status)
		if si != sj {
			return si < sj
		}
		return checkOrder(checks[i].ID) < checkOrder(checks[j].ID)
	})
	return checks
}

// Failed reports whether a check failed (doctor exits 1).
func Failed(checks []Check) bool {
	for _, c := range checks {
		if c.Status == Fail {
			return true
		}
	}
	return false
}

// statusOrder ranks a status by what it costs the user, most first.
func statusOrder(status string) int {
	switch status {
	case Fail:
		return 0
	case Warn:
		return 1
	case OK:
		return 2
	case Skip:
		return 3
	}
	return 4
}

var checkPrefixes = []string{"gdb", "lldb", "ptrace", "target", "venv", "python", "debug", "extension", "pybt", "sources", "debuginfod"}

func checkOrder(id string) int {
	for i, p := range checkPrefixes {
		if id == p || strings.HasPrefix(id, p+".") {
			return i
		}
	}
	return len(checkPrefixes)
}
