package target

import (
	"os"
	"time"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/venv"
)

// Kinds of target, as reported in Result.TargetKind.
const (
	KindPID        = "pid"
	KindExecutable = "executable"
	KindVenv       = "venv"
	KindScript     = "script"
	KindShim       = "pyenv-shim"
	KindCore       = "core"
)

// MatchedByContent is Result.MatchedBy for a copy without a build-id,
// matched by its size and loadable segments.
const MatchedByContent = venv.MatchedByContent

// Result is everything resolve found out about a target. It is printed
// as JSON by `pyattach resolve --json`; the field names are part of the
// command's interface and documented in cmd/pyattach/help/json.md.
type Result struct {
	Target     string `json:"target"`
	TargetKind string `json:"target_kind"`
	PID        int    `json:"pid,omitempty"`
	// Script is the script whose shebang named the interpreter, and
	// Shebang its first line, when the target was a script.
	Script  string `json:"script,omitempty"`
	Shebang string `json:"shebang,omitempty"`
	// Shim is the pyenv shim that was followed, and ShimVersion the
	// pyenv version it selected and where that choice came from.
	Shim        string `json:"shim,omitempty"`
	ShimVersion string `json:"shim_version,omitempty"`
	// ShimVersionFrom is what selected the version: the
	// .python-version or $PYENV_ROOT/version file's path, or "PYENV_VERSION
	// environment variable".
	ShimVersionFrom string `json:"shim_version_from,omitempty"`
	// Core is the process a core file was dumped from, as its notes
	// say, when the target was a core: the executable it names is what
	// is resolved (as gdb -c finds it).
	Core *Core `json:"core,omitempty"`

	// Exe is the executable as the process or the user names it: the
	// venv's bin/python, /proc/PID/exe's target (without " (deleted)").
	Exe        string `json:"exe"`
	ExeDeleted bool   `json:"exe_deleted"`
	// ExeBuildID is the build-id of Exe (equal to BuildID unless the
	// process embeds Python or the base interpreter changed).
	ExeBuildID string `json:"exe_build_id"`

	// Interpreter is the real file holding the interpreter: never a venv
	// copy. For an embedded interpreter it is the libpython in use.
	Interpreter string `json:"interpreter"`
	// Via says how Interpreter was found: "self", "symlink",
	// "pyvenv.cfg", "orig-prefix", "candidates", "pyenv", "libpython".
	Via string `json:"via"`
	// MatchedBy says what proved a copy (Via "pyvenv.cfg",
	// "orig-prefix", "candidates") to be Interpreter: "build-id", or
	// "content" when the file has no GNU build-id (python-build-standalone's
	// interpreters, which uv installs): the same size and the same
	// SHA-256 of the loadable segments. "" when nothing was compared.
	MatchedBy string `json:"matched_by,omitempty"`
	BuildID   string `json:"build_id"`
	// ReadFrom is where pyattach read the interpreter's ELF when that is
	// not Interpreter itself (/proc/PID/exe for a deleted binary,
	// /proc/PID/root/... for a process in another root).
	ReadFrom string `json:"read_from,omitempty"`

	Python Python `json:"python"`

	// Libpython is the shared libpython the interpreter uses ("" when
	// the runtime is linked into the executable: Static is then true).
	Libpython        string `json:"libpython"`
	LibpythonBuildID string `json:"libpython_build_id,omitempty"`
	Static           bool   `json:"static"`
	// Embedded is true when the executable is not a Python interpreter
	// but a program that embeds one (uwsgi, a game engine, ...).
	Embedded bool `json:"embedded"`

	Venv Venv `json:"venv"`

	// Container is true when the process runs in another mount namespace
	// or root; Root is then the host path of its root directory through
	// which its files are read, and every path above is as the process
	// sees it.
	Container bool   `json:"container"`
	Root      string `json:"root,omitempty"`
	// Bundle is the crash bundle whose unpacked files Root holds (the
	// target's files came from another machine).
	Bundle string `json:"bundle,omitempty"`
	// UID is the process's real user id (PID targets only).
	UID *int `json:"uid,omitempty"`

	// Modules lists the process's mapped ELF files (PID and core
	// targets: a core's are read from its NT_FILE note and its memory).
	Modules []Module `json:"modules,omitempty"`

	// ELF holds the ELF facts of the interpreter file and LibpythonELF
	// those of libpython, when shared.
	ELF          *elfinfo.Info `json:"elf"`
	LibpythonELF *elfinfo.Info `json:"libpython_elf,omitempty"`

	Warnings []string `json:"warnings,omitempty"`
}

// Core is what a core file's notes say of its process
// (NT_PRPSINFO, NT_FILE).
type Core struct {
	Path string `json:"path"`
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	Args string `json:"args"`
	// ExeBuildID is the build-id of the executable as the core holds
	// it: Result.ExeBuildID is the file's here, and they differ when
	// the file changed since the core was written.
	ExeBuildID string `json:"exe_build_id,omitempty"`
	// Compressed is the core file's compression ("zstd", "lz4", "xz",
	// "gzip"; "" for none), Decompressed the copy in pyattach's cache
	// the debugger reads.
	Compressed   string `json:"compressed,omitempty"`
	Decompressed string `json:"decompressed,omitempty"`
	// Coredump is what a systemd-coredump file name says.
	Coredump *CoredumpName `json:"coredump,omitempty"`
}

// CoredumpName is what systemd-coredump's name for a core
// (core.COMM.UID.BOOTID.PID.USEC[.zst|.lz4|.xz]) says of its process.
type CoredumpName struct {
	PID    int       `json:"pid"`
	Comm   string    `json:"comm"`
	UID    int       `json:"uid"`
	BootID string    `json:"boot_id"`
	Time   time.Time `json:"time"`
}

// Python holds the interpreter's version and build flavour.
type Python struct {
	Version       string `json:"version"`
	VersionSource string `json:"version_source"`
	ABIFlags      string `json:"abi_flags"`
	DebugBuild    bool   `json:"debug_build"`
	FreeThreaded  bool   `json:"free_threaded"`
}

// Venv describes the environment the executable belongs to.
type Venv struct {
	Path string `json:"path"`
	// Kind is "copies", "symlinks", "conda" or "none".
	Kind string `json:"kind"`
	Home string `json:"home"`
	// Version is pyvenv.cfg's version, when it has one.
	Version string `json:"version,omitempty"`
	// Source is "cmdline" when the venv is not the executable's own but
	// named by the command line of a program that embeds Python (uwsgi's
	// -H, --home, --virtualenv, --venv); "" otherwise.
	Source string `json:"source,omitempty"`
}

// Module is one ELF file mapped into a process.
type Module struct {
	Path    string `json:"path"`
	BuildID string `json:"build_id"`
	Deleted bool   `json:"deleted,omitempty"`
	// Error says why the build-id could not be read, if so.
	Error string `json:"error,omitempty"`
}

// HiddenRoot reports a process in another mount namespace whose root
// link reads as "/" (pivot_root), so that no host path names its files.
func (res *Result) HiddenRoot() bool {
	if !res.Container || res.Root == "" {
		return false
	}
	l, err := os.Readlink(res.Root)
	return err == nil && l == "/"
}
