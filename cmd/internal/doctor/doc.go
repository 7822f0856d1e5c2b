// Package doctor knows every diagnosis `pyattach doctor` makes and the fix
// it names for each: whether gdb has Python and lldb's script command
// works, whether ptrace is allowed (Yama ptrace_scope, a tracer already
// attached, another user's process, a seccomp filter), whether the
// debuginfod servers answer, and for a target what kind of interpreter it
// is (venv copy, pyenv shim, embedded, in a container, deleted), the debug
// information of the modules that matter, the CPython gdb extension
// (found, its version, runs in gdb, auto-load safe-path), which py-bt
// answers, and which source trees are missing. Fixes are specific to the
// distribution of the machine, or of the container, that runs the target.
//
// Run returns the checks ([]Check: id, status ok/warn/fail/skip, summary,
// fix, details); the command prints them. Everything doctor reads from
// outside comes through Services: the proc root (a fake tree in tests),
// the host's root for /etc and dpkg's database, the environment, the
// caller's uids, a Runner through which every external command (gdb,
// lldb, dpkg) runs under a deadline, an *http.Client for debuginfod, and
// the functions that resolve a target and collect its debug information
// (cmd/internal/target, cmd/internal/debugsearch), so that every check can
// be tested on faked inputs.
package doctor
