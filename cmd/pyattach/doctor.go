package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/debuginfo"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/pyext"
	"github.com/pyattach/pyattach/detect/pyoffsets"
	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/gdbgen"
)

// DoctorCmd is `pyattach doctor`.
type DoctorCmd struct {
	Target string `arg:"" optional:"" help:"A PID, interpreter, venv or script to check (optional: without it, only the debuggers and ptrace are checked)."`
	JSON   bool   `help:"Print {checks: [{id, status, summary, fix, details}]}."`
}

// Help is shown by `pyattach doctor --help`.
func (c *DoctorCmd) Help() string {
	return `Runs every check that explains Undefined command: "py-bt", frames shown as
"??" or "(frame information optimized out)", and missing sources, and
prints for each problem what it means and the command that fixes it.
Exit code 0 when nothing fails, 1 when something does.

Examples:
  pyattach doctor
  pyattach doctor 12345
  pyattach doctor --json .venv`
}

// Check is one finding.
type Check struct {
	ID      string `json:"id"`
	Status  string `json:"status"` // ok, warn, fail, skip
	Summary string `json:"summary"`
	Fix     string `json:"fix"`
	// Details are the facts behind the summary, one a line (for a
	// missing extension: every place looked at, and what was there).
	Details []string `json:"details,omitempty"`
}

// Statuses of a check.
const (
	statusOK   = "ok"
	statusWarn = "warn"
	statusFail = "fail"
	statusSkip = "skip"
)

// doctorTimeout bounds a check that waits on a debugger or the network.
const doctorTimeout = 3 * time.Second

