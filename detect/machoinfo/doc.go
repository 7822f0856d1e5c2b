// Package machoinfo reads the facts about a Mach-O file (macOS's object
// format) that a debugger needs to find its symbols: for each
// architecture, the LC_UUID (which a .dSYM's DWARF file must repeat),
// whether DWARF is present, whether a symbol table is, and the debug map
// (the N_OSO entries the linker writes, naming the object files that
// still hold the DWARF until dsymutil gathers it into a .dSYM bundle).
//
// A universal ("fat") file holds one Mach-O file per architecture; each
// is read apart (Info.Arches), and an architecture whose offset or size
// lies past the end of the file, overlaps the fat header or another
// architecture is refused.
//
// machoinfo is the one place pyattach parses Mach-O input (TestOnePlace
// in detect/elfinfo keeps it so): NewFile is debug/macho's NewFile or
// NewFatFile with the magic checked (ErrNotMachO) and the standard
// library's errors and panics turned into a *FormatError, which matches
// ErrCorrupt with errors.Is. Every reader takes an io.ReaderAt and reads
// the headers, load commands and symbol table only, never the DWARF
// itself; DWARF and Sections hand the DWARF sections to detect/srcscan and
// detect/srcmap.
package machoinfo
