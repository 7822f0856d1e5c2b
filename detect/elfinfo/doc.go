// Package elfinfo reads the facts about an ELF file that a debugger needs
// to find its symbols: the GNU build-id note, the .gnu_debuglink name and
// CRC-32, the .gnu_debugaltlink (dwz) file, whether DWARF and a symbol
// table are present, and the producer string of the first compile unit.
// For a file without a build-id, LoadDigest (and ContentOf, cached per
// file) hashes its loadable segments, which identify the build and which
// strip leaves unchanged.
//
// Every reader takes an io.ReaderAt and reads only the headers, notes and
// small sections it needs, never the whole file, so that looking at a
// process with hundreds of mapped libraries stays cheap. The byte-level
// parsers (ParseNotes, ParseDebugLink, ParseAltLink, ParseProducer) work on
// plain byte slices and strings so that they can be fuzzed.
//
// elfinfo is also where pyattach parses untrusted ELF input at all:
// NewFile is elf.NewFile with the magic checked (ErrNotELF) and the
// standard library's errors and panics turned into a *FormatError;
// RecoverCorrupt does the same for the accessors of an *elf.File
// (symbols, dynamic section) that can panic on hostile input. A caller
// that needs several kinds of facts parses the file once with NewFile and
// hands the *elf.File to ReadELF, BuildIDOf, pyinfo.ReadELF and
// srcscan.ScanELF.
//
// Errors: ErrNotELF and ErrNoBuildID are sentinels; bad input is a
// *FormatError{Section, Off, Msg} (as debug/elf.FormatError and
// debug/dwarf.DecodeError), which matches ErrCorrupt with errors.Is and
// says which section, segment or note was being parsed and at what
// offset. The parsers of core and srcscan return the same type. The
// build-id itself is a detect/buildid ID.
package elfinfo