// Run runs the checks, in parallel where they are independent.
func (c *DoctorCmd) Run(g *Globals, app *App, cfg *Config) error {
	ctx, cancel := context.WithTimeout(app.Ctx, 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	var checks []Check
	add := func(cs ...Check) {
		mu.Lock()
		checks = append(checks, cs...)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	run := func(f func() []Check) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			add(f()...)
		}()
	}
	run(func() []Check { return []Check{checkGDB(ctx, app)} })
	run(func() []Check { return []Check{checkLLDB(ctx, app)} })
	run(func() []Check { return []Check{checkDebuginfod(ctx, app, g, cfg)} })
	if c.Target == "" {
		run(func() []Check { return []Check{checkPtrace(g, nil)} })
	} else {
		run(func() []Check { return targetChecks(ctx, c.Target, g, app, cfg) })
	}
	wg.Wait()
	sort.SliceStable(checks, func(i, j int) bool { return checkOrder(checks[i].ID) < checkOrder(checks[j].ID) })
	failed := false
	for _, ch := range checks {
		failed = failed || ch.Status == statusFail
	}
	if c.JSON {
		if err := writeJSON(app.Stdout, struct {
			Checks []Check `json:"checks"`
		}{checks}); err != nil {
			return err
		}
	} else {
		printChecks(app.Stdout, checks, colorWanted(app))
	}
	if failed {
		return exitError(1)
	}
	return nil
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

// colorWanted: colour on a terminal, unless NO_COLOR is set.
func colorWanted(app *App) bool {
	if _, set := lookupEnv(app.Env, "NO_COLOR"); set {
		return false
	}
	f, ok := app.Stdout.(*os.File)
	return ok && isTerminal(f)
}

func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func printChecks(w io.Writer, checks []Check, color bool) {
	paint := func(s, code string) string {
		if !color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	for _, ch := range checks {
		label := map[string]string{statusOK: paint("ok  ", "32"), statusWarn: paint("WARN", "33"), statusFail: paint("FAIL", "31"), statusSkip: paint("skip", "2")}[ch.Status]
		fmt.Fprintf(w, "%s  %-22s %s\n", label, ch.ID, ch.Summary)
		for _, d := range ch.Details {
			fmt.Fprintf(w, "      - %s\n", d)
		}
		if ch.Fix != "" && ch.Status != statusOK {
			for i, l := range strings.Split(ch.Fix, "\n") {
				prefix := "      fix: "
				if i > 0 {
					prefix = "           "
				}
				fmt.Fprintf(w, "%s%s\n", prefix, l)
			}
		}
	}
}

// runTool runs a command with a timeout and returns its combined output.
func runTool(ctx context.Context, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var gdbVersionRE = regexp.MustCompile(`GNU gdb .*?(\d+\.\d+)`)

func checkGDB(ctx context.Context, app *App) Check {
	gdb, err := findDebugger(app.Env, "gdb")
	if err != nil {
		return Check{ID: "gdb", Status: statusFail, Summary: "gdb is not installed", Fix: "sudo apt-get install gdb (Fedora: sudo dnf install gdb)"}
	}
	out, _ := runTool(ctx, app.Env, gdb, "-nx", "-batch", "-ex", "show version", "-ex", "python import sys; print('PYTHON=' + sys.version.split()[0])")
	ver := "unknown version"
	if m := gdbVersionRE.FindStringSubmatch(out); m != nil {
		ver = m[1]
	}
	i := strings.Index(out, "PYTHON=")
	if i < 0 {
		return Check{ID: "gdb", Status: statusFail, Summary: fmt.Sprintf("gdb %s has no Python: py-bt and the CPython extension need it", ver),
			Fix: "install a gdb built with Python (Debian's and Fedora's gdb packages are): sudo apt-get install gdb"}
	}
	py := strings.Fields(out[i+len("PYTHON="):])[0]
	return Check{ID: "gdb", Status: statusOK, Summary: fmt.Sprintf("gdb %s (%s) with Python %s", ver, gdb, py)}
}

func checkLLDB(ctx context.Context, app *App) Check {
	lldb, err := findDebugger(app.Env, "lldb", "lldb-14", "lldb-15", "lldb-16", "lldb-17", "lldb-18", "lldb-19")
	if err != nil {
		return Check{ID: "lldb", Status: statusSkip, Summary: "lldb is not installed (only needed for pyattach lldb)", Fix: "sudo apt-get install lldb python3-lldb-14"}
	}
	out, _ := runTool(ctx, app.Env, lldb, "-b", "-o", "script print(6*7)")
	if regexp.MustCompile(`(?m)^42$`).MatchString(out) {
		return Check{ID: "lldb", Status: statusOK, Summary: fmt.Sprintf("lldb (%s): its script command works", lldb)}
	}
	dir := lldbPythonPath(lldb)
	if dir == "" {
		return Check{ID: "lldb", Status: statusWarn, Summary: fmt.Sprintf("lldb (%s): its script command fails and its Python package was not found", lldb),
			Fix: "install lldb's Python bindings: sudo apt-get install python3-lldb-14"}
	}
	return Check{ID: "lldb", Status: statusWarn,
		Summary: fmt.Sprintf("lldb (%s): its script command fails: `lldb -P` names a directory without lldb's Python package (Debian's lldb 14)", lldb),
		Fix:     fmt.Sprintf("pyattach lldb sets it for you; for plain lldb: PYTHONPATH=%s %s", shellQuote(dir), filepath.Base(lldb))}
}

func checkDebuginfod(ctx context.Context, app *App, g *Globals, cfg *Config) Check {
	urls := strings.Fields(envValue(app.Env, "DEBUGINFOD_URLS"))
	if len(urls) == 0 {
		return Check{ID: "debuginfod", Status: statusSkip, Summary: "no debuginfod servers configured (DEBUGINFOD_URLS is empty)",
			Fix: "to fetch missing debug files automatically, set DEBUGINFOD_URLS to your distribution's server (see debuginfod(8))"}
	}
	if g.Offline || cfg.Offline {
		return Check{ID: "debuginfod", Status: statusSkip, Summary: "offline: debuginfod servers not checked"}
	}
	type res struct {
		url string
		err error
	}
	results := make([]res, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = res{u, reachURL(ctx, u)}
		}()
	}
	wg.Wait()
	var bad []string
	for _, r := range results {
		if r.err != nil {
			bad = append(bad, fmt.Sprintf("%s (%v)", r.url, r.err))
		}
	}
	if len(bad) > 0 {
		return Check{ID: "debuginfod", Status: statusWarn, Summary: fmt.Sprintf("debuginfod servers not reachable within %s: %s", doctorTimeout, strings.Join(bad, ", ")),
			Fix: "check the network or DEBUGINFOD_URLS; pyattach --offline uses local files and the cache only"}
	}
	return Check{ID: "debuginfod", Status: statusOK, Summary: "debuginfod servers reachable: " + strings.Join(urls, " ")}
}

// checkPtrace says whether this user may attach to pid (nil: in general).
func checkPtrace(g *Globals, p *target.Result) Check {
	root := os.Geteuid() == 0
	scope := -1
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		scope, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if p != nil && p.PID != 0 {
		status, _ := os.ReadFile(filepath.Join(g.ProcRoot, strconv.Itoa(p.PID), "status"))
		if m := regexp.MustCompile(`(?m)^TracerPid:\s+(\d+)`).FindSubmatch(status); m != nil && string(m[1]) != "0" {
			comm, _ := os.ReadFile(filepath.Join(g.ProcRoot, string(m[1]), "comm"))
			return Check{ID: "ptrace", Status: statusFail, Summary: fmt.Sprintf("process %d is already traced by %s (%s): a process has one tracer", p.PID, m[1], strings.TrimSpace(string(comm))),
				Fix: fmt.Sprintf("detach that debugger or strace first (kill -CONT %d if it was left stopped)", p.PID)}
		}
		if m := regexp.MustCompile(`(?m)^Uid:\s+(\d+)`).FindSubmatch(status); m != nil && !root {
			if uid, _ := strconv.Atoi(string(m[1])); uid != os.Getuid() {
				return Check{ID: "ptrace", Status: statusFail, Summary: fmt.Sprintf("process %d belongs to uid %d, you are uid %d", p.PID, uid, os.Getuid()),
					Fix: "run as that user, or with sudo"}
			}
		}
	}
	self, _ := os.ReadFile("/proc/self/status")
	if m := regexp.MustCompile(`(?m)^Seccomp:\s+(\d+)`).FindSubmatch(self); m != nil && string(m[1]) == "2" {
		return Check{ID: "ptrace", Status: statusWarn, Summary: "pyattach runs under a seccomp filter (a container?): ptrace may be refused",
			Fix: "docker run --cap-add=SYS_PTRACE --security-opt seccomp=unconfined ..., or debug from the host"}
	}
	switch {
	case scope < 0:
		return Check{ID: "ptrace", Status: statusOK, Summary: "no Yama ptrace restriction (kernel.yama.ptrace_scope absent)"}
	case scope == 0:
		return Check{ID: "ptrace", Status: statusOK, Summary: "ptrace_scope 0: processes of the same user can be attached"}
	case scope == 1 && root:
		return Check{ID: "ptrace", Status: statusOK, Summary: "ptrace_scope 1, and you are root (CAP_SYS_PTRACE)"}
	case scope == 1:
		return Check{ID: "ptrace", Status: statusWarn, Summary: "ptrace_scope 1: only a parent process (or root) may attach; gdb -p will fail with 'Operation not permitted'",
			Fix: "sudo pyattach gdb -p PID, or for this boot: echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope"}
	case scope == 2 && root:
		return Check{ID: "ptrace", Status: statusOK, Summary: "ptrace_scope 2, and you are root"}
	case scope == 2:
		return Check{ID: "ptrace", Status: statusFail, Summary: "ptrace_scope 2: only root may attach", Fix: "sudo pyattach gdb -p PID"}
	default:
		return Check{ID: "ptrace", Status: statusFail, Summary: fmt.Sprintf("ptrace_scope %d: no process may attach until reboot", scope), Fix: "reboot with kernel.yama.ptrace_scope=0 or 1 (sysctl.d)"}
	}
}

// targetChecks resolves the target and explains what it finds.
func targetChecks(ctx context.Context, tgt string, g *Globals, app *App, cfg *Config) []Check {
	res, err := target.Resolve(ctx, tgt, target.Options{ProcRoot: g.ProcRoot, Env: app.Env, Cwd: app.Cwd})
	var np *target.NotPythonError
	if errors.As(err, &np) {
		ch := Check{ID: "target", Status: statusFail, Summary: np.Error()}
		if len(np.Children) > 0 {
			var kids []string
			for _, k := range np.Children {
				kids = append(kids, fmt.Sprintf("%d (%s)", k.PID, k.Cmdline))
			}
			ch.Summary = fmt.Sprintf("process %d (%s) is a launcher, not Python; its Python children: %s", np.PID, np.Comm, strings.Join(kids, ", "))
			ch.Fix = fmt.Sprintf("pyattach doctor %d", np.Children[0].PID)
		} else {
			ch.Fix = "give the PID of the Python process: ps -ef | grep -i python"
		}
		return []Check{ch, checkPtrace(g, nil)}
	}
	if err != nil {
		return []Check{{ID: "target", Status: statusFail, Summary: oneLine(err.Error()), Fix: hintFor(err)}}
	}
	var checks []Check
	checks = append(checks, checkPtrace(g, res))
	checks = append(checks, targetFacts(res)...)
	di, err := debugInfoFor(ctx, tgt, res, nil, g, app, cfg)
	if err != nil {
		return append(checks, Check{ID: "debug", Status: statusFail, Summary: oneLine(err.Error())})
	}
	checks = append(checks, venvCheck(res, di))
	checks = append(checks, debugChecks(res, di)...)
	checks = append(checks, extensionChecks(ctx, res, di, app)...)
	checks = append(checks, pybtCheck(res, di))
	checks = append(checks, sourceChecks(res, di, g, cfg, app)...)
	return checks
}

// targetFacts notes what kind of interpreter it is.
func targetFacts(res *target.Result) []Check {
	var out []Check
	desc := fmt.Sprintf("%s: Python %s, %s", res.Interpreter, res.Python.Version, map[bool]string{true: "runtime linked into the executable", false: "libpython " + res.Libpython}[res.Static])
	out = append(out, Check{ID: "target", Status: statusOK, Summary: desc})
	if res.Shim != "" {
		out = append(out, Check{ID: "target.shim", Status: statusOK, Summary: fmt.Sprintf("%s is a pyenv shim; pyenv runs %s (%s)", res.Shim, res.Interpreter, res.ShimVersion)})
	}
	if res.Embedded {
		out = append(out, Check{ID: "target.embedded", Status: statusOK, Summary: fmt.Sprintf("%s embeds Python through %s", res.Exe, res.Libpython)})
	}
	if res.Container {
		out = append(out, Check{ID: "target.container", Status: statusWarn, Summary: fmt.Sprintf("the process runs in another root or mount namespace; its files are read under %s", res.Root),
			Fix: "pyattach gdb reads its files there (a chroot: set sysroot; pivot_root, as podman and docker do: gdb's target: sysroot); lldb 14 cannot: use gdb, or run lldb inside the container"})
	}
	if res.ExeDeleted {
		out = append(out, Check{ID: "target.deleted", Status: statusWarn, Summary: fmt.Sprintf("the executable %s was deleted or replaced after the process started; plain gdb may load the wrong file", res.Exe),
			Fix: fmt.Sprintf("pyattach gdb -p %d (it reads the running binary through /proc/%d/exe)", res.PID, res.PID)})
	}
	if res.Python.DebugBuild {
		out = append(out, Check{ID: "python.debug-build", Status: statusOK, Summary: "a debug build (Py_DEBUG, ABI flag d): unoptimised, every Python frame is visible; not ABI-compatible with release-built extension modules"})
	}
	if res.Python.FreeThreaded {
		out = append(out, Check{ID: "python.free-threaded", Status: statusOK, Summary: "a free-threaded build (ABI flag t): the gdb extension of this exact version is required"})
	}
	return out
}

// venvCheck explains why plain gdb misses the extension for a venv copy.
func venvCheck(res *target.Result, di *debuginfo.Info) Check {
	switch res.Venv.Kind {
	case "copies":
		plain := "gdb -iex " + shellQuote("file "+res.Interpreter)
		ext := di.Extensions.GDB
		if ext != "" && ext != gdbAutoLoadDir+res.Interpreter+"-gdb.py" {
			plain += " -ex " + shellQuote("source "+ext)
		}
		how := "-p PID"
		if res.PID != 0 {
			how = "-p " + strconv.Itoa(res.PID)
		}
		return Check{ID: "venv", Status: statusWarn,
			Summary: fmt.Sprintf("%s is a copy of %s (venv made with --copies): gdb looks for the CPython extension by the executable's path, so plain gdb has no py-bt", res.Exe, res.Interpreter),
			Fix:     fmt.Sprintf("pyattach gdb %s\nor plain gdb: %s %s", how, plain, how)}
	case "symlinks":
		return Check{ID: "venv", Status: statusOK, Summary: fmt.Sprintf("%s is a symlinked venv: gdb reaches %s through it", res.Venv.Path, res.Interpreter)}
	case "conda":
		return Check{ID: "venv", Status: statusOK, Summary: "a conda environment: its python is a real interpreter"}
	}
	return Check{ID: "venv", Status: statusOK, Summary: "not in a virtualenv"}
}

// debugChecks explains the debug information of the modules that matter.
func debugChecks(res *target.Result, di *debuginfo.Info) []Check {
	var out []Check
	for _, m := range di.Modules {
		runtime := isRuntimeModule(m.Path, res)
		host := res.Embedded && m.Path == res.Exe
		if !runtime && !host && !sourceModule(m.Path, res) {
			continue
		}
		id := "debug." + filepath.Base(m.Path)
		d := m.Debug
		switch {
		case host && d.Kind != debugfile.KindDWARF && d.Kind != debugfile.KindLineTables:
			out = append(out, Check{ID: id, Status: statusWarn,
				Summary: fmt.Sprintf("%s (the program embedding Python) has no debug information: its own native frames show as ?? or without lines; py-bt does not need it", m.Path),
				Fix:     missingDebugFix(m, res)})
		case m.Error != "":
			out = append(out, Check{ID: id, Status: statusWarn, Summary: fmt.Sprintf("%s: %s", m.Path, m.Error)})
		case d.Kind == debugfile.KindDWARF || d.Kind == debugfile.KindLineTables:
			out = append(out, producerChecks(id, m, runtime, walkerCovers(res))...)
		case runtime && !walkerCovers(res):
			out = append(out, Check{ID: id, Status: statusFail, Summary: missingDebugSummary(m), Fix: missingDebugFix(m, res)})
		case runtime:
			out = append(out, Check{ID: id, Status: statusWarn, Summary: missingDebugSummary(m) + "; pyattach's walker still reads them", Fix: missingDebugFix(m, res)})
		default:
			out = append(out, Check{ID: id, Status: statusWarn, Summary: missingDebugSummary(m), Fix: missingDebugFix(m, res)})
		}
	}
	return out
}

func missingDebugSummary(m debuginfo.Module) string {
	switch m.Debug.Kind {
	case debugfile.KindSymtab, debugfile.KindMiniDebugInfo:
		return fmt.Sprintf("%s has a symbol table only (%s): frames show function names but no files, lines or locals; py-bt cannot read frames", m.Path, m.Debug.Kind)
	}
	return fmt.Sprintf("%s has no debug information (build-id %s): native frames show as ??, CPython's py-bt cannot read Python frames", m.Path, m.BuildID)
}

// missingDebugFix names the package or command that brings the debug
// file of a module.
func missingDebugFix(m debuginfo.Module, res *target.Result) string {
	if strings.Contains(m.Path, "/uv/python/") || strings.Contains(m.Path, "python-build-standalone") {
		return "python-build-standalone (uv) interpreters ship stripped; use an interpreter with debug symbols (pyenv install, or your distribution's python3.X with python3.X-dbg)"
	}
	if res.Container {
		return containerDebugFix(m, res)
	}
	if base := filepath.Base(res.Interpreter); strings.HasPrefix(res.Interpreter, "/usr/bin/python3.") && (m.Path == res.Interpreter || m.Path == res.Exe || m.Path == res.Libpython) {
		if _, err := os.Stat("/etc/debian_version"); err == nil {
			return "sudo apt-get install " + strings.TrimSuffix(base, "d") + "-dbg"
		}
		if _, err := os.Stat("/etc/fedora-release"); err == nil {
			return "sudo dnf debuginfo-install python3"
		}
	}
	if _, err := os.Stat("/etc/fedora-release"); err == nil && m.BuildID != "" {
		return fmt.Sprintf("sudo dnf install 'debuginfo(build-id)=%s'", m.BuildID)
	}
	if _, err := os.Stat("/etc/debian_version"); err == nil {
		if out, err := exec.Command("dpkg", "-S", m.Path).Output(); err == nil {
			pkg, _, _ := strings.Cut(strings.TrimSpace(string(out)), ":")
			return fmt.Sprintf("sudo apt-get install %s-dbgsym (from the debug archive; see https://wiki.debian.org/HowToGetABacktrace), or set DEBUGINFOD_URLS", pkg)
		}
	}
	return "install its debug file into a debug directory (pyattach --debug-dir DIR), install a split debug package (pyattach symbols install), or set DEBUGINFOD_URLS"
}

// containerDebugFix is missingDebugFix for a process in a container:
// the package comes from the container's distribution and dpkg
// database (read under its root), and is installed there, where the
// debug file is searched first; this machine's packages are another
// distribution's files.
func containerDebugFix(m debuginfo.Module, res *target.Result) string {
	in := func(p string) string { return debugfile.HostPath(res.Root, p) }
	where := "in the container (podman exec or docker exec CONTAINER ...): "
	if _, err := os.Stat(in("/etc/debian_version")); err == nil {
		if pkg := dpkgOwner(in("/var/lib/dpkg/info"), m.Path); pkg != "" {
			dbg := pkg + "-dbgsym (from the debug archive, https://wiki.debian.org/HowToGetABacktrace)"
			// CPython's packages: python3.X-minimal, libpython3.X-stdlib
			// ... all have their debug files in (lib)python3.X-dbg.
			if py := debianPythonPkg.FindStringSubmatch(pkg); py != nil {
				dbg = py[1] + "-dbg"
			}
			return where + "apt-get install " + dbg
		}
	}
	if _, err := os.Stat(in("/etc/fedora-release")); err == nil && m.BuildID != "" {
		return where + fmt.Sprintf("dnf install 'debuginfo(build-id)=%s'", m.BuildID)
	}
	return where + "install its debug file under /usr/lib/debug there, or here: pyattach --debug-dir DIR, or set DEBUGINFOD_URLS"
}

var debianPythonPkg = regexp.MustCompile(`^((?:lib)?python3\.\d+t?)(?:-minimal|-stdlib)?$`)

// dpkgOwner returns the package whose file list in dpkg's info
// directory (a host path) names p, without the architecture, or "".
func dpkgOwner(info, p string) string {
	lists, _ := filepath.Glob(filepath.Join(info, "*.list"))
	for _, l := range lists {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			if strings.TrimRight(line, "\n") == p {
				pkg, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(l), ".list"), ":")
				return pkg
			}
		}
	}
	return ""
}

