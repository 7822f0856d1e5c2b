// Package safefs knows which files pyattach may let a debugger run, and
// how pyattach keeps its own files.
//
// pyattach often runs as root, and gdb or lldb runs whatever script it is
// handed. A file may become such code (an extension, a debug directory
// that gdb auto-loads scripts from, a project's configuration) only when
// nobody but its reader or root can change it: CheckTrusted walks the
// path from "/" one component at a time, through file descriptors, and
// refuses a component owned by another user, a directory or file that
// its group or others may write (a sticky directory such as /tmp is
// fine: only owners replace entries there), and a symbolic link owned by
// another user.
//
// pyattach's own directories (its cache, its scripts, its debug store)
// come from PrivateDir: mode 0700, owned by the user, never reached
// through another user's link. Every file pyattach writes goes through
// one atomic writer with one durability rule, WriteFile (or CreateTemp
// and Commit for a download streamed to disk): a temporary file
// TempPrefix<pid>-<random> in the same directory, flushed (fsync),
// renamed into place, the directory flushed (fsync). Rename is that last
// step alone, for a writer that flushes several temporary files and
// checks them all before it puts any in place (the debug-symbol store).
// Sweep removes the temporary files a killed run left behind, never a
// live writer's.
package safefs
