"""pyattach's memory-only walker of Python stacks.

Shared by the gdb and lldb adapters: it is given a function that reads
the inferior's memory, the address of _PyRuntime, the Python version and
a table of struct offsets (generated from real builds' DWARF by pyattach),
and reads interpreters, threads, frames and code objects from memory
alone: no DWARF, no CPython headers, no code run in the inferior.

This module is the walker's face: Walker, and every name the adapters
and tests use, re-exported. Objects are read by one reader per CPython
type, each fed only what it reads with (the memory, the Layout, the
pointer size) and usable alone on fake memory:

  pyattach_read_types       an object's type: tp_name, tp_flags
  pyattach_read_scalars     str, bytes, int, float
  pyattach_read_containers  tuple, list, dict (split tables, insertion
                            order), set and frozenset
  pyattach_read_instances   instance attributes: __dict__, managed
                            dicts, inline values, __slots__
  pyattach_read_callables   built-in functions and methods, method-wrappers
  pyattach_read_code        code objects, line tables, line numbers
  pyattach_read_asyncio     asyncio's tasks and futures (TaskObj, FutureObj)
  pyattach_read_repr        Readers (one of each) and value_repr, chosen
                            by ob_type

The walk itself is done in one module per concern, reading through the
walk's memory (Walker.mem) and Layout:

  pyattach_walk_text     escape() for every string from the target, bounds
  pyattach_walk_json     JSON through json's C encoder and scanner, not json
  pyattach_walk_memory   reads of the inferior's memory, Budget, WalkError
  pyattach_walk_layout   Layout: offset tables and _Py_DebugOffsets
  pyattach_walk_runtime  interpreters, thread states (Runtime)
  pyattach_walk_match    which thread state each OS thread runs in
  pyattach_walk_threads  thread names (threading), interpreter, GIL, state
  pyattach_walk_frames   frames, code objects, line numbers, locals
  pyattach_walk_native   which C frames run which Python frames (eval loop)
  pyattach_walk_source   the target's source files, read as it reads them
  pyattach_walk_format   what py-bt, py-list, py-locals, py-up print
  pyattach_walk_commands the commands' text, whichever debugger runs them
  pyattach_walk_dump     what `pyattach dump` reports of each OS thread
  pyattach_walk_tasks    asyncio tasks, their coroutine stacks and awaits (Tasks)
  pyattach_walk_dap      what pyattach-dap answers the DAP proxy (walk.dap)
"""

from pyattach_walk_commands import (  # noqa: F401
    BT_ALL_USAGE, BT_USAGE, NO_FRAME, TASKS_USAGE, UsageError, bt_args, frame_command, no_args, py_bt, py_bt_full,
    py_exc, py_tasks, py_threads, tasks_args, thread_line, thread_numbers)
from pyattach_walk_dump import (  # noqa: F401
    add_sources, dump_threads, exception_of, frame_runs, write_dump)
from pyattach_walk_format import (  # noqa: F401
    NOT_READ_LINE, format_frames, format_full, format_list, format_locals, format_print, format_summary,
    interpreter_line, not_read_line,
    move_selection, omitted_line, parse_list_args)
from pyattach_walk_frames import (  # noqa: F401
    MAX_FRAMES, Frame, FrameList, FrameReader, executable_mask, frame_owner_skipped)
from pyattach_walk_json import loads as json_loads  # noqa: F401
from pyattach_walk_layout import (  # noqa: F401
    DEBUG_COOKIE, DEBUG_OFFSETS_EXTRA, DEBUG_OFFSETS_FIELDS, DEBUG_OFFSETS_MEMBERS,
    Layout, debug_offsets_layout, load_tables, read_debug_offsets, version_from_hex, version_tuple)
from pyattach_walk_memory import (  # noqa: F401
    MAX_BYTES, MAX_READS, TIMEOUT, Budget, BudgetExhausted, Memory, WalkError)
from pyattach_read_code import MAX_LINETABLE
from pyattach_read_repr import Readers, value_repr
from pyattach_read_scalars import long_from_digits, long_sign_ndigits  # noqa: F401
from pyattach_walk_native import (  # noqa: F401
    COLLECTING, EVAL_LOOP, HELPERS, WAITING_FOR_GIL, StackMerger, base_name, eval_groups, is_eval_loop, is_helper,
    merge_stack, native_kind)
