// Package lldbgen turns a plan.Plan into lldb command files. It is pure
// text: it reads no file and checks no path on disk, and the same Plan
// always gives the same bytes.
//
// What the package knows about lldb 14 (Debian's lldb-14 and
// python3-lldb-14), each fact checked with the real debugger:
//
// # When commands run
//
// The driver runs -S/-O commands, then `target create` (a program or
// --core argument) or `process attach --pid`, then -s/-o commands. An
// init file (~/.lldbinit, and ./.lldbinit) runs before all of them.
//
//   - target.debug-file-search-paths is read when a module is created: a
//     directory appended after `target create` is not searched for that
//     target's modules. It goes in Script.Before.
//   - target.source-map and target.preload-symbols set before a target
//     exists are the defaults a new target takes. They go in Before.
//   - `target symbols add` needs the target and its module: it goes in
//     Script.After. Without --shlib it picks the module by UUID (GNU
//     build-id); a file that matches no loaded module is an error ("does
//     not match any existing module"), never a wrong pairing.
//   - `command script import` needs no target: it goes in Before, so that
//     a failing `target symbols add` cannot keep the extension out.
//   - A failing command ends the file it is in (lldb's
//     interpreter.stop-command-source-on-error is on by default); the
//     next -S/-s file still runs. `settings append target.source-map`
//     fails when a replacement directory does not exist (the pairs before
//     it are kept), so it is the last command of Before.
//   - ./.lldbinit is read only when ~/.lldbinit sets
//     `settings set target.load-cwd-lldbinit true` (for every directory);
//     otherwise lldb prints a warning and ignores it. ProjectTrust's line
//     reads one project's file instead, only when lldb starts there, and
//     sets the setting to false there (no warning, no second reading). It runs before any target exists, so Write
//     puts the After commands in it as comments (see Write).
//
// # How lldb parses a command line
//
//   - A line whose first non-blank character is '#' is a comment, also
//     when it holds backticks (they are not evaluated); there is no line
//     continuation. A '#' later in a line is an ordinary character. A
//     comment holds only text with no control character, so nothing in
//     it can start a new line.
//   - Before any argument parsing, every backtick in the whole line,
//     inside quotes too, starts an expression that lldb evaluates and
//     substitutes ("/a`1+2`b" becomes "/a3b"). A backtick preceded by a
//     backslash is not evaluated; that backslash is removed.
//   - Inside double quotes a backslash escapes only '\\' and '"' (and '`',
//     through the rule above); before any other character it is kept.
//     Spaces, tabs, single quotes, '#', ';', '$', '~' and non-ASCII bytes
//     are literal. lldb has no command separator: "; platform shell ..."
//     is part of the argument.
//   - So every argument is written in double quotes with a backslash put
//     before each backslash, double quote and backtick, and comes back
//     byte for byte (file paths: see normalization below).
//   - Options: `settings set` parses options from its whole line (a value
//     "-x" is "unknown or ambiguous option"), so it is written as
//     `settings set -- NAME VALUE`. `settings append` has no options and
//     takes "--" as a value, so it gets none; values starting with '-'
//     pass. `target symbols add` and `command script import` take "--".
//   - lldb stores file paths normalized: "//", "/./" and a trailing '/'
//     are dropped and "a/../" is removed lexically, which the kernel would
//     resolve through symlinks. The package writes path.Clean of each path
//     and refuses a path with a ".." element. A relative path starting
//     with '~' is expanded by lldb to a home directory, so it is refused.
//     Other relative paths are relative to lldb's working directory.
//   - `command script import DIR/NAME.py` runs the Python statement
//     "import NAME" with NAME pasted in: a NAME such as "x;y" runs y. The
//     directory is passed safely. So NAME must be a Python identifier
//     (ASCII) and not a keyword.
//   - Newline, carriage return, NUL and every other control character
//     except tab are refused: a newline ends the command. Bytes that are
//     not UTF-8 pass through settings and `target symbols add` intact,
//     but `command script import` hands the directory to Python as text
//     and fails ("Python sys.path handling failed"), so an extension path
//     must be valid UTF-8.
//
// # What lldb 14 lacks
//
//   - No debuginfod client (`settings list` has no such setting): nothing
//     is emitted but a comment.
//   - No sysroot for a local process: `platform select host --sysroot`
//     is ignored by the host platform; `target modules search-paths add /
//     ROOT/` after an attach corrupts the module list (load addresses 0,
//     wrong paths). Plan.Sysroot alone is noted in a comment; a
//     chrooted process gets Plan.LLDBRoot too (below), without which
//     lldb loads the host's libraries of the same names and cannot
//     unwind. Its /proc/PID/exe is a host path under the root: lldb
//     replaces the program with that file, the same one.
//   - No "target:" for a process under pivot_root (Plan.LLDBRoot): the
//     target is created from LLDBRoot+LLDBExe with --no-dependents (the
//     dependents would be read at the host's paths), then "/" is mapped
//     to LLDBRoot with `target modules search-paths add`, before the
//     attach: lldb opens the mapped paths as they are (no realpath), and
//     the kernel resolves /proc/PID/root in the process's namespace.
//     After the attach lldb replaces a program whose path differs from
//     the one the process reports with the host's file of that name
//     ("Executable module changed"), so the module's platform path is
//     set to LLDBExe (`SBModule.SetPlatformFileSpec`; `target create
//     --remote-file` would copy the file to that host path when it is
//     missing). Each library is then listed twice, both the root's file
//     at the same address. lldb-server's own crash on such a process
//     ("lost connection") is the command line's to avoid (it needs the
//     executable at its path: see cmd/pyattach's lldbServerFor).
//   - Plan.Fast becomes `settings set target.preload-symbols false`:
//     symbol tables are parsed on first use. There is no per-library
//     switch like gdb's auto-solib-add, so FastLibs need nothing.
//   - Debian's `lldb -P` names a directory without the lldb module, and
//     lldb's Python fails ("No module named 'lldb.embedded_interpreter'")
//     unless PYTHONPATH holds the right one: see Env.
package lldbgen
