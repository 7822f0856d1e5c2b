// Package plan holds Plan: everything pyattach found about a target that
// a debugger needs, as one plain value. The command line builds it from
// detect's findings; gdbgen and lldbgen turn it into debugger scripts
// without touching the file system; cmd/internal/dump hands it to gdb
// too.
//
// It sits under detect/ because it is the last of the facts about a
// target: the ones a debugger is handed. gdb's, lldb's and dump's
// generators all read it, so it belongs to none of them, and detect/ is
// the one room every layer may import (cmd -> gdbgen, lldbgen -> detect).
// Its subpackage pyquote spells the plan's strings as Python literals
// for both debuggers.
package plan

import (
	"strconv"
	"time"
)

// Plan is what a debugger needs to show Python stacks for one target.
// Every path is as the debugger will open it (on this machine; for a
// process in a container, the host path of files read under its root,
// unless Sysroot makes the debugger add the root itself).
type Plan struct {
	// Target is what the user named, for the header comment.
	Target string
	// PID is the process to attach to (0 when none).
	PID int
	// Core is the core file to open ("" when none).
	Core string
	// Program is the executable the debugger should load as its program
	// file. For an attached venv copy this is the real interpreter (same
	// build-id), so that gdb's auto-load and debuglink search work from
	// its path. "" leaves the choice to the debugger.
	Program string
	// Args are the program's arguments for a launched program.
	Args []string

	// Sysroot is set for a process in another root (a container):
	// the debugger reads its libraries under it ("/proc/PID/root").
	Sysroot string
	// SolibSearchPath are directories searched for shared libraries by
	// file name when Sysroot does not hold the path the dynamic loader
	// recorded (an unpacked bundle holds /usr/lib/x/libc.so.6, the
	// loader named /lib/x/libc.so.6): gdb's solib-search-path, lldb's
	// target.exec-search-paths.
	SolibSearchPath []string
	// LLDBRoot is set for an attached process in another root (a
	// chroot, or a mount namespace whose root reads as "/" from here:
	// pivot_root, podman, docker): the
	// directory this machine opens its files under ("/proc/PID/root",
	// which the kernel resolves in the process's namespace). lldb creates
	// its target from LLDBRoot+LLDBExe and maps "/" to LLDBRoot, so that
	// it loads the process's own program and libraries, not this
	// machine's files of the same names; gdb reads them through its
	// sysroot ("target:" under pivot_root) and ignores these fields.
	LLDBRoot string
	// LLDBExe is the process's executable as the process sees it.
	LLDBExe string
	// LLDBDebugDirs are debug directories under LLDBRoot (its own
	// /usr/lib/debug), which gdb finds through "target:" by itself.
	LLDBDebugDirs []string
	// LLDBCoreSysroot is set for a core whose files are not this
	// machine's (an unpacked bundle): the directory holding them at the
	// paths the dynamic loader recorded. lldb reads a core's libraries
	// by those paths, as they are (a file of the same name here wins
	// over target.exec-search-paths, whatever its build-id), unless its
	// platform has a sysroot: lldb is told `platform select --sysroot
	// DIR remote-linux`. gdb ignores it (its solib-search-path suffices).
	LLDBCoreSysroot string
	// Foreign says why the target's files are not the user's (a process
	// in a container, another user's process), one reason each; nil when
	// they are. Nothing the target controls may become debugger code
	// then: gdb auto-loads no script (-gdb.py files, .debug_gdb_scripts
	// sections, libthread_db beside the process's libc), lldb loads none
	// from symbol files, and the extensions named here are the host's.
	// Debug files and sources under the target's root are still read, as
	// data.
	Foreign []string
	// DebugDirs are added to the debugger's debug-file directories
	// (after its defaults, which are kept).
	DebugDirs []string
	// SymbolFiles are separate debug files the debugger would not find
	// alone, for the module at Module.
	SymbolFiles []SymbolFile

	// GDBExtension is CPython's gdb extension (libpython.py) to source;
	// "" when none was found.
	GDBExtension string
	// GDBAutoLoad lists extension files gdb will auto-load by itself for
	// Program once they are on its safe path; each is added to the safe
	// path as an exact file, never a directory, never "/". An extension
	// listed here is not also sourced.
	GDBAutoLoad []string
	// LLDBExtension is a Python module file for `command script import`;
	// "" when none.
	LLDBExtension string
	// LLDBPythonPath is the directory holding lldb's own Python package
	// ("lldb"), for distributions whose `lldb -P` is wrong (Debian's lldb
	// 14); "" when lldb's own answer is right.
	LLDBPythonPath string

	// Walker is pyattach's memory-only Python stack walker
	// (detect/pywalk), loaded into both debuggers; nil when not wanted.
	Walker *Walker

	// SourceMap rewrites source paths recorded at build time to local
	// ones (gdb substitute-path, lldb target.source-map).
	SourceMap []SourceRule

	// Debuginfod says whether the debugger should ask debuginfod servers
	// itself, and which.
	Debuginfod Debuginfod

	// Fast loads only what Python frames need: the interpreter, libpython
	// and libc; other shared libraries are not read (gdb: auto-solib-add
	// off, then sharedlibrary for those).
	Fast bool
	// FastLibs are the shared-library regexps to load when Fast is set.
	FastLibs []string
	// NoDWARF: the debugger reads no debug information at all (gdb
	// -readnever) and CPython's extension, which needs it, is not loaded:
	// the Walker answers py-bt from memory. Set with Fast and a Walker.
	NoDWARF bool

	// Findings are one-line facts for the script's header comment, such
	// as "interpreter: /usr/bin/python3.11 (build-id c561f3...), via
	// pyvenv.cfg".
	Findings []string
}