from pyattach_walk_match import OSThread, match_stacks, match_thread, match_threads, namespace_tid  # noqa: F401
from pyattach_walk_runtime import Runtime, Thread  # noqa: F401
from pyattach_walk_source import (  # noqa: F401
    ANYONE, MAX_SOURCE_BYTES, MAX_SOURCE_LINE, SourceFiles, may_access, open_source,
    process_creds, process_files, source_line, source_lines)
from pyattach_walk_threads import (  # noqa: F401
    MAX_TRACEBACK, NO_GIL, STATES, ExceptionReader, ThreadInfo, ThreadStateReader, exception_lines, facts_header,
    kernel_view, known_thread_infos, thread_facts, thread_header, thread_state)
from pyattach_walk_tasks import (  # noqa: F401
    ASYNCIO_DEBUG_MEMBERS, MAX_TASKS, Task, TaskList, Tasks, asyncio_debug_fields, find_cycles, format_tasks,
    frame_states, tasks_json)
from pyattach_walk_text import MAX_REPR, TRUNCATED, bounded, escape, has_controls, thousands  # noqa: F401
import pyattach_walk_dap as dap  # noqa: F401

__all__ = ["Walker", "Layout", "WalkError", "BudgetExhausted", "Budget", "load_tables", "format_frames", "process_files", "source_line", "escape"]
# Re-exported for the adapters and tests (pyflakes counts a name in
# __all__ as used).
__all__ += [
    # pyattach_walk_commands
    "BT_ALL_USAGE", "BT_USAGE", "NO_FRAME", "TASKS_USAGE", "UsageError", "bt_args", "frame_command", "no_args",
    "py_bt", "py_bt_full", "py_exc", "py_tasks", "py_threads", "tasks_args", "thread_line", "thread_numbers",
    # pyattach_walk_dump
    "add_sources", "dump_threads", "exception_of", "frame_runs", "write_dump",
    # pyattach_walk_format
    "NOT_READ_LINE", "format_full", "format_list", "format_locals", "format_print", "format_summary",
    "interpreter_line", "not_read_line", "move_selection", "omitted_line", "parse_list_args",
    # pyattach_walk_frames
    "Frame", "FrameList", "executable_mask", "frame_owner_skipped",
    # pyattach_walk_json
    "json_loads",
    # pyattach_walk_layout
    "DEBUG_COOKIE", "DEBUG_OFFSETS_EXTRA", "DEBUG_OFFSETS_FIELDS", "DEBUG_OFFSETS_MEMBERS",
    "debug_offsets_layout", "read_debug_offsets", "version_from_hex", "version_tuple",
    # pyattach_walk_memory
    "MAX_BYTES", "MAX_READS", "TIMEOUT",
    # pyattach_walk_native
    "COLLECTING", "EVAL_LOOP", "HELPERS", "WAITING_FOR_GIL", "StackMerger", "base_name", "eval_groups",
    "is_eval_loop", "is_helper", "merge_stack", "native_kind",
    # pyattach_read_scalars
    "long_from_digits", "long_sign_ndigits",
    # pyattach_walk_match
    "OSThread", "match_stacks", "match_thread", "match_threads", "namespace_tid",
    # pyattach_walk_runtime
    "Runtime", "Thread",
    # defined here
    "open_walker", "target_version",
    # pyattach_walk_source
    "ANYONE", "MAX_SOURCE_BYTES", "MAX_SOURCE_LINE", "SourceFiles", "may_access", "open_source",
    "process_creds", "source_lines",
    # pyattach_walk_threads
    "MAX_TRACEBACK", "NO_GIL", "STATES", "ThreadInfo", "exception_lines", "facts_header", "kernel_view",
    "known_thread_infos", "thread_facts", "thread_header", "thread_state",
    # pyattach_walk_tasks
    "ASYNCIO_DEBUG_MEMBERS", "MAX_TASKS", "Task", "TaskList", "Tasks", "asyncio_debug_fields", "find_cycles",
    "format_tasks", "frame_states", "tasks_json",
    # pyattach_walk_dap, as a module: its names are the protocol's
    "dap",
    # pyattach_walk_text
    "MAX_REPR", "TRUNCATED", "bounded", "has_controls", "thousands",
]


