package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/dap"
	"github.com/pyattach/pyattach/cmd/internal/debuggers"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/lldbgen"
)

// LLDBDAPCmd is `pyattach [FLAGS] lldb-dap [--lldb-dap PATH] [ARGS...]`.
type LLDBDAPCmd struct {
	Args []string `arg:"" optional:"" help:"--lldb-dap PATH first, to name the adapter; the rest is lldb-dap's own command line, passed through unchanged."`
}

// dapInterpreter says whether gdb's arguments ask for its DAP
// interpreter (-i=dap, --interpreter=dap, -i dap), before --args.
func dapInterpreter(args []string) bool {
	for i, a := range args {
		if a == "--args" || a == "--" {
			return false
		}
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		if n, v, ok := strings.Cut(name, "="); ok {
			if (n == "i" || n == "interpreter") && v == "dap" {
				return true
			}
			continue
		}
		if (name == "i" || name == "interpreter") && i+1 < len(args) && args[i+1] == "dap" {
			return true
		}
	}
	return false
}

// dapTarget is the target an attach or launch request names: lldb-dap's
// and gdb's fields (pid, program, coreFile; launch: program, args).
func dapTarget(command string, args dap.Message) (dbgInferior, error) {
	var t dbgInferior
	if v, ok := args["pid"]; ok && string(v) != "null" {
		var n json.Number
		var s string
		switch {
		case json.Unmarshal(v, &n) == nil:
		case json.Unmarshal(v, &s) == nil:
			n = json.Number(strings.TrimSpace(s))
		default:
			return t, fmt.Errorf("%s: pid %s is not a process id", command, v)
		}
		pid, err := strconv.Atoi(n.String())
		if err != nil || pid <= 0 {
			return t, fmt.Errorf("%s: pid %q is not a process id", command, n)
		}
		t.PID = pid
	}
	t.Program = args.Str("program")
	t.Core = args.Str("coreFile")
	if command == "launch" {
		if t.Program == "" {
			return t, errors.New("launch: no program")
		}
		t.Launch = true
		var a []string
		if v, ok := args["args"]; ok {
			if err := json.Unmarshal(v, &a); err != nil {
				return t, fmt.Errorf("launch: args: %v", err)
			}
		}
		t.Args = a
		t.PID, t.Core = 0, ""
	}
	if t.PID == 0 && t.Core == "" && t.Program == "" {
		return t, fmt.Errorf("%s names no pid, coreFile or program", command)
	}
	return t, nil
}

// planRoot is the directory under which this machine opens the target's
// files as the target sees them ("" for its own files).
func planRoot(p plan.Plan) string {
	switch {
	case p.Sysroot != "":
		return p.Sysroot
	case p.LLDBCoreSysroot != "":
		return p.LLDBCoreSysroot
	case p.Walker != nil && p.Walker.Root != "":
		return p.Walker.Root
	}
	return ""
}

// quietApp is app for the proxy's own work: stdout is the protocol, so
// everything pyattach prints goes to stderr.
func quietApp(app *App) *App {
	a := *app
	a.Stdout = app.Stderr
	a.Stdin = strings.NewReader("")
	return &a
}

// dapPlan builds the plan of an attach or launch request; a bundle's
// core in coreFile is replaced by the unpacked core.
func dapPlan(name, command string, args dap.Message, g *Globals, app *App, cfg *config.Config) (plan.Plan, error) {
	t, err := dapTarget(command, args)
	if err != nil {
		return plan.Plan{}, err
	}
	p, _, err := debuggerPlan(name, t, nil, g, quietApp(app), cfg)
	if err != nil {
		return p, err
	}
	if t.Core != "" && p.Core != "" && p.Core != t.Core {
		args.Set("coreFile", p.Core)
	}
	if t.Core != "" && t.Program == "" && p.Program != "" {
		// The core's executable, as pyattach found it (a bundle's copy).
		args.Set("program", p.Program)
	}
	return p, nil
}