// producerChecks reads the compiler line: -g level and optimisation.
func producerChecks(id string, m debuginfo.Module, runtime, walker bool) []Check {
	p := m.Debug.Producer
	where := fmt.Sprintf("%s: debug information %s %s", m.Path, m.Debug.Via, m.Debug.Path)
	if m.Debug.Via == debugfile.ViaEmbedded {
		where = fmt.Sprintf("%s: debug information embedded", m.Path)
	}
	if p == nil {
		return []Check{{ID: id, Status: statusOK, Summary: where}}
	}
	if p.GLevel == "0" || p.GLevel == "1" || m.Debug.Kind == debugfile.KindLineTables {
		st := statusWarn
		if runtime {
			st = statusFail
		}
		msg := "py-bt cannot read frames"
		if runtime && walker {
			st, msg = statusWarn, "CPython's py-bt cannot read frames (pyattach's walker can)"
		}
		return []Check{{ID: id, Status: st, Summary: fmt.Sprintf("%s, built with -g%s: line tables only, no locals: %s", where, p.GLevel, msg),
			Fix: "rebuild with -g (CFLAGS=-g), or use a build with full debug information"}}
	}
	if p.OLevel == "3" || p.LTO {
		opt := "-O" + p.OLevel
		if p.LTO {
			opt += " and LTO"
		}
		return []Check{{ID: id, Status: statusWarn, Summary: fmt.Sprintf("%s, optimised with %s: some Python frames may show as (frame information optimized out)", where, opt),
			Fix: "for every frame, use a debug build (Debian: python3.Xd from python3.X-dbg; pyenv: PYTHON_CFLAGS='-O0 -g' pyenv install)"}}
	}
	return []Check{{ID: id, Status: statusOK, Summary: fmt.Sprintf("%s (-g%s -O%s)", where, p.GLevel, p.OLevel)}}
}

