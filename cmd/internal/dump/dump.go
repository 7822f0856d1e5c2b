package dump

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/ptrace"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/nativesym"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/unwind"
	"github.com/pyattach/pyattach/gdbgen"
)

// Options are the command's flags.
type Options struct {
	// Target is a PID or a core file.
	Target string
	// JSON prints Output as JSON instead of text.
	JSON bool
	// Native adds each thread's C frames, merged with its Python frames:
	// gdb unwinds them without debug information; their names come from
	// the symbol tables, file and line from the DWARF line table of the
	// one unit holding each pc (nativesym).
	Native bool
	// Verbose copies gdb's own messages, the reader that ran, the time of
	// each step and the walk's cost to Stderr.
	Verbose bool
	// Reader is ReaderAuto (""), ReaderGDB or ReaderDirect.
	Reader string
	// Locals adds each frame's local variables (name and repr).
	Locals bool
	// MaxFrames, MaxReads and Timeout bound the walk (0: no bound).
	MaxFrames, MaxReads uint
	Timeout             time.Duration
	// Tasks adds the asyncio tasks (pyattach_walk_tasks), at most
	// MaxTasks of them (0: all), each counted.
	Tasks    bool
	MaxTasks uint
	// NoBlock reads a live process without stopping it: a thread whose
	// stack changed while it was read, every time it was read, is
	// marked unsettled and its frames are not given (direct reader).
	NoBlock bool
}

// Runner runs an external command with env as its whole environment and
// returns its combined output. When ctx is done the command is asked to
// stop (gdb detaches from the process when it quits on SIGTERM).
type Runner func(ctx context.Context, env []string, name string, args ...string) (string, error)

// Services are what dump reads and runs from outside.
type Services struct {
	// ProcRoot is the proc file system ("/proc").
	ProcRoot string
	// GOOS is the system whose rules apply ("" for the running one; a
	// PID needs Linux).
	GOOS string
	// CoreRoot, for a core, is the host directory standing for its
	// process's "/", under which its files are read (an unpacked
	// bundle's root/, a container's root); "": this machine's own.
	CoreRoot string
	// Bundle is the bundle the core was unpacked from, if any.
	Bundle string
	// Env is the environment gdb runs with; Cwd resolves relative paths.
	Env []string
	Cwd string
	// Stdout gets the stacks; Stderr warnings and, with Verbose, gdb's
	// own messages.
	Stdout, Stderr io.Writer
	// GDB returns gdb's path.
	GDB func() (string, error)
	// Python returns the direct reader's interpreter (SystemPython).
	Python func() (string, error)
	// StartReader starts the direct reader, name with args, with no
	// environment, in "/", its stdin and stdout piped.
	StartReader func(name string, args ...string) (Proc, error)
	// WalkerDir writes the walker and returns its directory.
	WalkerDir func() (string, error)
	// WorkDir returns a private directory (safefs.PrivateDir) for gdb's
	// scripts and the walker's output, which are removed afterwards.
	WorkDir func() (string, error)
	// NativePlan is the plan of `pyattach gdb` for the target (--native).
	NativePlan func(ctx context.Context, pid int, core string) (plan.Plan, error)
	// WriteJSON prints v for --json.
	WriteJSON func(w io.Writer, v any) error
	// Run runs gdb.
	Run Runner
	// Process is set by RunTree for each process of dump
	// --subprocesses: the text's first line names it (Header.Cmdline),
	// and a process that is not Python is not followed by a look for
	// its Python children (RunTree lists them itself).
	Process *TreeProcess
}

// GDBGrace is how long dump lets gdb run when the walk's own time
// budget is timeout: attaching, and with --native reading debug
// information, come on top of the walk.
func GDBGrace(timeout time.Duration) time.Duration {
	return 2*timeout + time.Minute
}

