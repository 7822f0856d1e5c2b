// Package pyinfo reads the facts about a CPython interpreter that can be
// learnt from one ELF file: the Python version, the ABI flags (d for a
// Py_DEBUG build, t for a free-threaded build, m for pymalloc before 3.8),
// whether the file holds the interpreter runtime itself or only links
// against libpython, and which DT_NEEDED entry names that libpython.
//
// The version comes from the most reliable source the file offers:
//
//  1. the _Py_DebugOffsets structure at the start of _PyRuntime
//     (3.13 and later; cookie "xdebugpy" then PY_VERSION_HEX);
//  2. the Py_Version constant (3.11 and later), PY_VERSION_HEX;
//  3. the PY_VERSION string ("3.9.18") in .rodata, found either as a
//     string of its own or as the tail of a longer string that the linker
//     merged it into (pyenv's libpython keeps it as the end of
//     "/root/.pyenv/versions/3.9.18");
//  4. the file name (python3.11d, libpython3.6m.so.1.0), major.minor only.
//
// Read works on an io.ReaderAt (ReadELF on an *elf.File already parsed
// by elfinfo.NewFile, with its elfinfo.Info when the caller has it) and
// reads the ELF headers, one symbol
// table, the few bytes behind two symbols and, only when no symbol gives
// the version, a bounded streaming scan of .rodata. FindLibrary locates a
// DT_NEEDED library the way the dynamic loader does, under a root
// directory that may be a container's root.
package pyinfo
