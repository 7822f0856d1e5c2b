// Package gdbgen turns a plan.Plan into gdb commands. It is pure text:
// no file-system access, and the same Plan always gives the same bytes.
//
// # Two parts
//
// A Script has an Early part, for gdb -ix (run before gdb loads the
// program: debug-file directories, sysroot, auto-load safe path,
// debuginfod, auto-solib-add, source-path rules, then `file`), and a
// Late part, for gdb -x (run after the program is loaded and the process
// attached or the core read: `sharedlibrary` for a fast plan, the
// separate debug files, CPython's extension). Write puts both in one file
// for a project .gdbinit. gdb 13 reads ./.gdbinit after it has loaded the
// program named on its command line and attached (checked: at that point
// gdb.objfiles() already holds the program), and only when the file is on
// the auto-load safe path (add `add-auto-load-safe-path DIR/.gdbinit` to
// ~/.config/gdb/gdbinit). So in a .gdbinit the settings of the Early part
// apply only to what gdb loads afterwards: the `file` command the one-file
// form emits (when the Plan has a PID or core) reloads the program with
// them, while libraries already read at attach keep the symbols they got;
// substitute-path, sharedlibrary, the separate debug files and the
// extension work there as in the Late part. ~/.gdbinit and
// ~/.config/gdb/gdbinit are read before the program, like -ix.
//
// # Quoting, as gdb 13.1 parses each command (checked with the real gdb)
//
// Every line of a gdb script ends at a newline, and a line ending in a
// backslash is continued on the next line (also a "#" comment line); so
// newlines, NUL and every other control character but tab are refused in any
// path, a path may not end in a backslash where gdb reads the rest of the
// line raw, and a comment line ending in a backslash gets a "#" added.
// Paths must be absolute, valid UTF-8 file names.
//
//   - `set debug-file-directory`, `set sysroot` (filename settings) and
//     `source`-like raw commands take the rest of the line: quotes,
//     backslashes, '#', ';', '$' pass literally; leading blanks are
//     skipped and trailing blanks dropped; readline's tilde expansion
//     rewrites "~" at the start or after a blank ("/a ~root/b" becomes
//     "/a /root/b"). So a path ending in a blank or a backslash, or with a
//     blank before "~", is refused. debug-file-directory is a ':'
//     separated list, so a directory holding ':' is refused.
//   - `file` and `set substitute-path` split their arguments like a shell
//     (libiberty buildargv): each path is written in double quotes with
//     '"' and '\' escaped by a backslash, which carries any byte but the
//     refused ones. `file` also expands a tilde after a blank: refused.
//   - `add-auto-load-safe-path` appends raw text to a ':' separated list
//     whose entries are tilde-expanded, have $debugdir and $datadir
//     replaced, and are matched as fnmatch patterns (a '*' in an entry
//     makes every sibling safe). gdb's fnmatch takes a bracket
//     expression literally, so '*', '?', '[', '$', a '~' after a blank,
//     and a trailing blank or backslash are written as "[*]" and the
//     like: the entry then matches exactly one file. ':' is refused.
//     gdb also adds each entry's realpath as a pattern; an escaped entry
//     read as a path ("/tmp/a[*]") could be a link planted by whoever can
//     write its parent, so the first bracket is padded ("[***...]") until
//     its component is longer than NAME_MAX and realpath fails.
//   - `sharedlibrary REGEX` and `set debuginfod urls` take the rest of
//     the line: leading and trailing blanks and a trailing backslash are
//     refused (URLs also may not hold blanks: gdb splits them there).
//   - CPython's extension is run from a `python` block, as `source` runs
//     a .py file (in __main__, with __file__ set; checked that py-bt is
//     then defined), with its path as a Python string literal of ASCII
//     escapes: Python takes any path gdb's `source` mangles (trailing
//     blank, tilde after a blank, trailing backslash), a missing or
//     broken file is reported without stopping the rest of the script,
//     and a block line is never "end".
//   - Separate debug files are added from a `python` block with
//     gdb.Objfile.add_separate_debug_file, which relocates the debug
//     file like its module (add-symbol-file would need the load offset;
//     symbol-file would replace the program's own objfile). The block
//     adds them to modules already loaded and, through
//     gdb.events.new_objfile, to modules loaded later (a launched
//     program's libraries). gdb expands a tilde after a blank in that
//     file name too: refused.
package gdbgen