// extensionChecks: found, its version, whether gdb's Python runs it, and
// whether plain gdb's safe path would decline it.
func extensionChecks(ctx context.Context, res *target.Result, di *debuginfo.Info, app *App) []Check {
	ex := di.Extensions
	var out []Check
	for _, t := range ex.GDBTried {
		if file, why, ok := strings.Cut(t, ": refused: "); ok {
			out = append(out, Check{ID: "extension.refused", Status: statusWarn, Summary: fmt.Sprintf("%s is not used: %s", file, why),
				Fix: "pyattach runs no extension that another user could change: chmod go-w or chown it to root or yourself, or pyattach fetch-extension " + shellQuote(res.Target)})
		}
	}
	if ex.GDB == "" {
		st, what := statusFail, "py-bt is undefined"
		if walkerCovers(res) {
			st, what = statusWarn, "plain gdb has no py-bt (pyattach's walker gives pyattach gdb and lldb one)"
		}
		looked := extensionPlaces(res, ex.GDBTried)
		var where []string
		for _, pl := range looked {
			where = append(where, pl.name)
		}
		return append(out, Check{ID: "extension", Status: st,
			Summary: fmt.Sprintf("no CPython gdb extension (python%s-gdb.py, libpython.py) for Python %s: %s; looked %s", cmp.Or(pyversion.MajorMinorOf(res.Python.Version), res.Python.Version), res.Python.Version, what, strings.Join(where, ", ")),
			Fix:     missingExtensionFix(res, looked), Details: placeDetails(looked)})
	}
	if !ex.GDBVersionMatch {
		of := "Python " + ex.GDBVersion
		if ex.GDBVersion == "" {
			of = "an unknown Python version"
		}
		out = append(out, Check{ID: "extension", Status: statusFail, Summary: fmt.Sprintf("%s is for %s, the interpreter is %s: py-bt would misread frames", ex.GDB, of, res.Python.Version),
			Fix: "pyattach fetch-extension " + shellQuote(res.Target)})
	} else {
		out = append(out, Check{ID: "extension", Status: statusOK, Summary: fmt.Sprintf("%s (Python %s)", ex.GDB, ex.GDBVersion)})
	}
	for _, w := range ex.GDBWarnings {
		out = append(out, Check{ID: "extension.warning", Status: statusWarn, Summary: w, Fix: "pyattach fetch-extension " + shellQuote(res.Target)})
	}
	// ex.GDB passed safefs.CheckTrusted in pyext; SourceLine refuses a
	// name gdb would not read back as it is.
	// A container's extension is run from under its root, where the
	// process sees it.
	source, serr := gdbgen.SourceLine(extensionOnHost(res, ex.GDB))
	if gdb, err := findDebugger(app.Env, "gdb"); err == nil && serr == nil {
		o, _ := runTool(ctx, app.Env, gdb, "-nx", "-batch", "-ex", "show auto-load safe-path", "-ex", source, "-ex", "help py-bt")
		if strings.Contains(o, `Undefined command: "py-bt"`) || strings.Contains(o, "Error occurred in Python") || strings.Contains(o, "Traceback (most recent call last)") {
			out = append(out, Check{ID: "extension.runs", Status: statusFail, Summary: fmt.Sprintf("gdb's Python cannot run %s: %s", ex.GDB, lastLine(o)),
				Fix: "use the extension of the interpreter's own version: pyattach fetch-extension " + shellQuote(res.Target)})
		}
		if strings.Contains(o, "$debugdir:$datadir/auto-load") && !strings.HasPrefix(ex.GDB, gdbAutoLoadDir+"/") && !strings.HasPrefix(ex.GDB, "/usr/lib/debug/") {
			// The line names exactly that file, as gdb reads it back.
			fix := "pyattach gdb sources it explicitly"
			real := ex.GDB
			if r, err := filepath.EvalSymlinks(real); err == nil {
				real = r
			}
			if line, err := gdbgen.SafePathLine(real); err == nil {
				fix += "; for plain gdb add to ~/.config/gdb/gdbinit: " + line
			}
			out = append(out, Check{ID: "extension.safe-path", Status: statusWarn,
				Summary: fmt.Sprintf("plain gdb declines to auto-load %s: it is outside gdb's auto-load safe-path ($debugdir:$datadir/auto-load)", ex.GDB),
				Fix:     fix})
		}
	}
	return out
}

