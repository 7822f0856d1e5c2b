// Package pywalk ships pyattach's memory-only Python stack walker: Python
// code that runs inside gdb and lldb and reads interpreters, threads,
// frames and code objects from the inferior's memory with the offsets of
// detect/pyoffsets, or from 3.13 on with those the build wrote into
// _Py_DebugOffsets at the start of _PyRuntime (so a 3.13+ build no table
// was generated from works). It needs no DWARF, so it answers for
// stripped interpreters, optimised 3.13+ builds whose eval loop hides its
// frame, and lldb, where CPython's own libpython.py cannot.
//
// The files, all in py/ and written together to one directory (Files):
// pyattach_walk.py is the core's face (Walker and the names the adapters
// use), over one module per concern, each reading through the same
// memory and layout: pyattach_walk_memory (reads, Budget, WalkError),
// pyattach_walk_layout (offset tables, _Py_DebugOffsets),
// pyattach_walk_runtime (interpreters, threads), pyattach_walk_frames
// (frames, code objects, lines, locals), the readers of objects, one
// per CPython type (pyattach_read_types, _scalars, _containers: tuple,
// list, dict, set; _instances, _callables, and _repr: the value repr
// chosen by ob_type), pyattach_walk_native (which C frames run which Python
// frames), pyattach_walk_source (the target's source files),
// pyattach_walk_text (escape, the one escaping of the target's strings),
// pyattach_walk_format (what the commands print), pyattach_walk_dump
// (what `pyattach dump` reports of each OS thread, for any reader) and
// pyattach_walk_tasks_legacy (where 3.11-3.13 keep their asyncio tasks:
// legacy_task_addrs). The thin adapters
// py/pyattach_gdb.py and py/pyattach_lldb.py import pyattach_walk only,
// and their own modules (py/pyattach_gdb_bt.py: the frame filter that
// shows Python frames in gdb's bt).
package pywalk
