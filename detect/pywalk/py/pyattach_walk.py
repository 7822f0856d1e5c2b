"""pyattach's memory-only walker of Python stacks.

Shared by the gdb and lldb adapters: it is given a function that reads
the inferior's memory, the address of _PyRuntime, the Python version and
a table of struct offsets (generated from real builds' DWARF by pyattach),
and reads interpreters, threads, frames and code objects from memory
alone: no DWARF, no CPython headers, no code run in the inferior.

This module is the walker's face: Walker, and every name the adapters
and tests use, re-exported. The work is done in one module per concern,
each reading through the same memory (Walker.read) and Layout:

  pyattach_walk_text     escape() for every string from the target, bounds
  pyattach_walk_memory   reads of the inferior's memory, Budget, WalkError
  pyattach_walk_layout   Layout: offset tables and _Py_DebugOffsets
  pyattach_walk_runtime  interpreters, thread states
  pyattach_walk_match    which thread state each OS thread runs in
  pyattach_walk_threads  thread names (threading), interpreter, GIL, state
  pyattach_walk_frames   frames, code objects, line numbers, locals
  pyattach_walk_native   which C frames run which Python frames (eval loop)
  pyattach_walk_objects  str, bytes, int, float, type names, value reprs
  pyattach_walk_source   the target's source files, read as it reads them
  pyattach_walk_format   what py-bt, py-list, py-locals, py-up print
  pyattach_walk_commands the commands' text, whichever debugger runs them
  pyattach_walk_dump     what `pyattach dump` reports of each OS thread
  pyattach_walk_tasks    asyncio tasks, their coroutine stacks and awaits
"""

from pyattach_walk_commands import (  # noqa: F401
    BT_ALL_USAGE, BT_USAGE, NO_FRAME, TASKS_USAGE, UsageError, bt_args, frame_command, no_args, py_bt, py_bt_full,
    py_exc, py_tasks, py_threads, tasks_args, thread_line, thread_numbers)
from pyattach_walk_dump import (  # noqa: F401
    dump_threads, exception_of, write_dump)
from pyattach_walk_format import (  # noqa: F401
    NOT_READ_LINE, format_frames, format_full, format_list, format_locals, format_print, format_summary,
    interpreter_line, not_read_line,
    move_selection, omitted_line, parse_list_args)
from pyattach_walk_frames import (  # noqa: F401
    MAX_FRAMES, Frame, FrameList, Frames, executable_mask, frame_owner_skipped)
from pyattach_walk_layout import (  # noqa: F401
    DEBUG_COOKIE, DEBUG_OFFSETS_EXTRA, DEBUG_OFFSETS_FIELDS, DEBUG_OFFSETS_MEMBERS,
    Layout, debug_offsets_layout, load_tables, read_debug_offsets, version_from_hex)
from pyattach_walk_memory import (  # noqa: F401
    MAX_BYTES, MAX_READS, TIMEOUT, Budget, BudgetExhausted, Memory, WalkError)
from pyattach_walk_native import (  # noqa: F401
    COLLECTING, EVAL_LOOP, HELPERS, WAITING_FOR_GIL, StackMerger, base_name, eval_groups, is_eval_loop, is_helper,
    merge_stack, native_kind)
from pyattach_walk_objects import Objects, long_from_digits, long_sign_ndigits  # noqa: F401
from pyattach_walk_match import OSThread, match_stacks, match_thread, match_threads, namespace_tid  # noqa: F401
from pyattach_walk_runtime import Runtime, Thread  # noqa: F401
from pyattach_walk_source import (  # noqa: F401
    ANYONE, MAX_SOURCE_BYTES, MAX_SOURCE_LINE, SourceFiles, may_access, open_source,
    process_creds, process_files, source_line, source_lines)
from pyattach_walk_threads import (  # noqa: F401
    MAX_TRACEBACK, NO_GIL, STATES, Exceptions, ThreadInfo, Threads, exception_lines, facts_header,
    kernel_view, known_thread_infos, thread_facts, thread_header, thread_state)
from pyattach_walk_tasks import (  # noqa: F401
    ASYNCIO_DEBUG_MEMBERS, MAX_TASKS, Task, TaskList, Tasks, asyncio_debug_fields, find_cycles, format_tasks,
    frame_states, tasks_json)
