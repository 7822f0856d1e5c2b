// Package debugfile finds the debug information of an ELF module the way
// gdb does, and says what kind it is.
//
// For each module the search stops at the first file whose build-id (or
// .gnu_debuglink CRC-32) matches, in gdb's order:
//
//  1. DWARF embedded in the module itself;
//  2. <debugdir>/.build-id/xx/rest.debug (then rest.1.debug, ...; the
//     paths of buildid.ID, for a valid id only) for each
//     debug directory, under a container's root first;
//  3. the .gnu_debuglink name in <objdir>/, <objdir>/.debug/ and
//     <debugdir>/<objdir>/, CRC checked, retried through the module's real
//     path when it is reached through a symbolic link or a venv copy;
//  4. the debuginfod client cache;
//  5. debuginfod servers (LocateAll batches those downloads).
//
// A file that exists but does not match is recorded as rejected, never
// accepted. The kind of what was found (full DWARF, line tables only,
// symbol table only, .gnu_debugdata MiniDebugInfo) decides what a user
// will see in the debugger, so it is reported too. A dwz supplementary
// file (.gnu_debugaltlink) is located as well.
//
// A module of a process in another root (Module.Root, /proc/PID/root) is
// read, and its debug directories searched, through detect/rootfs: links
// are followed inside that root, so a container's absolute link
// (/usr/lib/debug -> /etc) never leads to the host's files.
package debugfile
