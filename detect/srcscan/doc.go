// Package srcscan lists the source files a module's DWARF names, joined
// the way gdb joins them, so that source-path rules can be inferred from
// what the debugger will really look for.
//
// For every compile unit it reads the unit header and the first DIE only
// (DW_AT_comp_dir, DW_AT_name, DW_AT_producer, DW_AT_stmt_list), and for
// every line table a unit points at it reads the header only (the
// directory and file tables), never the line program. DWARF 2 to 5 are
// understood, including the DWARF 5 entry formats and .debug_line_str,
// and compressed sections (SHF_COMPRESSED, zlib or zstd) are inflated as
// a stream.
//
// Memory does not grow with the size of the debug sections: they are read
// through a small forward-moving window, string references are collected
// and resolved in one sorted pass per string section, and only the unit
// facts and file tables themselves are kept. Relocations are not applied,
// so relocatable objects (ET_REL, .o files) may give wrong strings.
//
// The join follows gdb: an absolute file name, in a line table or as a
// unit's DW_AT_name (CMake passes absolute source paths), is kept as is;
// otherwise the file's include directory (itself joined onto
// DW_AT_comp_dir when relative; in DWARF 2-4 directory 0 is
// DW_AT_comp_dir, in DWARF 5 it is the table's own entry 0, the
// compilation directory) and the name are joined with "/". ".."
// components are kept, since the debugger does not clean them:
// "/build/reproducible-path/python3.11-3.11.2/build-static/../Modules/timemodule.c".
// Names a compiler makes up for what has no file ("<built-in>",
// "<command-line>", "<artificial>", "<stdin>") are not source files and
// are left out, so that nothing downstream looks for them.
//
// Scan takes an io.ReaderAt, ScanELF an *elf.File parsed by
// elfinfo.NewFile. Malformed DWARF is an *elfinfo.FormatError naming the
// section (.debug_info, .debug_abbrev, .debug_line, a string section) and
// the offset in it where decoding failed.
package srcscan