// SymbolFile is a debug file to load for a module.
type SymbolFile struct {
	// Module is the module's path as the debugger sees it.
	Module string
	// File is the debug file.
	File string
	// UUID is set for a Mach-O module's .dSYM DWARF file: the LC_UUID
	// it was matched by ("" for an ELF file, matched by build-id).
	UUID string
	// ByContent is set for the debug twin of an ELF module without a
	// build-id, matched by its loadable segments: lldb is told which
	// module it is for (target symbols add --shlib), as it has no
	// build-id to match it by.
	ByContent bool
}

// SourceRule maps a build-time path prefix to a local directory.
type SourceRule struct {
	From string
	To   string
}

// Debuginfod is the debugger's own debuginfod setting.
type Debuginfod struct {
	// Enabled turns the debugger's debuginfod support on; when false it
	// is turned off (pyattach already fetched what it could).
	Enabled bool
	// URLs are the servers, when Enabled.
	URLs []string
}

// Walker says where pyattach wrote its stack walker and what to tell it.
type Walker struct {
	// Dir holds the walker's files (pywalk.Files): a private directory
	// of pyattach's, so that nobody else can change them.
	Dir string
	// Version and ABIFlags are the interpreter's ("3.11.2", "d"): they
	// pick the offset table.
	Version  string
	ABIFlags string
	// Root is where a core's files are read for source lines (a
	// container's root); live processes are read through /proc.
	Root string
	// Creds, for a core, are the user and group its source files are
	// read as (what that user may read); nil: only what anyone may
	// read. A live process's are read from /proc.
	Creds *Creds
}

// Creds are a user and group id.
type Creds struct {
	UID, GID uint32
}

// PyArg is the walker setup's keyword argument for c, ", creds=(UID,
// GID, ())" (no supplementary groups: a core does not record them); ""
// for nil.
func (c *Creds) PyArg() string {
	if c == nil {
		return ""
	}
	return ", creds=(" + strconv.FormatUint(uint64(c.UID), 10) + ", " + strconv.FormatUint(uint64(c.GID), 10) + ", ())"
}

// Dump is what `pyattach dump` has gdb run: the walker set up with
// _PyRuntime's address, then one walk of every thread written as JSON
// to a file.
type Dump struct {
	// Target is what the user named, for the header comment.
	Target string
	// Walker is where the walker is and what to tell it. Its Dir, Root
	// and the Output file reach gdb as Python string literals.
	Walker Walker
	// Runtime is _PyRuntime's address in the process or core.
	Runtime uint64
	// Output is the file the walker writes its JSON to.
	Output string
	// Native, when not nil, is the plan of `pyattach gdb` for the same
	// target (debug files, sysroot, extension): its scripts come first
	// and each thread's C frames are added. Its Walker is not used.
	// nil: gdb reads no debug information (run it with -readnever).
	Native *Plan
	// EvalLoop are the address ranges [lo, hi) of the eval loop's
	// functions (_PyEval_EvalFrameDefault and its ".cold" part) that
	// pyattach read from symbol tables gdb does not read (with Native,
	// gdb reads no separate debug file): the walker names a C frame gdb
	// has no name for in one of them, so that it is merged with its
	// Python frames.
	EvalLoop [][2]uint64
	// Source asks for each frame's source line.
	Source bool
	// Locals asks for each frame's local variables (name and repr).
	Locals bool
	// MaxFrames, MaxReads and Timeout bound the walk (0: no bound).
	MaxFrames, MaxReads uint
	Timeout             time.Duration
	// Tasks adds the asyncio tasks, at most MaxTasks (0: all); Asyncio
	// is the .AsyncioDebug section's address (0: gdb looks for it).
	Tasks    bool
	Asyncio  uint64
	MaxTasks uint
	// Syscalls is, for a core, what each thread's registers say of the
	// system call it was in (by thread id): the walker derives the
	// thread's state from it as from /proc for a live process. A thread
	// it lacks has no known state; nil for a live process.
	Syscalls map[int]Syscall
}

// Syscall is one thread's system call in a core (core.ThreadSyscall):
// In, the call's number Nr and, when ArgKnown, its first argument Arg.
type Syscall struct {
	In       bool
	Nr       int64
	Arg      uint64
	ArgKnown bool
}
