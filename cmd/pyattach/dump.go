package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/planner"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/cmd/internal/textline"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/environ"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/pyinfo"
	"github.com/pyattach/pyattach/detect/safefs"
	"github.com/pyattach/pyattach/gdbgen"
)

// DumpCmd is `pyattach dump TARGET`.
type DumpCmd struct {
	Target  string `arg:"" help:"The PID of a Python process (a venv's python too) or a core file."`
	JSON    bool   `help:"Print one JSON object: pid or core, python.version, threads[] with tid, name, frames[] (function, file, line), innermost first."`
	Native  bool   `help:"Load debug information as 'pyattach gdb' does and add each thread's C frames (JSON: native[] with function, file, line, pc)."`
	Verbose bool   `short:"v" help:"Also print gdb's own messages and what the walk cost (memory reads, seconds), on stderr."`
	// The walk's bounds; the defaults are the walker's (MAX_FRAMES in
	// pyattach_walk_frames.py, MAX_READS and TIMEOUT in
	// pyattach_walk_memory.py).
	MaxFrames uint          `name:"max-frames" default:"4096" placeholder:"N" help:"Of a stack deeper than N frames, show the innermost and the outermost halves and count the frames between (0: all)."`
	MaxReads  uint          `name:"max-reads" default:"500000" placeholder:"N" help:"Stop the walk after N memory reads (0: no limit); the output is then partial and the exit code 3."`
	Timeout   time.Duration `default:"20s" help:"Stop the walk after this long (0: no limit); the output is then partial and the exit code 3."`
}

// exitPartial is dump's exit code when its walk stopped at its budget.
const exitPartial = exitError(3)

// Help is shown by `pyattach dump --help`.
func (c *DumpCmd) Help() string {
	return `What every thread of a process or core is doing in Python, in one
command. pyattach starts gdb in batch mode with its own stack walker, which
reads the interpreter's memory alone: no debug information is read (none
is needed, so stripped interpreters work too) and gdb loads no shared
library's symbols, which makes it several times faster than py-bt.
_PyRuntime's address is computed from the ELF symbol table and the
process's mappings (or the core's) before gdb starts.

Output: per OS thread, its kernel thread id and name, then its Python
frames as py-bt prints them, innermost first, with the source lines as
the process sees them; threads that run no Python show "Unable to locate
python frame". --json prints
  {"pid": PID | "core": CORE, "python": {"version"},
   "threads": [{"tid", "name", "frames": [{"function", "file", "line"}]}]}
with line null when unknown and name null when gdb does not know it (cores).
--native adds "native": [{"function", "file", "line", "pc"}] per thread:
gdb's own frames, innermost first, with function, file and line null when
gdb does not know them.

Bounds: of a stack deeper than --max-frames (4096) the innermost and the
outermost halves are printed, with "  ... 5,906 frames not shown ..."
between them (JSON: "frames_omitted": 5906 and "frames_omitted_at", the
index in frames where they were). The whole walk (every interpreter,
thread, frame, code object and string) has one budget, --max-reads
(500,000) memory reads and --timeout (20s); a walk that runs out of it
stops, prints what it read, says so on stderr ("pyattach: walk stopped:
...; output is partial"; JSON: "truncated": "why", and "partial": true on
a thread whose stack was not read to its end) and exits with code 3.

Examples:
  pyattach dump 12345
  pyattach dump --json 12345 | jq '.threads[] | {tid, top: .frames[0]}'
  pyattach dump core.12345
  pyattach dump --native 12345          # C frames too (reads debug info)`
}

// dumpOutput is what --json prints; its fields are documented in the
// command's help and in README.md.
type dumpOutput struct {
	PID       int          `json:"pid,omitempty"`
	Core      string       `json:"core,omitempty"`
	Python    dumpPython   `json:"python"`
	Threads   []dumpThread `json:"threads"`
	Truncated string       `json:"truncated,omitempty"`
}

type dumpPython struct {
	Version string `json:"version"`
}

