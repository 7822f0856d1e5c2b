package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/pyattach/pyattach/cmd/internal/config"
	"github.com/pyattach/pyattach/cmd/internal/idcache"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/venv/environ"
)

// Globals are the flags every command takes. They go before the command.
type Globals struct {
	ProcRoot string   `hidden:"" default:"/proc" env:"PYATTACH_PROC_ROOT" help:"Root of the proc file system (for tests)."`
	GOOS     string   `hidden:"" env:"PYATTACH_GOOS" help:"The system whose rules apply, linux or darwin (for tests; default: this one)."`
	Config   string   `help:"Configuration file to read instead of $XDG_CONFIG_HOME/pyattach/config.toml." placeholder:"FILE" type:"path"`
	DebugDir []string `sep:"none" help:"Also search DIR for separate debug files (repeatable)." placeholder:"DIR" type:"path"`
	Offline  bool     `help:"Never ask debuginfod servers; use local files and the debuginfod cache only."`
	Source   []string `sep:"none" help:"A local source tree, DIR or NAME=DIR (repeatable): source paths recorded at build time are mapped onto it." placeholder:"[NAME=]DIR"`
	Print    bool     `help:"gdb, lldb: print the script and the debugger's command line instead of running it."`
	Script   string   `help:"gdb, lldb: write the script to FILE (and FILE.late / FILE.after) instead of the cache." placeholder:"FILE" type:"path"`
	Fast     bool     `help:"gdb, lldb: load only what Python frames need (the interpreter, libpython, libc), not every shared library."`
	// TrustBundle lets gdb run the CPython extension packed in a bundle.
	TrustBundle bool `name:"trust-bundle" help:"gdb: run the CPython gdb extension packed in a bundle (code from the machine that packed it) instead of pyattach's walker alone."`
	// MaxCoreSize caps a compressed core's decompressed size.
	MaxCoreSize string `name:"max-core-size" placeholder:"SIZE" help:"Decompress a compressed core (zstd, lz4, xz, gzip) only up to SIZE bytes (K, M, G, T; default 32G, or max_core_size in the configuration)."`
}

// App carries what commands need from the outside world; tests replace
// every part of it.
type App struct {
	// Ctx is cancelled when pyattach receives SIGINT or SIGTERM; every
	// command runs under it.
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Env    environ.Env
	Cwd    string
	// MaxCoreSize caps a compressed core's decompressed size
	// (--max-core-size, max_core_size; 0: zcore.DefaultMaxSize).
	MaxCoreSize int64

	// ids is the build-id cache, shared by the copies of the App
	// (quietApp); nil: none.
	ids *buildIDCache

	// started is when Main was called, startCPU the processor time
	// spent before it (the runtime's and the packages' initialisation),
	// for resolve -v.
	started  time.Time
	startCPU time.Duration
}

// buildIDCache is the build-id cache, read on first use.
type buildIDCache struct {
	once  sync.Once
	cache *idcache.Cache
}

// buildIDs is the build-id cache ($XDG_CACHE_HOME/pyattach/buildids),
// read on first use from
// pyattach's private cache directory; one that lives only as long as
// the process when that directory cannot be had; nil for an App made
// without one.
func (a *App) buildIDs() *idcache.Cache {
	if a.ids == nil {
		return nil
	}
	a.ids.once.Do(func() {
		dir, err := safefs.PrivateDir(a.dirs().CacheHome, environ.Name)
		if err != nil {
			dir = ""
		}
		a.ids.cache = idcache.Open(dir)
	})
	return a.ids.cache
}

// saveBuildIDs writes what this run added to the build-id cache. A cache
// that cannot be written costs the next run time, nothing else: the
// error is not the command's.
func (a *App) saveBuildIDs() {
	if a.ids != nil && a.ids.cache != nil {
		_ = a.ids.cache.Save()
	}
}

// targetOptions are target resolution's roots for this invocation.
func (g *Globals) targetOptions(app *App) target.Options {
	return target.Options{ProcRoot: g.ProcRoot, Env: app.Env, Cwd: app.Cwd, GOOS: g.GOOS, IDCache: app.buildIDs()}
}

// dirs are the XDG base directories of the App's environment, under
// which pyattach keeps its own files.
func (a *App) dirs() environ.Dirs { return a.Env.Dirs() }

