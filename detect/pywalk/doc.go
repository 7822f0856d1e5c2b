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
// memory and layout. Walker inherits nothing: it holds one part per
// concern, each built from what it reads with (the memory, the layout,
// the readers it needs), never from the Walker itself. The modules:
// pyattach_walk_memory (reads, Budget, WalkError),
// pyattach_walk_layout (offset tables, _Py_DebugOffsets),
// pyattach_walk_runtime (interpreters, threads: Runtime),
// pyattach_walk_tasks (asyncio tasks: Tasks, which reads threads and
// frames through a Runtime), pyattach_walk_match
// (which thread state each OS thread runs in: by thread id, then
// pthread_t, then stack pointer), pyattach_walk_frames (frames, code
// objects, lines, locals), the readers of objects, one per CPython type
// (pyattach_read_types, _scalars, _containers: tuple, list, dict, set;
// _instances, _callables, _code, _asyncio, and _repr: the value repr
// chosen by ob_type), pyattach_walk_native (which C frames run which
// Python frames: the one merger, StackMerger), pyattach_walk_source (the
// target's source files), pyattach_walk_text (escape, the one escaping
// of the target's strings), pyattach_walk_json (json.loads and json.dumps
// through _json's C scanner and encoder, without importing json: the
// direct reader's start), pyattach_walk_format (how frames, locals and
// sources are printed), pyattach_walk_commands (each command's text and
// arguments, whichever debugger runs it), pyattach_walk_dump (what
// `pyattach dump` reports of each OS thread, for any reader),
// pyattach_walk_tasks_legacy (where 3.11-3.13 keep their asyncio tasks:
// legacy_task_addrs) and pyattach_walk_dap (what the pyattach-dap command
// answers the DAP proxy, walk.dap). The thin adapters py/pyattach_gdb.py,
// py/pyattach_lldb.py and py/pyattach_proc.py import pyattach_walk only,
// and their own modules: gdb's are split by job (pyattach_gdb_inferior:
// the Walker and threads of the selected inferior; _commands; _cpython:
// taking over CPython's commands; _names: thread names, escaped;
// _settings; _dump; _bt: the frame filter that shows Python frames in
// gdb's bt; _native: the C frames py-bt shows).
package pywalk