type dumpThread struct {
	TID             int            `json:"tid"`
	Name            *string        `json:"name"`
	Frames          []dumpFrame    `json:"frames"`
	FramesOmitted   int            `json:"frames_omitted,omitempty"`
	FramesOmittedAt int            `json:"frames_omitted_at,omitempty"`
	Partial         bool           `json:"partial,omitempty"`
	Native          *[]nativeFrame `json:"native,omitempty"`
}

type dumpFrame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     *int   `json:"line"`
}

type nativeFrame struct {
	Function *string `json:"function"`
	File     *string `json:"file"`
	Line     *int    `json:"line"`
	PC       uint64  `json:"pc"`
}

// walkerDump is what pyattach_gdb.dump writes.
type walkerDump struct {
	Error     string `json:"error"`
	Truncated string `json:"truncated"`
	// Cost is what the walk spent of its budget.
	Cost struct {
		Reads   int     `json:"reads"`
		Bytes   int     `json:"bytes"`
		Seconds float64 `json:"seconds"`
	} `json:"cost"`
	Threads []struct {
		TID             int     `json:"tid"`
		Name            *string `json:"name"`
		Error           string  `json:"error"`
		FramesOmitted   int     `json:"frames_omitted"`
		FramesOmittedAt int     `json:"frames_omitted_at"`
		Partial         bool    `json:"partial"`
		Frames          []struct {
			dumpFrame
			Source *string `json:"source"`
		} `json:"frames"`
		Native *[]nativeFrame `json:"native"`
	} `json:"threads"`
}

// dumpTarget is what dump works on: a live process or a core.
type dumpTarget struct {
	pid  int
	core string
	info *core.Info // the core's notes
	res  *target.Result
	// procRoot is the proc file system (Globals.ProcRoot).
	procRoot string
}

