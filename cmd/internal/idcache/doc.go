// Package idcache remembers the GNU build-ids of files pyattach has
// read, from one run to the next, so that resolving a process does not
// parse the ELF headers and notes of every module it maps again.
//
// An entry is keyed by what the file system says of a file: device,
// inode, size, modification time and status-change time (ctime), all
// from one fstat of the open file. Rewriting a file changes its mtime
// and ctime; a user can set the mtime back (touch -d, utimes) but not
// the ctime, which the kernel sets on every change, utimes included. A
// file whose key is unchanged is taken to hold the build-id read before.
//
// The cache is one text file, buildids, in pyattach's private cache
// directory ($XDG_CACHE_HOME/pyattach, mode 0700): a header line, then
// one line per file, "DEV INO SIZE MTIME CTIME VALUE" (decimal numbers,
// times in nanoseconds; VALUE a build-id in lowercase hex, "-" for an ELF
// file without one, "!" for a file that is not ELF). It is bounded
// (MaxEntries entries, the ones used last kept), written only when a run
// learnt something, through safefs.WriteFile (temporary file, rename).
//
// The file is the user's to change, so it is read as untrusted input:
// Parse never panics, skips lines it does not understand and checks
// every build-id with buildid.Parse; a file larger than MaxFileSize, not
// regular, owned by another user than the one running pyattach or
// writable by others is not read at all. Root uses only a cache owned by
// root. At worst a forged entry names a wrong build-id for a file of the
// very key it gives: what that user could do to the file itself.
package idcache
