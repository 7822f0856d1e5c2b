package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/bundle"
	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/dump"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/cmd/internal/walkerdir"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv/environ"
)

// DumpCmd is `pyattach dump TARGET`.
type DumpCmd struct {
	Target   string `arg:"" optional:"" help:"The PID of a Python process (a venv's python too) or a core file (compressed too: zstd, lz4, xz, gzip)."`
	Coredump string `placeholder:"PID|latest" help:"Dump the core systemd-coredump stored for process PID (its latest), or the latest core of all, found with coredumpctl, instead of TARGET."`
	JSON     bool   `help:"Print one JSON object: pid or core, python.version, threads[] with tid, name, frames[] (function, file, line), innermost first."`
	Native   bool   `help:"Add each thread's C frames, merged with its Python frames into one stack (JSON: stack[] with kind, function, file, line, pc; native[] as unwound, innermost first)."`
	Verbose  bool   `short:"v" help:"Also print which reader ran, how long each step took, gdb's own messages and what the walk cost (memory reads, seconds), on stderr."`
	NoBlock  bool   `name:"no-block" help:"Read a live process without stopping it (direct reader): each thread's stack is read again until it holds still; one that keeps changing is marked unsettled, its frames not shown (JSON: unsettled, the times it was read)."`
	Reader   string `default:"auto" enum:"auto,gdb,direct" help:"How the process's memory is read: direct (a system python3 reads /proc/PID/mem, the process stopped with ptrace only while the pages its stacks live in, and with --native its threads' registers and stacks, are copied; live processes), gdb (gdb in batch mode, the process stopped while gdb is attached), auto (direct when it can run, else gdb)."`
	Locals   bool   `help:"Add each frame's local variables, as repr() shows them, bounded (JSON: locals, an object of name -> repr)."`
	Tasks    bool   `help:"Add the asyncio tasks (Python 3.11-3.15): each task's name, state, coroutine stack, what it awaits and which tasks await it, as a tree; cycles reported (JSON: tasks[] with id, name, state, frames, awaiting, awaited_by)."`
	MaxTasks uint   `name:"max-tasks" default:"1000" placeholder:"N" help:"With --tasks, show at most N tasks and count the rest (0: all)."`
	// The walk's bounds; the defaults are the walker's (MAX_FRAMES in
	// pyattach_walk_frames.py, MAX_READS and TIMEOUT in
	// pyattach_walk_memory.py).
	MaxFrames uint          `name:"max-frames" default:"4096" placeholder:"N" help:"Of a stack deeper than N frames, show the innermost and the outermost halves and count the frames between (0: all)."`
	MaxReads  uint          `name:"max-reads" default:"500000" placeholder:"N" help:"Stop the walk after N memory reads (0: no limit); the output is then partial and the exit code 3."`
	Timeout   time.Duration `default:"20s" help:"Stop the walk after this long (0: no limit); the output is then partial and the exit code 3."`

	// Subprocesses: dump_subproc.go.
	Subprocesses bool `help:"Also dump every Python process below the PID (a server's workers, a pool's children, a script's python), one after the other, each under its own header (JSON: an array of one object per process); the PID itself need not be Python."`
}

// exitPartial is dump's exit code when its walk stopped at its budget
// (dump.ErrPartial).
const exitPartial = exitError(3)

// Run dumps every thread's Python stack (cmd/internal/dump, wired to the
// flags, the environment and the configuration).
func (c *DumpCmd) Run(g *Globals, app *App, cfg *config.Config) error {
	if err := c.checkTree(); err != nil {
		return err
	}
	switch {
	case c.Coredump != "" && c.Target != "":
		return withHint(errors.New("dump: give a TARGET or --coredump, not both"), "pyattach dump PID, pyattach dump CORE, or pyattach dump --coredump latest")
	case c.Coredump != "":
		p, err := coredumpCore(app, c.Coredump)
		if err != nil {
			return fmt.Errorf("dump: %w", err)
		}
		c.Target = p
	case c.Target == "":
		return withHint(errors.New("dump: no target"), "pyattach dump PID, pyattach dump CORE, or pyattach dump --coredump latest")
	}
	opts := dump.Options{Target: c.Target, JSON: c.JSON, Native: c.Native, Verbose: c.Verbose, Locals: c.Locals,
		Reader: c.Reader, MaxFrames: c.MaxFrames, MaxReads: c.MaxReads, Timeout: c.Timeout, Tasks: c.Tasks, MaxTasks: c.MaxTasks, NoBlock: c.NoBlock}
	svc := dumpServices(g, app, cfg)
	if t, err := inflatedPath(app, c.Target); err != nil {
		return err
	} else if t != c.Target {
		opts.Target = t
	} else if bundle.IsBundle(c.Target) {
		o, err := openBundle(app, c.Target)
		if err != nil {
			return err
		}
		opts.Target, svc.CoreRoot, svc.Bundle = o.Core, o.Root, c.Target
		svc.NativePlan = func(ctx context.Context, pid int, core string) (plan.Plan, error) {
			return bundlePlan(ctx, dbgInferior{Core: core}, o, g, app, cfg)
		}
	}
	run := dump.Run
	if c.Subprocesses {
		run = dump.RunTree
	}
	err := run(app.Ctx, opts, svc)
	if errors.Is(err, dump.ErrPartial) {
		return exitPartial
	}
	return explainDump(err)
}