// extPlace is one kind of place the gdb extension was looked for,
// with the paths looked at there (as FindGDB tried them: host paths,
// under the root for a container).
type extPlace struct {
	kind  string // beside, distribution, build-tree, config, cache
	name  string
	paths []string
	// buildDir is the build tree that the installed sysconfig data
	// names (abs_builddir), for the build-tree place.
	buildDir string
}

// extensionPlaces sorts what the gdb extension search tried into the
// places it stands for, in search order: beside the binary, the
// distribution's debug package (gdb's auto-load and debug
// directories), the build tree `make install` leaves (named by the
// installed sysconfig data's abs_builddir), the config file's
// extensions, and pyattach's cache. Every place is listed, including
// one with nothing to look at (no sysconfig data naming a build tree).
func extensionPlaces(res *target.Result, tried []string) []extPlace {
	root := ""
	if res.Container {
		root = res.Root
	}
	in := func(p string) string {
		if root == "" {
			return p
		}
		return filepath.Join(root, p)
	}
	var binDirs []string
	for _, p := range []string{res.Interpreter, res.Libpython} {
		if p == "" {
			continue
		}
		// A container's interpreter is looked for under its root, then
		// at the same path here.
		binDirs = append(binDirs, in(filepath.Dir(p)), filepath.Dir(p))
		if r, err := filepath.EvalSymlinks(debugfile.HostPath(root, p)); err == nil {
			binDirs = append(binDirs, filepath.Dir(r))
		}
	}
	var sys []string
	for _, d := range append(append([]string{}, pyext.DefaultDataDirs...), pyext.DefaultDebugDirs...) {
		sys = append(sys, in(d), d)
	}
	cache := filepath.Join(cacheDir(), "extensions")
	places := []extPlace{
		{kind: "beside", name: "beside the binary"},
		{kind: "distribution", name: "the distribution's debug package"},
		{kind: "build-tree", name: "the make install build tree (sysconfig abs_builddir)"},
		{kind: "config", name: "the config file's extensions"},
		{kind: "cache", name: "pyattach's cache"},
	}
	add := func(kind, p string) {
		for i := range places {
			if places[i].kind == kind {
				places[i].paths = append(places[i].paths, p)
				if kind == "build-tree" && places[i].buildDir == "" {
					// As the process sees it: a fix names it so.
					places[i].buildDir = stripRootDir(root, filepath.Dir(p))
				}
			}
		}
	}
	for _, t := range tried {
		p, _, _ := strings.Cut(t, ": ")
		switch {
		case underDir(p, cache):
			add("cache", p)
		case slices.ContainsFunc(sys, func(d string) bool { return underDir(p, d) }):
			add("distribution", p)
		case filepath.Base(p) == "python-gdb.py" && !slices.ContainsFunc(binDirs, func(d string) bool { return filepath.Dir(p) == d }):
			add("build-tree", p)
		case slices.ContainsFunc(binDirs, func(d string) bool { return filepath.Dir(p) == d }):
			add("beside", p)
		default:
			add("config", p)
		}
	}
	var out []extPlace
	for _, pl := range places {
		if pl.kind == "config" && len(pl.paths) == 0 {
			continue // no extensions configured
		}
		if pl.kind == "cache" && len(pl.paths) == 0 {
			pl.paths = []string{filepath.Join(cache, cmp.Or(res.Python.Version, "X.Y.Z"), "libpython.py")}
		}
		out = append(out, pl)
	}
	return out
}

