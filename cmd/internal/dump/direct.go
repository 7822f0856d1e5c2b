package dump

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/ptrace"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/detect/unwind"
)

// Readers of a process's memory (Options.Reader).
const (
	// ReaderAuto is the direct reader for a live process, gdb for a core,
	// for --native, or when the direct reader cannot run (no trusted
	// python3, ptrace refused).
	ReaderAuto = "auto"
	// ReaderGDB is gdb in batch mode with the walker.
	ReaderGDB = "gdb"
	// ReaderDirect stops the process with ptrace and has a system python3
	// run the walker over /proc/PID/mem (ProcModule).
	ReaderDirect = "direct"
)

// ProcModule is the direct reader's script in the walker's directory
// (pyattach_proc_main.py, which imports pyattach_proc.py).
const ProcModule = "pyattach_proc_main.py"

// SystemPythons are where the direct reader's interpreter is looked for,
// in order: the system's own, never the target's.
var SystemPythons = []string{"/usr/bin/python3", "/bin/python3"}

// ErrNoSystemPython: no interpreter among SystemPythons is root's alone.
var ErrNoSystemPython = errors.New("no trusted system python3")

// SystemPython returns the first of SystemPythons that only root can
// change (every directory, link and the file itself: saferead.CheckTrusted).
func SystemPython() (string, error) {
	var why []string
	for _, p := range SystemPythons {
		err := saferead.CheckTrusted(p, 0)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			why = append(why, err.Error())
		}
	}
	if len(why) > 0 {
		return "", fmt.Errorf("%w (%s)", ErrNoSystemPython, strings.Join(why, "; "))
	}
	return "", fmt.Errorf("%w (none of %s)", ErrNoSystemPython, strings.Join(SystemPythons, ", "))
}

// Reader chooses the reader for t: ReaderGDB or ReaderDirect (auto is
// direct for a live process without --native).
func (t *Target) Reader(opts Options) (string, error) {
	if opts.NoBlock && (t.PID == 0 || opts.Native || opts.Reader == ReaderGDB) {
		return "", t.fail(KindReader, fmt.Errorf("%s: --no-block reads a live process's Python stacks with the direct reader only (not a core, not --native: C stacks are read from stopped threads; not --reader gdb)", t.name()))
	}
	unwinds := unwind.HostArch() != 0
	switch opts.Reader {
	case "", ReaderAuto:
		if t.PID != 0 && (!opts.Native || unwinds) {
			return ReaderDirect, nil
		}
		return ReaderGDB, nil
	case ReaderGDB:
		return ReaderGDB, nil
	case ReaderDirect:
		if t.PID == 0 {
			return "", t.fail(KindReader, fmt.Errorf("%s: --reader direct reads a live process only (not a core)", t.name()))
		}
		if opts.Native && !unwinds {
			return "", t.fail(KindReader, fmt.Errorf("%s: --reader direct cannot unwind C stacks on this machine's architecture (--native: use --reader gdb)", t.name()))
		}
		return ReaderDirect, nil
	}
	return "", &Error{Kind: KindReader, Err: fmt.Errorf("dump: unknown reader %q (auto, gdb or direct)", opts.Reader)}
}

// fallback reports whether the direct reader's err lets auto use gdb
// instead: it could not start (no trusted python3, ptrace refused).
func fallback(err error) bool {
	var pe *ptrace.Error
	return errors.Is(err, ErrNoSystemPython) || errors.As(err, &pe)
}

// directProc is a started direct reader: python3 running ProcModule,
// and the lines it says.
type directProc struct {
	cmd    Proc
	python string
	lines  chan string
	done   chan struct{}
	t1     time.Time
	closed bool
	// wdir is the walker's directory it was started from.
	wdir string
}

// startError is a direct reader that could not be started.
type startError struct {
	python string
	err    error
}

func (e *startError) Error() string { return "cannot run " + e.python + ": " + e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// startDirect starts the direct reader: it loads the walker, says
// "ready" and waits for its configuration ("go" and a JSON object).
func startDirect(svc *Services, wdir string) (*directProc, error) {
	python, err := svc.Python()
	if err != nil {
		return nil, err
	}
	p := &directProc{python: python, lines: make(chan string), done: make(chan struct{}), t1: time.Now()}
	if p.cmd, err = svc.StartReader(python, "-I", "-S", filepath.Join(wdir, ProcModule)); err != nil {
		return nil, &startError{python: python, err: err}
	}
	stdout := p.cmd.Stdout()
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			case <-p.done:
				return
			}
		}
	}()
	return p, nil
}