// Run dumps every thread's Python stack.
func (c *DumpCmd) Run(g *Globals, app *App, cfg *Config) error {
	t, err := c.resolve(g, app)
	if err != nil {
		return err
	}
	runtime, err := t.runtimeAddress(g)
	if err != nil {
		return err
	}
	gdb, err := findDebugger(app.Env, "gdb")
	if err != nil {
		return err
	}
	wdir, err := writeWalker(app.dirs())
	if err != nil {
		return err
	}
	// gdb writes the stacks to a file in a private directory, not to its
	// stdout, so that none of its own messages can corrupt them.
	dir, err := safefs.PrivateDir(app.dirs().CacheHome, environ.Name, "dump")
	if err != nil {
		return scriptCacheError(err)
	}
	tmp, err := safefs.CreateTemp(dir)
	if err != nil {
		return scriptCacheError(err)
	}
	defer tmp.Cleanup()
	tmp.Close()

	root := ""
	if t.res.Container {
		root = t.res.Root
	}
	// A core's source files are read as its user (planner.ReadCore says
	// when that is believed); a live process's as /proc says.
	setup := fmt.Sprintf("python import pyattach_gdb; pyattach_gdb.setup(version=%s, flags=%s, root=%s, runtime=%#x%s)",
		pyFS(t.res.Python.Version), pyFS(t.res.Python.ABIFlags), pyFS(root), runtime, planner.CoreCreds(t.info).PyArg())
	run := fmt.Sprintf("python pyattach_gdb.dump(%s, native=%s, source=%s, max_frames=%d, max_reads=%d, timeout=%g)",
		pyFS(tmp.Name()), pyBool(c.Native), pyBool(!c.JSON), c.MaxFrames, c.MaxReads, c.Timeout.Seconds())
	argv := []string{gdb, "-nx", "-batch"}
	if c.Native {
		early, late, err := c.nativeScripts(t, g, app, cfg)
		if err != nil {
			return err
		}
		argv = append(argv, "-ix", early)
		if late != "" {
			argv = append(argv, "-x", late)
		}
	} else {
		// No DWARF (-readnever), no separate debug files, no debuginfod,
		// no shared library's symbols (libc's minimal symbols only, for
		// thread debugging), no auto-loaded scripts.
		argv = append(argv, "-readnever",
			"-iex", "set auto-load off",
			"-iex", "set debug-file-directory",
			"-iex", "set debuginfod enabled off",
			"-iex", "set auto-solib-add off")
	}
	argv = append(argv,
		"-iex", "set pagination off",
		"-ex", "python import sys, os; sys.path.insert(0, "+pyFS(wdir)+")",
		"-ex", setup,
		"-ex", run)
	if t.pid != 0 {
		argv = append(argv, "--pid="+strconv.Itoa(t.pid))
	} else {
		argv = append(argv, "--exec="+t.info.Exe, "--core="+t.core)
	}
	if err := app.Ctx.Err(); err != nil {
		return err
	}
	// The walker keeps to its own time budget; should gdb itself hang
	// (a read that never returns), it is stopped, and so detaches from
	// the process, well after that.
	ctx, cancel := app.Ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		ctx, cancel = context.WithTimeout(app.Ctx, gdbGrace(c.Timeout))
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, gdb, argv[1:]...)
	cmd.Env = app.Env
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Interrupted: gdb detaches from the process when it quits on
	// SIGTERM; it is killed only if it does not.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	runErr := cmd.Run()
	if c.Verbose {
		app.Stderr.Write(out.Bytes())
	}
	if err := app.Ctx.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return withHint(fmt.Errorf("%s: gdb did not finish within %v; it was stopped (the process is not left stopped)", t.name(), gdbGrace(c.Timeout)),
			"see what gdb was doing with: pyattach dump --verbose %s", shquote.Quote(strings.TrimPrefix(t.name(), "dump ")))
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil || len(data) == 0 {
		return gdbFailure(t, out.String(), runErr)
	}
	var wd walkerDump
	if err := json.Unmarshal(data, &wd); err != nil {
		return fmt.Errorf("dump: pyattach's walker wrote bad JSON: %w", err)
	}
	if c.Verbose {
		fmt.Fprintf(app.Stderr, "pyattach: the walk made %s memory reads (%s bytes) in %.2fs\n", thousands(wd.Cost.Reads), thousands(wd.Cost.Bytes), wd.Cost.Seconds)
	}
	if wd.Error != "" {
		if msg := gdbAttachError(out.String()); msg != "" {
			return gdbFailure(t, out.String(), runErr)
		}
		return withHint(fmt.Errorf("%s: %s", t.name(), textline.Escape(wd.Error)),
			"CPython's own extension may still read it, with debug information: %s", t.gdbHint())
	}

	res := dumpOutput{Python: dumpPython{Version: t.res.Python.Version}, Threads: []dumpThread{}, Truncated: wd.Truncated}
	if t.pid != 0 {
		res.PID = t.pid
	} else {
		res.Core = t.core
	}
	var text strings.Builder
	if t.pid != 0 {
		fmt.Fprintf(&text, "Process %d: Python %s, %d threads\n", t.pid, t.res.Python.Version, len(wd.Threads))
	} else {
		fmt.Fprintf(&text, "Core %s (process %d): Python %s, %d threads\n", t.core, t.info.PID, t.res.Python.Version, len(wd.Threads))
	}
	for _, th := range wd.Threads {
		dt := dumpThread{TID: th.TID, Name: th.Name, Frames: []dumpFrame{}, Native: th.Native,
			FramesOmitted: th.FramesOmitted, FramesOmittedAt: th.FramesOmittedAt, Partial: th.Partial}
		if c.Native && dt.Native == nil {
			dt.Native = &[]nativeFrame{}
		}
		if th.Error != "" {
			fmt.Fprintf(app.Stderr, "pyattach: warning: thread %d: %s\n", th.TID, textline.Escape(th.Error))
		}
		text.WriteString("\nThread " + strconv.Itoa(th.TID))
		if th.Name != nil {
			text.WriteString(` "` + textline.Escape(*th.Name) + `"`)
		}
		text.WriteString(":\n")
		if len(th.Frames) == 0 && !th.Partial {
			text.WriteString("Unable to locate python frame\n")
		} else {
			text.WriteString("Traceback (most recent call first):\n")
		}
		for i, f := range th.Frames {
			if th.FramesOmitted > 0 && i == th.FramesOmittedAt {
				text.WriteString(omittedLine(th.FramesOmitted))
			}
			dt.Frames = append(dt.Frames, f.dumpFrame)
			line := "?"
			if f.Line != nil {
				line = strconv.Itoa(*f.Line)
			}
			fmt.Fprintf(&text, "  File \"%s\", line %s, in %s\n", textline.Escape(f.File), line, textline.Escape(f.Function))
			if f.Source != nil && *f.Source != "" {
				text.WriteString("    " + textline.Escape(*f.Source) + "\n")
			}
		}
		if th.FramesOmitted > 0 && th.FramesOmittedAt >= len(th.Frames) {
			text.WriteString(omittedLine(th.FramesOmitted))
		}
		if th.Partial {
			text.WriteString("  ... stack not read further: the walk stopped ...\n")
		}
		if th.Native != nil {
			text.WriteString("Native stack (most recent call first):\n")
			for i, n := range *th.Native {
				fn := "??"
				if n.Function != nil {
					fn = textline.Escape(*n.Function)
				}
				fmt.Fprintf(&text, "  #%-2d 0x%016x in %s ()", i, n.PC, fn)
				if n.File != nil {
					fmt.Fprintf(&text, " at %s", textline.Escape(*n.File))
					if n.Line != nil {
						fmt.Fprintf(&text, ":%d", *n.Line)
					}
				}
				text.WriteString("\n")
			}
		}
		res.Threads = append(res.Threads, dt)
	}
	if c.JSON {
		err = writeJSON(app.Stdout, res)
	} else {
		_, err = io.WriteString(app.Stdout, text.String())
	}
	if err != nil {
		return err
	}
	if wd.Truncated != "" {
		fmt.Fprintf(app.Stderr, "pyattach: walk stopped: %s; output is partial\n", wd.Truncated)
		return exitPartial
	}
	return nil
}

