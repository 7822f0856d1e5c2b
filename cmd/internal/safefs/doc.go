// Package safefs is how pyattach keeps its own files: private
// directories and one atomic writer.
//
// pyattach's own directories (its cache, its scripts, its debug store)
// come from PrivateDir: mode 0700, owned by the user, never reached
// through another user's link (checked with detect/saferead's
// CheckTrusted). Every file pyattach writes goes through one atomic
// writer with one durability rule, WriteFile (or CreateTemp and Commit
// for a download streamed to disk): a temporary file
// TempPrefix<pid>-<random> in the same directory, flushed (fsync),
// renamed into place, the directory flushed (fsync). Rename is that last
// step alone, for a writer that flushes several temporary files and
// checks them all before it puts any in place (the debug-symbol store).
// Sweep removes the temporary files a killed run left behind, never a
// live writer's.
//
// Only the commands write, so it sits under cmd/internal; the read side
// (which file may be read, and read as code) is detect/saferead, which
// the fact readers in detect/ use.
package safefs
