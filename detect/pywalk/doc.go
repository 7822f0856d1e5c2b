// Package pywalk ships pyattach's memory-only Python stack walker: Python
// code that runs inside gdb and lldb (py/pyattach_walk.py, one core,
// behind the thin adapters py/pyattach_gdb.py and py/pyattach_lldb.py)
// and reads interpreters, threads, frames and code objects from the
// inferior's memory with the offsets of detect/pyoffsets, or from 3.13 on
// with those the build wrote into _Py_DebugOffsets at the start of
// _PyRuntime (so a 3.13+ build no table was generated from works). It needs no
// DWARF, so it answers for stripped interpreters, optimised 3.13+ builds
// whose eval loop hides its frame, and lldb, where CPython's own
// libpython.py cannot.
package pywalk