// gdbGrace is how long dump lets gdb run when the walk's own time
// budget is timeout: attaching, and with --native reading debug
// information, come on top of the walk.
func gdbGrace(timeout time.Duration) time.Duration {
	return 2*timeout + time.Minute
}

// omittedLine is the line that stands for n frames not shown, as the
// walker's omitted_line writes it in py-bt.
func omittedLine(n int) string {
	word := "frames"
	if n == 1 {
		word = "frame"
	}
	return fmt.Sprintf("  ... %s %s not shown ...\n", thousands(n), word)
}

// thousands is n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// resolve finds the interpreter of a PID or of a core's executable.
func (c *DumpCmd) resolve(g *Globals, app *App) (*dumpTarget, error) {
	t := &dumpTarget{procRoot: g.ProcRoot}
	opts := target.Options{ProcRoot: g.ProcRoot, Env: app.Env, Cwd: app.Cwd, NoModules: true}
	tgt := c.Target
	if isPIDArg(c.Target) {
		pid, err := strconv.Atoi(c.Target)
		if err != nil || pid <= 0 {
			return nil, withHint(fmt.Errorf("dump: %q is not a valid process id", c.Target), "give a PID or a core file: pyattach dump PID")
		}
		t.pid = pid
	} else {
		if _, err := os.Stat(c.Target); err != nil {
			return nil, withHint(fmt.Errorf("dump: %w", err), "give a PID or a core file: pyattach dump PID")
		}
		info, err := readCoreInfo(c.Target)
		if err != nil {
			if errors.Is(err, core.ErrNotCore) || errors.Is(err, elfinfo.ErrNotELF) || errors.Is(err, elfinfo.ErrCorrupt) {
				return nil, withHint(fmt.Errorf("dump %s: %w", c.Target, err),
					"pyattach dump takes a PID or a core file; start the program and run: pyattach dump PID, or write a core with: gcore PID")
			}
			return nil, fmt.Errorf("dump: %w", err)
		}
		t.core, t.info, tgt = c.Target, info, info.Exe
	}
	res, err := target.Resolve(app.Ctx, tgt, opts)
	if err != nil {
		var np *target.NotPythonError
		if errors.As(err, &np) && len(np.Children) > 0 {
			h := strings.Replace(hintFor(err), "resolve one of those instead: pyattach resolve", "dump one of those instead: pyattach dump", 1)
			return nil, withHint(fmt.Errorf("dump: %w", err), "%s", h)
		}
		if errors.Is(err, target.ErrNotPython) {
			return nil, withHint(fmt.Errorf("dump %s: %w", c.Target, err),
				"pyattach dump reads CPython 3.7 and later; check the PID with: ps -ef | grep -i python")
		}
		return nil, fmt.Errorf("dump %s: %w", c.Target, err)
	}
	if res.Python.Version == "" {
		return nil, withHint(fmt.Errorf("dump %s: the Python version of %s is not known", c.Target, res.Interpreter), "%s", t.gdbHint())
	}
	t.res = res
	return t, nil
}

