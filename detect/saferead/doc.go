// Package saferead knows how pyattach may read a file it did not write:
// as data, or as code a debugger will run.
//
// pyattach often runs as root, and gdb or lldb runs whatever script it is
// handed. A file may become such code (an extension, a debug directory
// that gdb auto-loads scripts from, a project's configuration) only when
// nobody but its reader or root can change it: CheckTrusted walks the
// path from "/" one component at a time, through file descriptors, and
// refuses a component owned by another user, a directory or file that
// its group or others may write (a sticky directory such as /tmp is
// fine: only owners replace entries there), and a symbolic link owned by
// another user (an *UntrustedError, matching ErrUntrusted).
//
// A file read as data (an ELF file, a core, a map, a configuration) is
// opened through Open or OpenRegular: it never blocks on a FIFO and never
// reads a device (a *NotRegularError, matching ErrNotRegular; Kind names
// what the file is instead).
//
// The fact readers of detect/ use it, so it sits in detect/ and imports
// nothing above. pyattach's own files, its private directories and its
// one atomic writer are cmd/internal/safefs, the writing side, which
// builds on CheckTrusted.
package saferead
