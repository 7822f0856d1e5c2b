// Package archive knows the format of a pyattach crash bundle: one file
// holding a core and everything needed to debug it elsewhere (the
// mapped ELF files, their debug files, Python sources, the CPython gdb
// extension, pyattach's walker), with a JSON manifest.
//
// A bundle is a zstd skippable frame carrying the magic string (so that
// a bundle is told from a core by its first bytes), then one zstd stream
// (github.com/klauspost/compress/zstd) of a tar archive. Its first entry
// is manifest.json; the others follow in the manifest's order, each a
// regular file whose name is one of:
//
//	core                   the core file
//	root/<path>            a file as the process saw it at /<path>
//	debug/.build-id/xx/... a separate debug file, by build-id
//	ext/gdb/<name>         the CPython gdb extension (code from the
//	                       packing machine: never run unless trusted)
//	src/<path>             a native frame's source file (--native-sources), at
//	                       the path its DWARF names, cleaned
//	walker/<name>          pyattach's walker as it was packed
//
// Reading never trusts the file: Verify walks the whole stream (names,
// types, sizes against the tar headers and the manifest, sha256 of every
// entry, a total size cap) before anything is written, and Extract
// writes into a new directory only what Verify accepted. A refused
// bundle is a *FormatError matching ErrHostile (errors.Is); a file that
// is not a bundle matches ErrNotBundle.
//
// It is the bundle's archive format alone, below cmd/internal/bundle,
// which chooses what goes in and opens bundles into the cache: a tool of
// the bundle command, not a fact about a target, so it left detect/.
// It is the only package that imports the zstd library.
package archive