// runtimeAddress is _PyRuntime's address in the process or core: the
// symbol's value in the module that defines it (libpython, else the
// executable) plus that module's load bias, from /proc/PID/maps or the
// core's NT_FILE mappings. No debug information is read.
func (t *dumpTarget) runtimeAddress(g *Globals) (uint64, error) {
	var (
		elfFile   io.ReaderAt
		closer    io.Closer
		start     uint64
		offset    uint64
		module    string
		wantBuild string
	)
	if t.pid != 0 {
		pr := proc.New(g.ProcRoot)
		maps, err := pr.Maps(t.pid)
		if err != nil {
			return 0, fmt.Errorf("dump %d: %w", t.pid, err)
		}
		var m *proc.Mapping
		for i := range maps {
			p := maps[i].Path
			if t.res.Libpython != "" && pyinfo.IsLibpython(path.Base(p)) ||
				t.res.Libpython == "" && (p == t.res.Exe || strings.HasSuffix(p, t.res.Exe) && t.res.Container) {
				m = &maps[i]
				break
			}
		}
		if m == nil {
			return 0, fmt.Errorf("dump %d: the module defining _PyRuntime is not mapped", t.pid)
		}
		start, offset, module = m.Start, m.Offset, m.Path
		var f fs.File
		switch {
		case t.res.Libpython == "":
			f, err = pr.OpenExe(t.pid)
		case m.Deleted:
			f, err = pr.OpenMapFile(t.pid, *m)
		default:
			f, err = pr.OpenInRoot(t.pid, t.res.Libpython)
		}
		if err != nil {
			return 0, fmt.Errorf("dump %d: %w", t.pid, err)
		}
		ra, ok := f.(io.ReaderAt)
		if !ok {
			f.Close()
			return 0, fmt.Errorf("dump %d: %s cannot be read at offsets", t.pid, module)
		}
		elfFile, closer = ra, f
	} else {
		var file *core.File
		for i := range t.info.Files {
			p := t.info.Files[i].Path
			if t.res.Libpython != "" && pyinfo.IsLibpython(path.Base(p)) || t.res.Libpython == "" && p == t.info.Exe {
				file = &t.info.Files[i]
				break
			}
		}
		if file == nil {
			return 0, fmt.Errorf("dump %s: the module defining _PyRuntime is not among the core's mappings", t.core)
		}
		start, offset, module, wantBuild = file.Start, file.Offset, file.Path, file.BuildID
		f, err := safefs.Open(file.Path)
		if err != nil {
			return 0, withHint(fmt.Errorf("dump %s: %w", t.core, err), "the core's %s must be on this machine, at the same path", file.Path)
		}
		elfFile, closer = f, f
	}
	defer closer.Close()
	if wantBuild != "" {
		if id, err := elfinfo.ReadBuildID(elfFile); err == nil && id != wantBuild {
			return 0, withHint(fmt.Errorf("dump %s: %s has build-id %s, the core's has %s", t.core, module, id, wantBuild),
				"the file changed since the core was written; dump the core where it was written")
		}
	}
	rt, err := pyinfo.ReadRuntime(elfFile)
	if err != nil {
		if errors.Is(err, pyinfo.ErrNoRuntime) {
			return 0, withHint(fmt.Errorf("%s: %s has no _PyRuntime symbol (Python %s)", t.name(), module, t.res.Python.Version),
				"pyattach dump reads CPython 3.7 and later; CPython's own extension may read older ones: %s", t.gdbHint())
		}
		return 0, fmt.Errorf("%s: %s: %w", t.name(), module, err)
	}
	addr, ok := rt.Address(start, offset)
	if !ok {
		return 0, fmt.Errorf("%s: the mapping of %s at %#x (offset %#x) is not one of its segments", t.name(), module, start, offset)
	}
	return addr, nil
}