// CLI is the command line.
type CLI struct {
	Globals

	Version kong.VersionFlag `help:"Print pyattach's version and exit."`

	Resolve        ResolveCmd        `cmd:"" help:"Tell which real interpreter, build-id, Python version and libpython a process, binary, venv or script runs."`
	Debuginfo      DebuginfoCmd      `cmd:"" help:"Find every module's debug file, as gdb would and beyond, and the matching CPython gdb extension."`
	Symbols        SymbolsCmd        `cmd:"" help:"Install, list and remove split debug-symbol packages (<wheel>-debug-symbols.zip)."`
	GDB            GDBCmd            `cmd:"" name:"gdb" passthrough:"" help:"Start gdb with everything py-bt needs: pyattach [FLAGS] gdb GDB_ARGS..."`
	LLDB           LLDBCmd           `cmd:"" name:"lldb" passthrough:"" help:"Start lldb with the debug files and source maps found: pyattach [FLAGS] lldb LLDB_ARGS..."`
	LLDBDAP        LLDBDAPCmd        `cmd:"" name:"lldb-dap" passthrough:"" help:"Run lldb's DAP adapter for an editor, with Python frames, sources and locals among the C frames: pyattach [FLAGS] lldb-dap [--lldb-dap PATH] [ARGS...]"`
	Srcmap         SrcmapCmd         `cmd:"" help:"Map source paths recorded at build time onto local source trees (gdb substitute-path, lldb target.source-map)."`
	Dump           DumpCmd           `cmd:"" help:"Print every thread's Python stack of a process or core, from memory alone (no debug information needed)."`
	Bundle         BundleCmd         `cmd:"" help:"Pack a core (or a live process's) with everything needed to debug it on another machine into one file."`
	Doctor         DoctorCmd         `cmd:"" help:"Say exactly why py-bt, symbols or sources are missing, and how to fix each."`
	Init           InitCmd           `cmd:"" help:"Write a project's .gdbinit, .lldbinit and VS Code attach configurations."`
	FetchExtension FetchExtensionCmd `cmd:"" name:"fetch-extension" help:"Download CPython's gdb extension (libpython.py) for an interpreter's exact version."`
	Trust          TrustCmd          `cmd:"" help:"Let a project's .pyattach.toml name extensions and debug directories (code gdb runs), as it is now."`
	Completion     CompletionCmd     `cmd:"" help:"Print the shell completion script for bash, zsh or fish."`
	Man            ManCmd            `cmd:"" help:"Print pyattach's man page (roff)."`
	Help           HelpCmd           `cmd:"" help:"Print a reference page (configuration, security, JSON fields...); without a topic, the list."`
	Complete       CompleteCmd       `cmd:"" name:"__complete" hidden:"" help:"Complete a command line (used by the completion scripts)."`
	Hook           HookCmd           `cmd:"" name:"__hook" hidden:"" help:"Write the script that sets gdb up for the target it loaded (run by a project .gdbinit)."`
}

const description = `Make native debugging of Python processes with gdb and lldb work the first time.

pyattach resolves a PID, an executable, a virtualenv, a script or a core to
the real Python interpreter (proved by equal ELF build-id), finds the debug
files and the CPython extension that match it, and starts gdb or lldb with
all of it. Put it in front of a debugger command line; pyattach's own flags
go before "gdb" or "lldb", everything after is the debugger's.

Examples:
  pyattach gdb -p 12345 -batch -ex py-bt
  pyattach --source echion=~/src/echion lldb -p 12345
  pyattach init --gdb --trust         # a project .gdbinit for plain gdb -p
  pyattach dump 12345                 # every thread's Python stack, fast
  pyattach resolve 12345              # a running process
  pyattach resolve .venv              # a virtualenv (copies or symlinks)
  pyattach resolve --json ./app.py    # a script, through its #! line
  pyattach debuginfo 12345            # where every module's debug info is
  pyattach symbols install --venv .venv pkg-1.0-cp311-cp311-linux_x86_64-debug-symbols.zip
  pyattach fetch-extension .venv      # libpython.py for a Python that lacks it
  pyattach trust ~/src/app            # use the extensions its .pyattach.toml names
  source <(pyattach completion bash)  # complete commands, flags and Python PIDs
`

// exitError carries an exit code through kong's Exit hook.
type exitError int