// dumpServices are dump's services for this invocation.
func dumpServices(g *Globals, app *App, cfg *config.Config) *dump.Services {
	return &dump.Services{
		ProcRoot:    g.ProcRoot,
		GOOS:        g.GOOS,
		Env:         app.Env,
		Cwd:         app.Cwd,
		Stdout:      app.Stdout,
		Stderr:      app.Stderr,
		GDB:         func() (string, error) { return findDebugger(app.Env, "gdb") },
		Python:      dump.SystemPython,
		StartReader: startReader,
		WalkerDir:   func() (string, error) { return walkerdir.Write(app.dirs().DataHome) },
		WorkDir: func() (string, error) {
			return safefs.PrivateDir(app.dirs().CacheHome, environ.Name, "dump")
		},
		NativePlan: func(ctx context.Context, pid int, core string) (plan.Plan, error) {
			p, _, err := buildPlan(ctx, dbgInferior{PID: pid, Core: core}, g, app, cfg)
			return p, err
		},
		WriteJSON: writeJSON,
		Run:       runGDB,
	}
}

// explainDump adds to dump's errors the hint the user can act on.
func explainDump(err error) error {
	if err == nil {
		return nil
	}
	var np *target.NotPythonError
	if errors.As(err, &np) && len(np.Children) > 0 {
		h := strings.Replace(hintFor(err), "resolve one of those instead: pyattach resolve", "dump one of those instead: pyattach dump", 1)
		return withHint(err, "%s", h)
	}
	// A directory given for the core (dump /tmp): dump takes a PID or a
	// core file, never -c.
	var nr *saferead.NotRegularError
	if errors.As(err, &nr) && nr.Mode.IsDir() {
		return withHint(err, "pyattach dump takes a PID or a core file, not a directory: pyattach dump PID, or pyattach dump %s", shquote.Quote(filepath.Join(nr.Path, "CORE")))
	}
	var e *dump.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Kind {
	case dump.KindTarget:
		return withHint(err, "give a PID or a core file: pyattach dump PID")
	case dump.KindNotCore:
		return withHint(err, "pyattach dump takes a PID or a core file; start the program and run: pyattach dump PID, or write a core with: gcore PID")
	case dump.KindNotPython:
		return withHint(err, "pyattach dump reads CPython 3.7 and later; check the PID with: ps -ef | grep -i python")
	case dump.KindNoVersion:
		return withHint(err, "%s", e.GDBCommand())
	case dump.KindCoreFile:
		return withHint(err, "the core's %s must be on this machine, at the same path", e.Path)
	case dump.KindCoreChanged:
		return withHint(err, "the file changed since the core was written; dump the core where it was written")
	case dump.KindNoRuntime:
		return withHint(err, "pyattach dump reads CPython 3.7 and later; CPython's own extension may read older ones: %s", e.GDBCommand())
	case dump.KindWorkDir:
		return scriptCacheError(e.Err)
	case dump.KindPlanPath:
		return withHint(err, "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
	case dump.KindScriptPath:
		return withHint(err, scriptPathHint)
	case dump.KindTimeout:
		return withHint(err, "see what gdb was doing with: pyattach dump --verbose %s", e.Arg())
	case dump.KindAttach:
		if e.Tracer != "" {
			return withHint(err, "the process is traced already, by %s; detach that debugger or tracer, then run: pyattach dump %d", e.Tracer, e.PID)
		}
		return withHint(err, "run as the process's user or with sudo, or allow ptrace: echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope")
	case dump.KindNoStacks:
		return withHint(err, "see gdb's own messages with: pyattach dump --verbose %s", e.Arg())
	case dump.KindReader:
		return withHint(err, "a core and --native are read with gdb: pyattach dump --reader gdb %s", e.Arg())
	case dump.KindWalker:
		return withHint(err, "CPython's own extension may still read it, with debug information: %s", e.GDBCommand())
	}
	return err
}

// runGDB is dump's Runner. Interrupted or past its deadline, gdb is sent
// SIGTERM, on which it detaches from the process and quits; it is killed
// only if it does not.
func runGDB(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	return out.String(), err
}

// readerProc is a direct reader started by startReader.
type readerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	stderr bytes.Buffer
}

func (p *readerProc) Stdin() io.WriteCloser { return p.stdin }
func (p *readerProc) Stdout() io.Reader     { return p.stdout }
func (p *readerProc) Stderr() string        { return p.stderr.String() }
func (p *readerProc) Kill()                 { p.cmd.Process.Kill() }
func (p *readerProc) Wait() error           { return p.cmd.Wait() }

// maxReaderStderr bounds what dump keeps of the direct reader's stderr.
const maxReaderStderr = 64 << 10

// startReader is dump's StartReader: name with args, no environment, in
// "/", stdin and stdout piped, stderr kept (bounded).
func startReader(name string, args ...string) (dump.Proc, error) {
	p := &readerProc{cmd: exec.Command(name, args...)}
	p.cmd.Env = []string{}
	p.cmd.Dir = "/"
	p.cmd.Stderr = &boundedWriter{w: &p.stderr, n: maxReaderStderr}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// boundedWriter writes at most n bytes to w and drops the rest.
type boundedWriter struct {
	w io.Writer
	n int
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	k := len(p)
	if len(p) > b.n {
		p = p[:b.n]
	}
	b.n -= len(p)
	if len(p) > 0 {
		b.w.Write(p)
	}
	return k, nil
}