// close ends the reader's line pump (the reader itself ends on its
// stdin's end); discard also ends a reader that was never used.
func (p *directProc) close() {
	if !p.closed {
		p.closed = true
		p.cmd.Stdin().Close()
		close(p.done)
	}
}

func (p *directProc) discard() {
	if !p.closed {
		p.cmd.Kill()
		p.close()
		p.cmd.Wait()
	}
}

// Proc is a running direct reader (Services.StartReader).
type Proc interface {
	// Stdin and Stdout are pipes to and from the reader.
	Stdin() io.WriteCloser
	Stdout() io.Reader
	// Stderr is what it wrote there (bounded), once Wait returned.
	Stderr() string
	Kill()
	Wait() error
}

// Timings is how long each step of a dump took, for -v.
type Timings struct {
	Resolve  time.Duration // the interpreter, _PyRuntime's address
	Start    time.Duration // python3 started and the walker loaded (direct)
	Prewalk  time.Duration // the running process walked, for its pages (direct)
	Stops    int           // times the process was stopped (direct)
	Threads  int           // threads stopped, the last time (direct)
	Stop     time.Duration // every thread stopped, in all stops (direct)
	Held     time.Duration // the process stopped, in all (direct)
	Longest  time.Duration // the longest of those stops (direct)
	Walk     time.Duration // from the first resume to the walker's end (direct)
	Rest     time.Duration // after the walker ended: its output read
	Debugger time.Duration // gdb, from start to end (gdb)
}

// maxStops bounds the stops one direct reader may ask for: the walker's
// own bound (pyattach_proc.STOPS) and its last, whole-walk stop.
const maxStops = 4