// Main runs pyattach with args and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) (code int) {
	started, startCPU := time.Now(), cpuTime()
	// A lone --version is answered before the command model is built:
	// kong.New reflects over every command and flag (about 4 ms here,
	// most of pyattach's start-up; parseArgs builds the model of one
	// command alone for the frequent ones), and kong's own --version
	// would print the same line (TestVersionFastPath).
	if len(args) == 1 && args[0] == "--version" {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	// Bare pyattach is a request for help, not an error.
	if len(args) == 0 {
		args = []string{"--help"}
	}
	cwd, _ := os.Getwd()
	// Two contexts, so that the exit code can tell which signal came.
	intCtx, stopInt := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stopInt()
	ctx, stopTerm := signal.NotifyContext(intCtx, syscall.SIGTERM)
	defer stopTerm()
	app := &App{Ctx: ctx, Stdin: stdin, Stdout: stdout, Stderr: stderr, Env: env, Cwd: cwd, ids: &buildIDCache{}, started: started, startCPU: startCPU}
	var cli CLI
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(exitError); ok {
				code = int(e)
				return
			}
			fmt.Fprintf(stderr, "pyattach: internal error: %v\n  hint: please report this with the command you ran\n", r)
			code = 70
		}
	}()
	opts := append(rawArgOptions(),
		kong.Name("pyattach"),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitError(c)) }),
		kong.Vars{"version": versionLine()},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(printHelp),
		kong.UsageOnError(),
		kong.Bind(app),
	)
	kctx, err := parseArgs(&cli, args, opts)
	if me := (modelError{}); errors.As(err, &me) {
		fmt.Fprintf(stderr, "pyattach: internal error: %v\n", err)
		return 70
	}
	if err != nil {
		var pe *kong.ParseError
		if errors.As(err, &pe) {
			fmt.Fprintf(stderr, "pyattach: error: %s\n  hint: run 'pyattach --help' for the commands and their flags\n", safetext.Fold(err.Error()))
			return 2
		}
		fmt.Fprintf(stderr, "pyattach: error: %s\n", safetext.Fold(err.Error()))
		return 2
	}
	// "pyattach gdb --help": pyattach's help for the command (gdb's own
	// is "gdb --help"); everything else after gdb or lldb is theirs.
	if helpOnly(kctx.Command(), cli.GDB.Args, cli.LLDB.Args, cli.LLDBDAP.Args) {
		if err := kctx.PrintUsage(false); err != nil {
			fmt.Fprintf(stderr, "pyattach: error: %s\n", safetext.Fold(err.Error()))
			return 2
		}
		return 0
	}
	cfg, err := config.Load(cli.Globals.Config, cwd, app.Env)
	if err != nil {
		report(stderr, err)
		return 2
	}
	if err := setMaxCoreSize(app, cli.Globals.MaxCoreSize, cfg.MaxCoreSize); err != nil {
		report(stderr, err)
		return 2
	}
	if !strings.HasPrefix(kctx.Command(), "trust") && !strings.HasPrefix(kctx.Command(), "__complete") {
		for _, n := range cfg.Notices {
			fmt.Fprintln(stderr, n)
		}
	}
	err = kctx.Run(&cli.Globals, cfg)
	app.saveBuildIDs()
	if ctx.Err() != nil {
		// Interrupted: the command's own error is only the cancellation.
		sig, code := syscall.SIGTERM, 143
		if intCtx.Err() != nil {
			sig, code = syscall.SIGINT, 130
		}
		fmt.Fprintf(stderr, "pyattach: interrupted by %s\n", signalName(sig))
		return code
	}
	if err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			return int(ee)
		}
		report(stderr, err)
		return 1
	}
	return 0
}

// helpOnly reports "pyattach gdb --help" or "pyattach lldb -h": the
// debugger's command line is exactly a help flag.
func helpOnly(cmd string, gdbArgs, lldbArgs, lldbDAPArgs []string) bool {
	args := gdbArgs
	if strings.HasPrefix(cmd, "lldb-dap") {
		args = lldbDAPArgs
	} else if strings.HasPrefix(cmd, "lldb") {
		args = lldbArgs
	} else if !strings.HasPrefix(cmd, "gdb") {
		return false
	}
	return len(args) == 1 && (args[0] == "--help" || args[0] == "-h")
}

// signalName is "SIGINT" or "SIGTERM".
func signalName(s syscall.Signal) string {
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

func (e exitError) Error() string { return fmt.Sprintf("exit %d", int(e)) }
