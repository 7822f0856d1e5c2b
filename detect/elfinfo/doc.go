// Package elfinfo reads the facts about an ELF file that a debugger needs
// to find its symbols: the GNU build-id note, the .gnu_debuglink name and
// CRC-32, the .gnu_debugaltlink (dwz) file, whether DWARF and a symbol
// table are present, and the producer string of the first compile unit.
//
// Every reader takes an io.ReaderAt and reads only the headers, notes and
// small sections it needs, never the whole file, so that looking at a
// process with hundreds of mapped libraries stays cheap. The byte-level
// parsers (ParseNotes, ParseDebugLink, ParseAltLink, ParseProducer) work on
// plain byte slices and strings so that they can be fuzzed.
package elfinfo
