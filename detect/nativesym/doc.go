// Package nativesym names the C frames of a process or a core: for a pc,
// the function from the ELF symbol tables of the module mapped there
// (its .symtab, else its separate debug file's .symtab, else its
// .dynsym) and, where DWARF can be read cheaply, the file and line from
// the line table of the one compilation unit that holds the pc (found
// through .debug_aranges, else the units' own ranges). No other unit's
// DWARF is read: a debugger that loads a module's debug information
// reads all of it, which takes seconds for libpython.
//
// A Table is built from the mappings (Region: /proc/PID/maps, a core's
// NT_FILE note) and a Files that opens the modules and their debug
// files; it caches what it read of each module for its lifetime. The
// files are untrusted: every section it reads is bounded (MaxSection),
// and a module that cannot be parsed is simply not named.
package nativesym