from pyattach_walk_text import MAX_REPR, TRUNCATED, bounded, escape, has_controls, thousands  # noqa: F401

__all__ = ["Walker", "Layout", "WalkError", "BudgetExhausted", "Budget", "load_tables", "format_frames", "process_files", "source_line", "escape"]
# Re-exported for the adapters and tests (pyflakes counts a name in
# __all__ as used).
__all__ += [
    # pyattach_walk_commands
    "BT_ALL_USAGE", "BT_USAGE", "NO_FRAME", "TASKS_USAGE", "UsageError", "bt_args", "frame_command", "no_args",
    "py_bt", "py_bt_full", "py_exc", "py_tasks", "py_threads", "tasks_args", "thread_line", "thread_numbers",
    # pyattach_walk_dump
    "dump_threads", "exception_of", "write_dump",
    # pyattach_walk_format
    "NOT_READ_LINE", "format_full", "format_list", "format_locals", "format_print", "format_summary",
    "interpreter_line", "not_read_line", "move_selection", "omitted_line", "parse_list_args",
    # pyattach_walk_frames
    "Frame", "FrameList", "executable_mask", "frame_owner_skipped",
    # pyattach_walk_layout
    "DEBUG_COOKIE", "DEBUG_OFFSETS_EXTRA", "DEBUG_OFFSETS_FIELDS", "DEBUG_OFFSETS_MEMBERS",
    "debug_offsets_layout", "read_debug_offsets", "version_from_hex",
    # pyattach_walk_memory
    "MAX_BYTES", "MAX_READS", "TIMEOUT",
    # pyattach_walk_native
    "COLLECTING", "EVAL_LOOP", "HELPERS", "WAITING_FOR_GIL", "StackMerger", "base_name", "eval_groups",
    "is_eval_loop", "is_helper", "merge_stack", "native_kind",
    # pyattach_walk_objects
    "long_from_digits", "long_sign_ndigits",
    # pyattach_walk_match
    "OSThread", "match_stacks", "match_thread", "match_threads", "namespace_tid",
    # pyattach_walk_runtime
    "Thread",
    # defined here
    "open_walker", "target_version",
    # pyattach_walk_source
    "ANYONE", "MAX_SOURCE_BYTES", "MAX_SOURCE_LINE", "SourceFiles", "may_access", "open_source",
    "process_creds", "source_lines",
    # pyattach_walk_threads
    "MAX_TRACEBACK", "NO_GIL", "STATES", "ThreadInfo", "exception_lines", "facts_header", "kernel_view",
    "known_thread_infos", "thread_facts", "thread_header", "thread_state",
    # pyattach_walk_tasks
    "ASYNCIO_DEBUG_MEMBERS", "MAX_TASKS", "Task", "TaskList", "asyncio_debug_fields", "find_cycles",
    "format_tasks", "frame_states", "tasks_json",
    # pyattach_walk_text
    "MAX_REPR", "TRUNCATED", "bounded", "has_controls", "thousands",
]


class Walker(Runtime, Threads, Exceptions, Tasks, Frames, Objects, Memory):
    """Reads Python stacks through read(addr, size) -> bytes."""

    def __init__(self, read, runtime, layout, ptr_size=8, budget=None, max_frames=MAX_FRAMES):
        self._read = read
        self.runtime = runtime
        self.L = layout
        self.ptr = ptr_size
        self._codes = {}
        self.max_frames = max_frames
        self.begin(budget)

    def begin(self, budget=None, max_frames=None):
        """Starts a walk: a fresh budget (budget, else one with the same
        limits as the last), thread states read again."""
        if budget is None:
            old = getattr(self, "budget", None) or Budget()
            budget = Budget(old.max_reads, old.timeout, old.max_bytes)
        self.budget = budget
        if max_frames is not None:
            self.max_frames = max_frames
        self._threads = None
        self._os_threads = None
        self.listing_cut = None
        self.cuts = []

    def stopped(self):
        """Why this walk's output is partial, or None when it is not:
        listing cut short, the budget used up, or what could not be read
        (cuts: an interpreter, another interpreter's frames of a thread)."""
        reasons = [r for r in [self.listing_cut] + self.cuts + [self.budget.exhausted] if r]
        return "; ".join(reasons) or None



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