// Run dumps every thread's Python stack of opts.Target. It returns
// ErrPartial, after printing, when the walk stopped at its budget.
func Run(ctx context.Context, opts Options, svc *Services) error {
	var tm Timings
	t0 := time.Now()
	// The direct reader's python3 starts while the target is resolved.
	var early *directProc
	if target.IsPID(opts.Target) && (opts.Reader == "" || opts.Reader == ReaderAuto || opts.Reader == ReaderDirect) &&
		(!opts.Native || unwind.HostArch() != 0) && (svc.GOOS == "" || svc.GOOS == "linux") && runtimeGOOS == "linux" {
		if wdir, err := svc.WalkerDir(); err == nil {
			if early, _ = startDirect(svc, wdir); early != nil {
				early.wdir = wdir
			}
		}
	}
	defer func() {
		if early != nil {
			early.discard()
		}
	}()
	t, err := Resolve(ctx, opts.Target, svc)
	if err != nil {
		return err
	}
	runtime, err := t.RuntimeAddress()
	if err != nil {
		return err
	}
	reader, err := t.Reader(opts)
	if err != nil {
		return err
	}
	var asyncio uint64
	if opts.Tasks {
		asyncio = t.AsyncioAddress()
	}
	tm.Resolve = time.Since(t0)
	var wdir string
	if early != nil {
		wdir = early.wdir
	} else if wdir, err = svc.WalkerDir(); err != nil {
		return err
	}
	// The reader writes the stacks to a file in a private directory, not
	// to its stdout, so that none of gdb's own messages can corrupt them.
	dir, err := svc.WorkDir()
	if err != nil {
		return &Error{Kind: KindWorkDir, Err: err}
	}
	out, err := tempFile(dir, "")
	if err != nil {
		return err
	}
	defer out.Cleanup()
	if reader == ReaderDirect {
		var nat *directNative
		if opts.Native {
			// The debug directories `pyattach gdb` would give gdb: the
			// functions' names come from the debug files found there.
			p, err := svc.NativePlan(ctx, t.PID, t.Core)
			if err != nil {
				return fmt.Errorf("dump: %w", err)
			}
			if nat, err = t.openDirectNative(p.DebugDirs); err != nil {
				return err
			}
			defer nat.Close()
		}
		data, err := t.readDirect(ctx, opts, svc, runtime, asyncio, wdir, out.Name(), early, nat, &tm)
		early = nil
		if err == nil {
			if opts.Verbose {
				fmt.Fprintf(svc.Stderr, "pyattach: reader: direct (a system python3 reading /proc/%d/mem)\n", t.PID)
				if nat != nil {
					fmt.Fprintf(svc.Stderr, "pyattach: C stacks: registers and stacks copied in %s (beside the pages), unwound and named in %s after resume\n", ms(nat.capture), ms(nat.unwind))
				}
				if opts.NoBlock {
					fmt.Fprintf(svc.Stderr, "pyattach: resolve %s; python start %s; walk %s (the process was not stopped); after %s\n",
						ms(tm.Resolve), ms(tm.Start), ms(tm.Walk), ms(tm.Rest))
				} else {
					fmt.Fprintf(svc.Stderr, "pyattach: resolve %s; python start %s; pre-walk %s; stopped %d times (%d threads), %s in all, the longest %s (stopping the threads: %s); walk after resume %s; after %s\n",
						ms(tm.Resolve), ms(tm.Start), ms(tm.Prewalk), tm.Stops, tm.Threads, ms(tm.Held), ms(tm.Longest), ms(tm.Stop), ms(tm.Walk), ms(tm.Rest))
				}
			}
			return t.report(data, "", nil, nil, opts, svc)
		}
		var pe *ptrace.Error
		if opts.Reader == ReaderDirect || !fallback(err) {
			if errors.As(err, &pe) {
				e := t.fail(KindAttach, fmt.Errorf("%s: %w", t.name(), err))
				e.Tracer = TracerOf(t.procRoot, t.PID)
				return e
			}
			return err
		}
		if opts.Verbose {
			fmt.Fprintf(svc.Stderr, "pyattach: the direct reader cannot run (%v); reading with gdb\n", err)
		}
	}
	gdb, err := svc.GDB()
	if err != nil {
		return err
	}

	d := plan.Dump{
		Target:    opts.Target,
		Walker:    plan.Walker{Dir: wdir, Version: t.Res.Python.Version, ABIFlags: t.Res.Python.ABIFlags},
		Runtime:   runtime,
		Output:    out.Name(),
		Source:    !opts.JSON,
		Locals:    opts.Locals,
		MaxFrames: opts.MaxFrames,
		MaxReads:  opts.MaxReads,
		Timeout:   opts.Timeout,
		Tasks:     opts.Tasks,
		Asyncio:   asyncio,
		MaxTasks:  opts.MaxTasks,
		Syscalls:  t.syscalls(),
	}
	if t.Res.Container {
		d.Walker.Root = t.Res.Root
	}
	// A core's source files are read as its user (core.OpenIn says when
	// that is believed); a live process's as /proc says.
	if t.Info != nil {
		d.Walker.Creds = (*plan.Creds)(t.Info.Owner)
	}
	if opts.Native {
		p, err := svc.NativePlan(ctx, t.PID, t.Core)
		if err != nil {
			return fmt.Errorf("dump: %w", err)
		}
		// The program gdb unwinds through is the process's own (gdb reads
		// it from /proc; a chroot's through its root) or the core's executable: no auto-load or
		// debuglink search needs another path of it, and gdb 13 unwinds
		// nothing past a core's executable given as --exec.
		p.Program = ""
		if t.PID != 0 && t.Res.Container && !t.Res.HiddenRoot() && t.Res.ReadFrom != "" {
			// A chroot: gdb would look for /proc/PID/exe's target (a
			// path of this machine) under the sysroot, and find no
			// program, no libraries and no unwind tables.
			p.Program = t.Res.ReadFrom
		}
		if t.Core != "" {
			p.Program = t.Info.Exe
			if t.Res.Container && t.Res.ReadFrom != "" {
				p.Program = t.Res.ReadFrom // under the core's root
			}
		}
		d.Native = &p
	}
	var tab *nativesym.Table
	if d.Native != nil {
		// The mappings as gdb will find them, read before it stops the
		// process.
		if tab = t.nativeTable(d.Native.DebugDirs); tab != nil {
			defer tab.Close()
			d.EvalLoop = tab.Ranges(interpreterFile, evalLoop)
		}
	}
	sc, err := gdbgen.Dump(d)
	if err != nil {
		return t.fail(KindPlanPath, fmt.Errorf("dump: %w", err))
	}
	argv := []string{"-nx", "-batch"}
	if !opts.Native {
		// No DWARF: a command-line option only (the script says the rest).
		// --native unwinds through .eh_frame, which -readnever drops.
		argv = append(argv, "-readnever")
	}
	for _, s := range []struct{ flag, text string }{{"-ix", sc.Early}, {"-x", sc.Late}} {
		f, err := tempFile(dir, s.text)
		if err != nil {
			return err
		}
		defer f.Cleanup()
		// gdb opens -ix and -x files by name after tilde expansion: refuse
		// a name it would read as another.
		if _, err := gdbgen.SourceLine(f.Name()); err != nil {
			return t.fail(KindScriptPath, fmt.Errorf("dump: %w", err))
		}
		argv = append(argv, s.flag, f.Name())
	}
	if t.PID != 0 {
		argv = append(argv, "--pid="+strconv.Itoa(t.PID))
	} else {
		exe := t.Info.Exe
		if t.Res.Container && t.Res.ReadFrom != "" {
			exe = t.Res.ReadFrom
		}
		argv = append(argv, "--exec="+exe, "--core="+t.Core)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The walker keeps to its own time budget; should gdb itself hang
	// (a read that never returns), it is stopped, and so detaches from
	// the process, well after that.
	gctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.Timeout > 0 {
		gctx, cancel = context.WithTimeout(ctx, GDBGrace(opts.Timeout))
	}
	defer cancel()
	tg := time.Now()
	log, runErr := svc.Run(gctx, svc.Env, gdb, argv...)
	tm.Debugger = time.Since(tg)
	if opts.Verbose {
		io.WriteString(svc.Stderr, log)
		fmt.Fprintf(svc.Stderr, "pyattach: reader: gdb\npyattach: resolve %s; gdb %s\n", ms(tm.Resolve), ms(tm.Debugger))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if gctx.Err() != nil {
		return t.fail(KindTimeout, fmt.Errorf("%s: gdb did not finish within %v; it was stopped (the process is not left stopped)", t.name(), GDBGrace(opts.Timeout)))
	}
	data, err := os.ReadFile(out.Name())
	if err != nil || len(data) == 0 {
		return t.gdbFailure(log, runErr)
	}
	return t.report(data, log, runErr, tab, opts, svc)
}

// report prints the stacks the reader wrote as JSON (data); log and
// runErr are gdb's, when it ran; tab names the C frames gdb unwound
// without debug information (--native).
func (t *Target) report(data []byte, log string, runErr error, tab *nativesym.Table, opts Options, svc *Services) error {
	wd, err := ParseWalker(data)
	if err != nil {
		return err
	}
	if opts.Verbose {
		fmt.Fprintf(svc.Stderr, "pyattach: the walk made %s memory reads (%s bytes) in %.2fs", Thousands(wd.Cost.Reads), Thousands(wd.Cost.Bytes), wd.Cost.Seconds)
		if wd.Cost.Stops > 0 {
			fmt.Fprintf(svc.Stderr, "; %s pages (%s KiB) copied while stopped in %.1f ms; %d walks",
				Thousands(wd.Cost.Pages), Thousands(wd.Cost.Pages*4), wd.Cost.CopySeconds*1000, wd.Cost.Walks)
			if wd.Cost.Reused > 0 {
				fmt.Fprintf(svc.Stderr, " (%s stacks unchanged since the first, not walked again)", Thousands(wd.Cost.Reused))
			}
		}
		fmt.Fprintln(svc.Stderr)
	}
	if wd.Error != "" {
		if msg := gdbAttachError(log); msg != "" {
			return t.gdbFailure(log, runErr)
		}
		return t.fail(KindWalker, fmt.Errorf("%s: %s", t.name(), safetext.Escape(wd.Error)))
	}
	if tab != nil {
		// gdb read no debug information: the symbol tables and line
		// tables name its frames.
		nameNative(wd, tab)
	}
	h := Header{PID: t.PID, Core: t.shown(), Version: t.Res.Python.Version}
	if p := svc.Process; p != nil {
		h.Cmdline, h.Parent = p.Shown(), p.Parent
	}
	if t.Info != nil {
		h.CorePID = t.Info.PID
	}
	res, text, warnings := Render(h, wd, opts.Native)
	if opts.Tasks {
		text = renderTasks(&res, wd, text)
	}
	for _, w := range warnings {
		fmt.Fprintf(svc.Stderr, "pyattach: warning: %s\n", w)
	}
	if opts.JSON {
		err = svc.WriteJSON(svc.Stdout, res)
	} else {
		_, err = io.WriteString(svc.Stdout, text)
	}
	if err != nil {
		return err
	}
	if wd.Truncated != "" {
		fmt.Fprintf(svc.Stderr, "pyattach: walk stopped: %s; output is partial\n", wd.Truncated)
		return ErrPartial
	}
	return nil
}

// tempFile writes text to a new temporary file in dir.
func tempFile(dir, text string) (*safefs.TempFile, error) {
	f, err := safefs.CreateTemp(dir)
	if err != nil {
		return nil, &Error{Kind: KindWorkDir, Err: err}
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Cleanup()
		return nil, &Error{Kind: KindWorkDir, Err: err}
	}
	if err := f.Close(); err != nil {
		f.Cleanup()
		return nil, &Error{Kind: KindWorkDir, Err: err}
	}
	return f, nil
}

// gdbAttachError returns gdb's line saying why it could not attach or
// open the core, or "".
func gdbAttachError(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "ptrace: ") || strings.Contains(l, "Could not attach") ||
			strings.Contains(l, "No such process") || strings.HasPrefix(l, "Couldn't get registers") ||
			strings.Contains(l, "is not a core dump") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// gdbFailure is the error when gdb wrote no stacks.
func (t *Target) gdbFailure(out string, runErr error) error {
	msg := gdbAttachError(out)
	if strings.Contains(msg, "ptrace") || strings.Contains(msg, "attach") {
		e := t.fail(KindAttach, fmt.Errorf("%s: gdb cannot attach: %s", t.name(), msg))
		e.Tracer = TracerOf(t.procRoot, t.PID)
		return e
	}
	if msg == "" {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		msg = lines[len(lines)-1]
	}
	if runErr != nil && msg == "" {
		msg = runErr.Error()
	}
	return t.fail(KindNoStacks, fmt.Errorf("%s: gdb wrote no stacks: %s", t.name(), msg))
}