// runGDBDAP runs gdb as a DAP server behind pyattach's proxy.
func (c *GDBCmd) runGDBDAP(g *Globals, app *App, cfg *config.Config) error {
	t, err := parseGDBArgs(c.Args, target.IsPID)
	if err != nil {
		return withHint(err, "pyattach passes everything after \"gdb\" to gdb; check gdb's own options with: gdb --help")
	}
	if t.PID != 0 || t.Core != "" || t.Program != "" {
		return withHint(errors.New("gdb -i=dap: the target is named on gdb's command line"),
			"name it in the editor's attach or launch configuration (pid, coreFile, program): pyattach reads it there")
	}
	gdb, err := findDebugger(app.Env, "gdb")
	if err != nil {
		return err
	}
	prepare := func(command string, args dap.Message) (*dap.Setup, error) {
		p, err := dapPlan("gdb", command, args, g, app, cfg)
		if err != nil {
			return nil, err
		}
		sc, err := gdbgen.Generate(p)
		if err != nil {
			return nil, fmt.Errorf("gdb: %w", err)
		}
		early, late, err := scriptPaths(app.dirs(), g.Script, "gdb", sc.Early, sc.Late)
		if err != nil {
			return nil, err
		}
		s := &dap.Setup{Root: planRoot(p)}
		line, err := gdbgen.SourceLine(early)
		if err != nil {
			return nil, err
		}
		s.Early = []string{line}
		if late != "" {
			if line, err = gdbgen.SourceLine(late); err != nil {
				return nil, err
			}
			s.Late = []string{line}
		}
		// The proxy merges the frames itself; gdb's DAP would apply
		// pyattach's frame filter to its stackTrace otherwise.
		s.Late = append(s.Late, "set pyattach-bt-filter off")
		return s, nil
	}
	argv := append([]string{gdb}, c.Args...)
	if g.Print {
		fmt.Fprintf(app.Stdout, "# command line (the plan is built at the editor's attach or launch)\n%s\n", strings.Join(argv, " "))
		return nil
	}
	return runProxy(app, dap.GDB, argv, app.Env, prepare)
}

