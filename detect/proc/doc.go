// Package proc knows what a running process looks like through a proc
// file system: its parent, owner, tracer, command line and comm, the
// executable (also once it was deleted), its root directory and mount
// namespace (to tell a process in a container or chroot from one on the
// host), the memory mappings of /proc/PID/maps and the file-backed modules
// among them, and its descendants (Children, breadth first; Tree, in tree
// order, from every thread's PID/task/TID/children or else every
// process's PID/stat, with start times to tell a PID taken again).
//
// The proc root is a parameter, an fs.FS: New("/proc") in production, a
// fake tree (a directory made by a test, or an fstest.MapFS) in tests.
// Paths inside the FS look like "1234/maps". Symbolic links (PID/exe,
// PID/root, PID/ns/mnt) are read through fs.ReadLink, so the FS should
// implement fs.ReadLinkFS; os.DirFS and fstest.MapFS do.
//
// Files of the process are opened as the process sees them: OpenExe through
// PID/exe (which works after the executable was deleted or replaced),
// OpenInRoot under PID/root (containers, chroots), OpenMapFile through
// PID/map_files for a mapping whose file was deleted.
//
// Status reads the lines of PID/status that matter to an attach (Uid,
// TracerPid, Seccomp), SelfStatus the reader's own; ParseStatus is their
// pure parser.
//
// ParseMaps is a pure parser over an io.Reader, fed literal text in tests
// and fuzzed. Errors are checked with errors.Is against ErrNoProcess (the
// process does not exist or exited while it was read), ErrPermission (the
// caller may not look at it: usually another user's process) and
// ErrMalformedMaps. Error messages name the real-looking path, such as
// "read /proc/1234/exe: permission denied"; hints for the user are added by
// the command, not here.
package proc