// stripRootDir is p, a host path, as a process with root sees it.
func stripRootDir(root, p string) string {
	if root != "" && underDir(p, root) {
		return "/" + strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
	}
	return p
}

// placeDetails is one line per place: what was looked at there.
func placeDetails(places []extPlace) []string {
	var out []string
	for _, pl := range places {
		switch {
		case pl.kind == "build-tree" && pl.buildDir == "":
			out = append(out, pl.name+": no installed sysconfig data names a build tree")
		case pl.kind == "build-tree":
			out = append(out, fmt.Sprintf("%s: %s, named by sysconfig, has no python-gdb.py (the build tree was removed or moved)", pl.name, pl.buildDir))
		default:
			out = append(out, fmt.Sprintf("%s: %s", pl.name, strings.Join(pl.paths, ", ")))
		}
	}
	return out
}

// missingExtensionFix names what brings the gdb extension, matching
// why it is missing: an interpreter of a distribution package gets the
// package that ships the extension (inside the container when the
// process runs in one); any other gets CPython's libpython.py of its
// exact version, fetched by pyattach; a `make install` whose build tree
// is gone is told so.
func missingExtensionFix(res *target.Result, places []extPlace) string {
	root := ""
	if res.Container {
		root = res.Root
	}
	prefix := "sudo "
	if root != "" {
		prefix = "in the container (podman exec or docker exec CONTAINER ...): "
	}
	in := func(p string) string { return debugfile.HostPath(root, p) }
	if _, err := os.Stat(in("/etc/debian_version")); err == nil {
		for _, p := range []string{res.Interpreter, res.Libpython} {
			if p == "" {
				continue
			}
			if py := debianPythonPkg.FindStringSubmatch(dpkgOwner(in("/var/lib/dpkg/info"), p)); py != nil {
				return prefix + "apt-get install " + strings.TrimPrefix(py[1], "lib") + "-dbg (it ships the extension gdb auto-loads)"
			}
		}
	}
	if _, err := os.Stat(in("/etc/fedora-release")); err == nil && strings.HasPrefix(res.Interpreter, "/usr/bin/python3") {
		return prefix + "dnf debuginfo-install python3 (its debuginfo package ships the extension)"
	}
	fix := "pyattach fetch-extension " + shellQuote(res.Target) + " (downloads CPython's libpython.py of Python " + res.Python.Version + " into pyattach's cache)"
	for _, pl := range places {
		if pl.kind == "build-tree" && pl.buildDir != "" {
			fix += fmt.Sprintf("; or rebuild and keep the build tree at %s: make install leaves python-gdb.py there", pl.buildDir)
		}
	}
	return fix
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// sourceChecks lists the source trees that are missing.
func sourceChecks(res *target.Result, di *debuginfo.Info, g *Globals, cfg *Config, app *App) []Check {
	roots, err := sourceRoots(g, cfg, app)
	if err != nil {
		return []Check{{ID: "sources", Status: statusWarn, Summary: oneLine(err.Error())}}
	}
	m, err := mapSources(app.Ctx, res, di, roots, nil)
	if err != nil {
		return []Check{{ID: "sources", Status: statusSkip, Summary: oneLine(err.Error())}}
	}
	var out []Check
	for _, u := range m.Unresolved {
		out = append(out, Check{ID: "sources", Status: statusWarn,
			Summary: fmt.Sprintf("%d source files under %s are not on this machine (list and source list show \"No such file or directory\")", u.Files, u.Prefix),
			Fix:     u.Hint})
	}
	if len(out) == 0 {
		out = append(out, Check{ID: "sources", Status: statusOK, Summary: fmt.Sprintf("the sources of %d modules are found (%d rules)", len(m.Modules), len(m.Rules))})
	}
	return out
}

// reachURL asks a debuginfod server for its root page, briefly: any HTTP
// answer means it is reachable.
func reachURL(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(u, "/")+"/metrics", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// walkerCovers reports whether pyattach's stack walker reads this
// interpreter's frames.
func walkerCovers(res *target.Result) bool {
	return pyoffsets.Supported(res.Python.Version, res.Python.ABIFlags)
}

// pybtCheck says which py-bt answers for the target under pyattach gdb
// and lldb, and why: CPython's extension when it can read this build's
// frames (a matching extension, full DWARF for the interpreter, and no
// optimised 3.13+ eval loop that hides its frame), pyattach's walker
// otherwise, or none.
func pybtCheck(res *target.Result, di *debuginfo.Info) Check {
	ex := di.Extensions
	var why string
	switch {
	case ex.GDB == "":
		why = "no CPython extension was found"
	case !ex.GDBVersionMatch:
		why = "the CPython extension found is for Python " + ex.GDBVersion
	}
	if why == "" {
		why = runtimeDebugProblem(res, di)
	}
	walker := walkerCovers(res)
	switch {
	case why == "" && walker:
		return Check{ID: "pybt", Status: statusOK, Summary: fmt.Sprintf("py-bt: CPython's extension %s answers (it reads this build's frames); pyattach's walker stands in where it cannot, and in lldb (py-bt, py-bt all)", ex.GDB)}
	case why == "":
		return Check{ID: "pybt", Status: statusOK, Summary: fmt.Sprintf("py-bt: CPython's extension %s answers; pyattach's walker does not cover Python %s", ex.GDB, res.Python.Version)}
	case walker:
		return Check{ID: "pybt", Status: statusOK, Summary: fmt.Sprintf("py-bt: pyattach's walker answers in pyattach gdb and pyattach lldb (from memory): %s", why),
			Fix: "plain gdb has it too with a project init file: pyattach init --gdb --trust"}
	}
	fix := "pyattach fetch-extension " + shellQuote(res.Target)
	if ex.GDB == "" {
		fix = missingExtensionFix(res, extensionPlaces(res, ex.GDBTried))
	}
	return Check{ID: "pybt", Status: statusFail, Summary: fmt.Sprintf("no py-bt for Python %s: %s, and pyattach's walker covers 3.7 and later", res.Python.Version, why),
		Fix: fix}
}

// runtimeDebugProblem says why CPython's extension cannot read frames
// from the module holding the interpreter, or "".
func runtimeDebugProblem(res *target.Result, di *debuginfo.Info) string {
	mod := res.Interpreter
	if res.Libpython != "" {
		mod = res.Libpython
	}
	for _, m := range di.Modules {
		if m.Path != mod && !(res.Libpython == "" && m.Path == res.Exe) {
			continue
		}
		d := m.Debug
		if p := d.Producer; p != nil && (p.GLevel == "0" || p.GLevel == "1") {
			return fmt.Sprintf("%s was built with -g%s", m.Path, p.GLevel)
		}
		if d.Kind != debugfile.KindDWARF {
			return fmt.Sprintf("%s has no full DWARF (%s)", m.Path, d.Kind)
		}
		if p := d.Producer; p != nil {
			if v, err := pyversion.Parse(res.Python.Version); err == nil && v.HasMinor() && v.AtLeast(3, 13) && (p.LTO || p.OLevel == "2" || p.OLevel == "3" || p.OLevel == "s") {
				return fmt.Sprintf("Python %s built with -O%s%s: its eval loop's frame is optimised out, so CPython's py-bt prints (unable to read python frame information)", v.MajorMinor(), p.OLevel, map[bool]string{true: " and LTO"}[p.LTO])
			}
		}
		return ""
	}
	return ""
}

// isRuntimeModule reports whether the module holds the interpreter, whose
// debug information CPython's py-bt needs: libpython when there is one,
// else the executable (a static interpreter or its venv copy). The
// program that embeds a libpython (uwsgi) is not: without its debug
// information only its own native frames lose their names.
func isRuntimeModule(path string, res *target.Result) bool {
	if res.Libpython != "" {
		return path == res.Libpython
	}
	return path == res.Exe || path == res.Interpreter
}