// Run starts lldb-dap behind pyattach's proxy.
func (c *LLDBDAPCmd) Run(g *Globals, app *App, cfg *config.Config) error {
	args := c.Args
	path := ""
	if len(args) > 0 {
		if v, ok := strings.CutPrefix(args[0], "--lldb-dap="); ok {
			path, args = v, args[1:]
		} else if args[0] == "--lldb-dap" {
			if len(args) < 2 {
				return withHint(errors.New("lldb-dap: --lldb-dap needs a path"), "pyattach lldb-dap --lldb-dap /usr/bin/lldb-dap-19")
			}
			path, args = args[1], args[2:]
		}
	}
	adapter, err := findLLDBDAP(app.Env, path)
	if err != nil {
		return err
	}
	// lldb's Python package, for the lldb-dap process (Debian's lldb
	// 14 names a wrong one): asked of the lldb beside it.
	pyDir := ""
	if real, err := filepath.EvalSymlinks(adapter); err == nil {
		if lldb := filepath.Join(filepath.Dir(real), "lldb"); isExec(lldb) {
			ctx, cancel := context.WithTimeout(app.Ctx, debuggerProbeTimeout)
			pyDir = debuggers.LLDBPythonDir(ctx, debuggers.Run, app.Env, lldb)
			cancel()
		}
	}
	env := lldbgen.Env(plan.Plan{LLDBPythonPath: pyDir}, app.Env)
	prepare := func(command string, args dap.Message) (*dap.Setup, error) {
		p, err := dapPlan("lldb-dap", command, args, g, app, cfg)
		if err != nil {
			return nil, err
		}
		if p.LLDBRoot != "" {
			return nil, withHint(errors.New("lldb-dap: the process runs in another root (a container or chroot), whose files lldb-dap cannot be given"), "use: pyattach gdb -i=dap")
		}
		p.LLDBPythonPath = pyDir
		sc, err := lldbgen.Generate(p)
		if err != nil {
			return nil, fmt.Errorf("lldb: %w", err)
		}
		before, after, err := scriptPaths(app.dirs(), g.Script, "lldb", sc.Before, sc.After)
		if err != nil {
			return nil, err
		}
		s := &dap.Setup{Root: planRoot(p)}
		for i, f := range []string{before, after} {
			if f == "" {
				continue
			}
			wrap, err := lldbgen.QuietSource(f)
			if err != nil {
				return nil, err
			}
			q, _, err := scriptPaths(app.dirs(), "", "lldb", wrap, "")
			if err != nil {
				return nil, err
			}
			cmd, err := lldbgen.QuietSourceCommand(q)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				s.InitCommands = []string{cmd}
			} else {
				s.PostRunCommands = []string{cmd}
			}
		}
		// The proxy merges the frames itself; lldb 22's frame provider,
		// which the second script registers once the target exists,
		// would put the Python frames in lldb-dap's stackTrace
		// otherwise. Off before it: it then registers nothing.
		s.InitCommands = append(s.InitCommands, "pyattach-bt-filter off")
		return s, nil
	}
	argv := append([]string{adapter}, args...)
	if g.Print {
		fmt.Fprintf(app.Stdout, "# command line (the plan is built at the editor's attach or launch)\n%s\n", strings.Join(argv, " "))
		return nil
	}
	return runProxy(app, dap.LLDB, argv, env, prepare)
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// findLLDBDAP is the adapter to run: path when given, else lldb-dap on
// PATH, else lldb-dap-NN (newest first), else lldb-vscode-NN, as lldb's
// adapter was named before 18.
func findLLDBDAP(env []string, path string) (string, error) {
	if path != "" {
		if !isExec(path) {
			return "", withHint(fmt.Errorf("lldb-dap: --lldb-dap %s is not an executable file", path), "name lldb's DAP adapter, such as /usr/bin/lldb-dap-19 or /usr/bin/lldb-vscode-14")
		}
		return path, nil
	}
	if p, err := lookPath(env, "lldb-dap"); err == nil {
		return p, nil
	}
	for _, base := range []string{"lldb-dap-", "lldb-vscode-"} {
		type cand struct {
			n    int
			path string
		}
		var cs []cand
		for _, dir := range filepath.SplitList(envGet(env, "PATH")) {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				v, ok := strings.CutPrefix(e.Name(), base)
				if !ok {
					continue
				}
				n, err := strconv.Atoi(v)
				if err != nil || n <= 0 {
					continue
				}
				if p := filepath.Join(dir, e.Name()); isExec(p) {
					cs = append(cs, cand{n, p})
				}
			}
		}
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].n > cs[j].n })
		if len(cs) > 0 {
			return cs[0].path, nil
		}
	}
	return "", withHint(fmt.Errorf("lldb-dap is not installed: %w", exec.ErrNotFound), "install it (Debian 12: sudo apt-get install lldb-14, which ships lldb-vscode-14; Debian 13: lldb-19, which ships lldb-dap-19), or name it: pyattach lldb-dap --lldb-dap PATH")
}

func envGet(env []string, k string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// runProxy starts the adapter argv and relays the editor's stdio to it
// through the proxy until either side ends; the adapter's exit code is
// pyattach's.
func runProxy(app *App, kind dap.Kind, argv, env []string, prepare func(string, dap.Message) (*dap.Setup, error)) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stderr = app.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return withHint(fmt.Errorf("start %s: %w", argv[0], err), "check that the adapter runs: %s --help", argv[0])
	}
	p := dap.New(dap.Config{Kind: kind, Prepare: prepare, Log: app.Stderr}, app.Stdout, in)
	done := make(chan error, 1)
	go func() { done <- p.Run(app.Stdin, out) }()
	var runErr error
	select {
	case runErr = <-done:
	case <-app.Ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	// The editor is gone or the adapter ended: the adapter's stdin
	// closes, and it gets a while to detach before it is killed.
	in.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		werr = <-exited
	}
	if runErr != nil {
		fmt.Fprintf(app.Stderr, "pyattach: %v\n", runErr)
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return exitError(code)
		}
		return exitError(1)
	}
	if werr != nil && !errors.Is(werr, io.EOF) {
		return werr
	}
	if runErr != nil {
		return exitError(1)
	}
	return nil
}