// readDirect runs the walker in a system python3 over /proc/PID/mem
// and returns the JSON it wrote to output. The walker asks for the
// process to be stopped ("stop") while it copies the pages its stacks
// live in, and resumed ("detach"), at most maxStops times; with
// opts.NoBlock it is never stopped, whatever the walker asks. The
// process is resumed whatever happens (an error, a timeout, ctx
// cancelled by SIGINT or SIGTERM).
//
// With nat (--native), each thread's registers and stack are copied at
// every stop, beside the walker's copy; the C stacks unwound from the
// last copy are sent to the walker when it asks ("native": "native"
// and a JSON object on one line).
//
// early is the reader Run started beforehand, or nil.
func (t *Target) readDirect(ctx context.Context, opts Options, svc *Services, runtime, asyncio uint64, wdir, output string, early *directProc, nat *directNative, tm *Timings) ([]byte, error) {
	cfg, err := json.Marshal(map[string]any{
		"pid": t.PID, "runtime": runtime, "version": t.Res.Python.Version, "flags": t.Res.Python.ABIFlags,
		"output": output, "source": !opts.JSON, "locals": opts.Locals, "max_frames": opts.MaxFrames,
		"max_reads": opts.MaxReads, "timeout": opts.Timeout.Seconds(), "block": !opts.NoBlock, "native": nat != nil,
		"tasks": opts.Tasks, "asyncio_debug": asyncio, "max_tasks": opts.MaxTasks,
	})
	if err != nil {
		return nil, err
	}
	gctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.Timeout > 0 {
		gctx, cancel = context.WithTimeout(ctx, GDBGrace(opts.Timeout))
	}
	defer cancel()

	// The process's memory, for the code at each thread's pc.
	mem, err := os.Open(filepath.Join(t.procRoot, strconv.Itoa(t.PID), "mem"))
	if err != nil {
		if early != nil {
			early.discard()
		}
		return nil, t.fail(KindNoStacks, fmt.Errorf("%s: %w", t.name(), err))
	}
	defer mem.Close()

	// python3 starts and loads the walker before anything is stopped
	// (Run starts it before the target is resolved, when it can).
	dp := early
	if dp == nil {
		if dp, err = startDirect(svc, wdir); err != nil {
			var se *startError
			if errors.As(err, &se) {
				return nil, t.fail(KindNoStacks, fmt.Errorf("%s: %w", t.name(), err))
			}
			return nil, err
		}
	}
	defer dp.close()
	cmd, python, lines, t1 := dp.cmd, dp.python, dp.lines, dp.t1
	stdin := cmd.Stdin()
	var (
		s                  *ptrace.Stopped
		tGo, tStop, tFirst time.Time
		// The registers of every thread at the stop (without nat: with
		// it, its capture has them), read beside the walker's copy.
		regs     []ptrace.ThreadRegs
		regsDone chan struct{}
	)
	let := func() {
		if s != nil {
			if nat != nil {
				nat.wait()
			}
			if regsDone != nil {
				<-regsDone
			}
			s.Resume()
			s = nil
			held := time.Since(tStop)
			tm.Held += held
			tm.Longest = max(tm.Longest, held)
			if tFirst.IsZero() {
				tFirst = time.Now()
			}
		}
	}
	defer let()
	quit := func() {
		cmd.Kill()
		let()
		cmd.Wait()
	}
	protocol := func(l string) ([]byte, error) {
		quit()
		return nil, t.fail(KindNoStacks, fmt.Errorf("%s: the direct reader (%s) said %q out of turn", t.name(), python, l))
	}
loop:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break loop
			}
			switch {
			case l == "ready" && tGo.IsZero():
				tm.Start = time.Since(t1)
				tGo = time.Now()
				io.WriteString(stdin, "go "+string(cfg)+"\n")
			case l == "stop" && s == nil && !tGo.IsZero() && !opts.NoBlock && tm.Stops < maxStops:
				if tm.Stops == 0 {
					tm.Prewalk = time.Since(tGo)
				}
				tStop = time.Now()
				s, err = ptrace.Stop(gctx, t.procRoot, t.PID)
				if err != nil {
					s = nil
					quit()
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					if gctx.Err() != nil {
						return nil, t.fail(KindTimeout, fmt.Errorf("%s: its threads did not stop within %v (the process is not left stopped)", t.name(), GDBGrace(opts.Timeout)))
					}
					return nil, err
				}
				tm.Stops++
				tm.Stop += time.Since(tStop)
				tm.Threads = s.Threads()
				if nat != nil {
					nat.start(s)
				} else {
					regsDone = make(chan struct{})
					go func(s *ptrace.Stopped) {
						defer close(regsDone)
						regs, _ = s.Registers()
					}(s)
				}
				io.WriteString(stdin, "stopped\n")
			case l == "detach" && s != nil:
				let()
				// Each thread's system call at the stop, from its registers.
				if nat != nil {
					regs = nat.registers()
				}
				io.WriteString(stdin, "resumed "+string(threadViews(regs, mem))+"\n")
				regs = nil
			case l == "native" && nat != nil && nat.done != nil:
				// The C stacks of the last stop's copy: asked for once the
				// process runs again, or (the walker's last resort, a walk
				// while it is stopped) before.
				nat.wait()
				data, err := nat.frames()
				if err != nil {
					quit()
					return nil, err
				}
				io.WriteString(stdin, "native "+string(data)+"\n")
			default:
				return protocol(l)
			}
		case <-gctx.Done():
			quit()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, t.fail(KindTimeout, fmt.Errorf("%s: the reader did not finish within %v; it was stopped (the process is not left stopped)", t.name(), GDBGrace(opts.Timeout)))
		}
	}
	let()
	switch {
	case !tFirst.IsZero():
		tm.Walk = time.Since(tFirst)
	case !tGo.IsZero():
		tm.Walk = time.Since(tGo)
	}
	t2 := time.Now()
	runErr := cmd.Wait()
	stdin.Close()
	data, err := os.ReadFile(output)
	tm.Rest = time.Since(t2)
	if err != nil || len(data) == 0 {
		msg := strings.TrimSpace(cmd.Stderr())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" && runErr != nil {
			msg = runErr.Error()
		}
		if opts.Verbose {
			io.WriteString(svc.Stderr, cmd.Stderr())
		}
		return nil, t.fail(KindNoStacks, fmt.Errorf("%s: the direct reader (%s) wrote no stacks: %s", t.name(), python, msg))
	}
	if opts.Verbose {
		io.WriteString(svc.Stderr, cmd.Stderr())
	}
	return data, nil
}

// ms is d in milliseconds for -v.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