class Walker(object):
    """Reads Python stacks through read(addr, size) -> bytes.

    It holds the walk's memory (mem: a Memory charged to the walk's
    Budget), one reader per CPython type (readers: Readers, each fed
    the memory, the Layout and the pointer size) and the walk's parts,
    each fed what it reads with: thread_states (ThreadStateReader),
    exceptions (ExceptionReader), frame_reader (FrameReader),
    runtime_reader (Runtime: interpreters, thread states, a thread's
    frames) and task_reader (Tasks: asyncio tasks, reading threads and
    frames through runtime_reader). The methods below are its face for
    the adapters, the formats and the tests, and hand the work to those
    parts."""

    def __init__(self, read, runtime, layout, ptr_size=8, budget=None, max_frames=MAX_FRAMES):
        self.mem = Memory(read)
        self.runtime = runtime
        self.L = layout
        self.ptr = ptr_size
        self.readers = Readers(self.mem, layout, ptr_size)
        self.thread_states = ThreadStateReader(self.mem, layout, runtime, self.readers)
        self.exceptions = ExceptionReader(self.mem, layout, self.readers)
        self.frame_reader = FrameReader(self.mem, layout, self.readers, ptr_size)
        self.runtime_reader = Runtime(self.mem, layout, runtime, self.thread_states, self.frame_reader, max_frames)
        self.task_reader = Tasks(self.mem, layout, self.readers, self.frame_reader, self.runtime_reader, ptr_size)
        self.budget = None
        self.begin(budget)

    @property
    def budget(self):
        """The walk's Budget (the memory's: every read is charged to it)."""
        return self.mem.budget

    @budget.setter
    def budget(self, budget):
        self.mem.budget = budget

    @property
    def max_frames(self):
        """How many frames of a thread are read (the runtime_reader's)."""
        return self.runtime_reader.max_frames

    @max_frames.setter
    def max_frames(self, n):
        self.runtime_reader.max_frames = n

    @property
    def cuts(self):
        """What this walk could not read (the runtime_reader's)."""
        return self.runtime_reader.cuts

    @property
    def listing_cut(self):
        """Why the thread states were not all listed, or None."""
        return self.runtime_reader.listing_cut

    def begin(self, budget=None, max_frames=None):
        """Starts a walk: a fresh budget (budget, else one with the same
        limits as the last), thread states read again."""
        if budget is None:
            old = self.budget or Budget()
            budget = Budget(old.max_reads, old.timeout, old.max_bytes)
        self.budget = budget
        if max_frames is not None:
            self.max_frames = max_frames
        self.runtime_reader.begin()

    def stopped(self):
        """Why this walk's output is partial, or None when it is not:
        listing cut short, the budget used up, or what could not be read
        (cuts: an interpreter, another interpreter's frames of a thread)."""
        reasons = [r for r in [self.listing_cut] + self.cuts + [self.budget.exhausted] if r]
        return "; ".join(reasons) or None

    # Memory.
    def read(self, addr, size):
        return self.mem.read(addr, size)

    def u64(self, addr):
        return self.mem.u64(addr)

    def i64(self, addr):
        return self.mem.i64(addr)

    def u32(self, addr):
        return self.mem.u32(addr)

    def i32(self, addr):
        return self.mem.i32(addr)

    def ptrv(self, addr):
        return self.mem.ptrv(addr)

    def cstring(self, addr, limit=256):
        return self.mem.cstring(addr, limit)

    # Interpreters and thread states (pyattach_walk_runtime).
    def interpreters(self):
        return self.runtime_reader.interpreters()

    def threads(self):
        """Every interpreter's thread states (Runtime.threads)."""
        return self.runtime_reader.threads()

    def os_threads(self):
        """One thread state per OS thread (Runtime.os_threads)."""
        return self.runtime_reader.os_threads()

    def thread_frames(self, th, max_frames=None):
        """The Python frames OS thread th runs (Runtime.thread_frames)."""
        return self.runtime_reader.thread_frames(th, max_frames)

    def thread_for(self, native_id=None, pthread_id=None):
        return self.runtime_reader.thread_for(native_id, pthread_id)

    def match_tids(self, tids):
        return self.runtime_reader.match_tids(tids)

    # asyncio tasks (pyattach_walk_tasks).
    def tasks(self, debug_addr=None, limit=MAX_TASKS):
        """Every asyncio task as a TaskList (Tasks.tasks)."""
        return self.task_reader.tasks(debug_addr, limit)

    # Frames, code objects, locals (pyattach_walk_frames).
    def frames(self, tstate, max_frames=None):
        """The Python frames of a thread, innermost first, as a FrameList
        (Runtime.frames; max_frames: the walker's when None)."""
        return self.runtime_reader.frames(tstate, max_frames)

    def entry_frame(self, tstate):
        return self.frame_reader.entry_frame(tstate)

    def _frame_of(self, ref):
        return self.frame_reader._frame_of(ref)

    def code(self, addr):
        """The code object at addr (CodeReader.read)."""
        return self.readers.code.read(addr)

    def bytecode_start(self, frame, code, c):
        return self.frame_reader.bytecode_start(frame, code, c)

    def locals(self, fr):
        """A frame's locals as (name, repr) (FrameReader.locals)."""
        return self.frame_reader.locals(fr)

    def lookup_name(self, fr, name):
        return self.frame_reader.lookup_name(fr, name)

    def local_values(self, fr):
        return self.frame_reader.local_values(fr)

    # Thread states and exceptions (pyattach_walk_threads).
    def free_threaded(self):
        return self.thread_states.free_threaded()

    def gil(self, interp):
        return self.thread_states.gil(interp)

    def collecting(self, interp):
        return self.thread_states.collecting(interp)

    def interpreter_id(self, interp):
        return self.thread_states.interpreter_id(interp)

    def python_names(self, interp):
        return self.thread_states.python_names(interp)

    def thread_infos(self):
        """{thread state address: ThreadInfo} for every thread state
        listed (threads)."""
        return self.thread_states.infos(self.threads())

    def exception(self, tstate):
        """The exception the thread handles (ExceptionReader.exception)."""
        return self.exceptions.exception(tstate)

    # Objects (pyattach_read_*).
    def string(self, addr):
        """A str object's value ("<?>" when it cannot be decoded)."""
        return self.readers.strs.value(addr)

    def str_state(self, addr):
        return self.readers.strs.state(addr)

    def str_prefix(self, addr, limit):
        return self.readers.strs.prefix(addr, limit)

    def type_of(self, addr):
        """(type name, whether it is a static type) of the object at addr."""
        return self.readers.types.name_static(addr)

    def type_name(self, addr):
        """tp_name of the type of the object at addr."""
        return self.readers.types.name_of(addr)

    def int_value(self, addr):
        return self.readers.ints.value(addr)

    def bytes_obj(self, addr):
        """A bytes object's value (b"" for NULL or one larger than a line
        table is read)."""
        return self.readers.bytes.value(addr, MAX_LINETABLE)

    def value_repr(self, addr, limit=MAX_REPR):
        """repr() of the object at addr (pyattach_read_repr.value_repr)."""
        return value_repr(self.readers, addr, limit)

    def builtin_function(self, addr):
        return self.readers.callables.builtin(addr)

    def builtin_method(self, addr):
        return self.readers.callables.builtin_c_function(addr)

    def builtin_call_line(self, addr):
        return self.readers.callables.builtin_line(addr)

    def method_wrapper(self, addr):
        return self.readers.callables.wrapper(addr)

    def wrapper_call_line(self, addr):
        return self.readers.callables.wrapper_line(addr)

    def dict_entries(self, keys, values=0):
        """(key, value) addresses of a dict keys table, in order."""
        return self.readers.dicts.entries(keys, values)

    def dict_items(self, d):
        """(key, value) addresses of the dict object at d."""
        return self.readers.dicts.items(d)

    def str_lookup(self, items, name):
        """The value of the str key name among items, or 0."""
        return self.readers.dicts.str_lookup(items, name, self.readers.strs)

    def instance_items(self, obj):
        """(key, value) addresses of an instance's attributes."""
        return self.readers.instances.items(obj)


def open_walker(read, runtime, version, flags="", tables=None, budget=None, max_frames=MAX_FRAMES):
    """The Walker of a target, whichever adapter reads it: read(addr,
    size) its memory, runtime _PyRuntime's address, version and flags
    its interpreter's, tables the offset tables (load_tables() when
    None)."""
    if tables is None:
        tables = load_tables()
    layout = Layout.for_version(version, flags, tables, read=read, runtime=runtime)
    return Walker(read, runtime, layout, budget=budget, max_frames=max_frames)


def target_version(given, read, py_version, debugger):
    """The interpreter's version: given (what pyattach knew), else read
    from Py_Version at py_version (3.11+: PY_VERSION_HEX; None when the
    symbol is not there); raises WalkError when neither."""
    if given:
        return given
    if py_version:
        return version_from_hex(int.from_bytes(read(py_version, 4), "little"))
    raise WalkError("the Python version is not known; start %s through pyattach" % debugger)