// nativeScripts writes the scripts `pyattach gdb` would use for the
// target (debug files, sysroot, extension) and returns their paths.
func (c *DumpCmd) nativeScripts(t *dumpTarget, g *Globals, app *App, cfg *Config) (string, string, error) {
	dt := dbgTarget{PID: t.pid, Core: t.core}
	p, _, err := buildPlan(app.Ctx, dt, g, app, cfg)
	if err != nil {
		return "", "", fmt.Errorf("dump: %w", err)
	}
	p.Walker = nil // dump sets the walker up itself, with _PyRuntime's address
	sc, err := gdbgen.Generate(p)
	if err != nil {
		return "", "", withHint(fmt.Errorf("dump: %w", err), "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
	}
	early, late, err := scriptPaths(app.dirs(), g.Script, "gdb", sc.Early, sc.Late)
	if err != nil {
		return "", "", err
	}
	for _, f := range []string{early, late} {
		if f == "" {
			continue
		}
		if _, err := gdbgen.SourceLine(f); err != nil {
			return "", "", withHint(fmt.Errorf("dump: %w", err), scriptPathHint)
		}
	}
	return early, late, nil
}

func (t *dumpTarget) name() string {
	if t.pid != 0 {
		return "dump " + strconv.Itoa(t.pid)
	}
	return "dump " + t.core
}

// gdbHint is the pyattach gdb command line for the same target.
func (t *dumpTarget) gdbHint() string {
	if t.pid != 0 {
		return fmt.Sprintf("pyattach gdb -p %d -batch -ex 'thread apply all py-bt'", t.pid)
	}
	return fmt.Sprintf("pyattach gdb -c %s -batch -ex 'thread apply all py-bt'", shquote.Quote(t.core))
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
func gdbFailure(t *dumpTarget, out string, runErr error) error {
	msg := gdbAttachError(out)
	if strings.Contains(msg, "ptrace") || strings.Contains(msg, "attach") {
		if tracer := tracerOf(t.procRoot, t.pid); tracer != "" {
			return withHint(fmt.Errorf("%s: gdb cannot attach: %s", t.name(), msg),
				"the process is traced already, by %s; detach that debugger or tracer, then run: pyattach dump %d", tracer, t.pid)
		}
		return withHint(fmt.Errorf("%s: gdb cannot attach: %s", t.name(), msg),
			"run as the process's user or with sudo, or allow ptrace: echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope")
	}
	if msg == "" {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		msg = lines[len(lines)-1]
	}
	if runErr != nil && msg == "" {
		msg = runErr.Error()
	}
	return withHint(fmt.Errorf("%s: gdb wrote no stacks: %s", t.name(), msg),
		"see gdb's own messages with: pyattach dump --verbose %s", shquote.Quote(strings.TrimPrefix(t.name(), "dump ")))
}

// pyFS is s as a Python expression for the same file-system string,
// byte for byte (os.fsdecode of its bytes), whatever bytes it holds.
func pyFS(s string) string {
	return "os.fsdecode(bytes.fromhex('" + hex.EncodeToString([]byte(s)) + "'))"
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// tracerOf names the process tracing pid ("1234 (strace)"), or "".
func tracerOf(procRoot string, pid int) string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "TracerPid:"); ok {
			v = strings.TrimSpace(v)
			if v == "" || v == "0" {
				return ""
			}
			comm, _ := os.ReadFile(filepath.Join(procRoot, v, "comm"))
			if c := strings.TrimSpace(string(comm)); c != "" {
				return v + " (" + c + ")"
			}
			return v
		}
	}
	return ""
}
