"""The walker's commands as text, whichever debugger runs them: py-bt,
py-bt-full, py-list, py-locals, py-print, py-up, py-down, py-exc,
py-threads and py-tasks, and their arguments. An adapter lists threads
(pyattach_walk_match.OSThread) and frames, calls these, and prints what
they return; every string from the target is escaped on the way
(pyattach_walk_format, pyattach_walk_text.escape)."""

from pyattach_walk_format import format_frames, format_full, format_list, format_locals, format_print, format_summary
from pyattach_walk_format import move_selection, selected_index
from pyattach_walk_tasks import format_tasks
from pyattach_walk_source import source_line
from pyattach_walk_threads import exception_lines, facts_header, kernel_view, known_thread_infos, thread_facts

# What a command prints where the thread runs no Python (CPython's words).
NO_FRAME = "Unable to locate python frame\n"

BT_USAGE = "usage: py-bt [--max-frames N] (N frames kept, 0 for all)"
BT_ALL_USAGE = "usage: py-bt [all] [--max-frames N] (N frames kept, 0 for all)"
TASKS_USAGE = "usage: py-tasks [--max-tasks N] (N tasks shown, 0 for all)"


class UsageError(ValueError):
    """A command's arguments do not parse; str() is its usage line."""


def bt_args(argv, allow_all=False):
    """(every thread, max frames or None) from py-bt's arguments (split
    by the debugger): [all] (where allow_all) and --max-frames N (or
    --max-frames=N, 0 for all). Raises UsageError."""
    every, n = False, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "all" and allow_all:
            every = True
        elif a == "--max-frames" and i + 1 < len(argv) and argv[i + 1].isdigit():
            n = int(argv[i + 1])
            i += 1
        elif a.startswith("--max-frames=") and a.split("=", 1)[1].isdigit():
            n = int(a.split("=", 1)[1])
        else:
            raise UsageError(BT_ALL_USAGE if allow_all else BT_USAGE)
        i += 1
    return every, n


# A limit of "0 for all" as the walker takes it.
_ALL = 1 << 62


def tasks_args(argv, default):
    """How many tasks py-tasks lists: default, or N of --max-tasks N (0:
    all). Raises UsageError."""
    if not argv:
        return default
    if len(argv) == 2 and argv[0] == "--max-tasks" and argv[1].isdigit():
        return int(argv[1]) or _ALL
    raise UsageError(TASKS_USAGE)


def no_args(args, command):
    """Raises UsageError when a command that takes no arguments got some."""
    if (args or "").strip():
        raise UsageError("usage: %s (no arguments)" % command)


def thread_numbers(threads, states, number):
    """The tid map of py-tasks and dump: a thread state's address -> the
    number the debugger shows for its OS thread (number(OSThread)).
    states maps a native_tid to its thread state (match_threads)."""
    out = {}
    for ot in threads:
        t = states.get(ot.native_tid)
        if t is not None:
            out[t.tstate] = number(ot)
    return out


def py_tasks(w, debug, limit, files, numbers):
    """py-tasks: the asyncio tasks (Walker.tasks; debug is the
    .AsyncioDebug section's address or None) as a tree (format_tasks).
    numbers() gives the tid map (thread_numbers): asked only when a task
    runs on a thread."""
    tl = w.tasks(debug, limit)
    tid_of = numbers() if any(t.running is not None for t in tl) else {}
    return format_tasks(tl, files, source_line=source_line, tid_of=tid_of)


def py_bt(frames, files, natives=None):
    """py-bt of one thread: its Python frames (Walker.thread_frames) in
    CPython's traceback, with the C frames CPython shows (natives, see
    format_frames); NO_FRAME when it has none."""
    if not frames:
        return NO_FRAME
    return format_frames(frames, files, natives=natives)


def py_bt_full(w, frames, levels, natives, files):
    """py-bt-full (format_full); NO_FRAME without frames."""
    if not frames:
        return NO_FRAME
    return format_full(w, frames, levels, natives, files)


def py_exc(w, t):
    """py-exc: the exception thread state t handles, as lines; None when
    t is None (the thread runs no Python)."""
    if t is None:
        return None
    return "".join(line + "\n" for line in exception_lines(w.exception(t.tstate)))


def thread_line(w, pid, live, ot, t, infos, selected, number):
    """One OS thread's line in py-threads (and lldb's py-bt all): "*" on
    the selected thread, the debugger's number for it, then its facts
    (facts_header)."""
    kernel = kernel_view(pid, ot.tid) if live and ot.tid else None
    f = thread_facts(w, ot.tid, ot.os_name, t, infos, kernel)
    return "%s %d %s\n" % ("*" if selected else " ", number, facts_header(f))


def py_threads(w, pid, live, threads, states, selected, number):
    """py-threads: one line per OS thread (thread_line), in the order of
    threads; selected(OSThread) and number(OSThread) as the debugger
    says."""
    infos = known_thread_infos(w)
    return "".join(thread_line(w, pid, live, ot, states.get(ot.native_tid), infos, selected(ot), number(ot))
                   for ot in threads)


def frame_command(w, command, frames, index, args="", files=None, natives=None):
    """py-list, py-locals, py-print, py-up or py-down on a thread's Python
    frames (innermost first) with frames[index] selected (-1: the C code
    the innermost one called, as CPython's py-up sees it; (i, k): the C
    frame line natives[i][k], see move_selection). Returns (text, the
    index py-up or py-down selects, or None)."""
    if not frames:
        return NO_FRAME, None
    if command in ("py-list", "py-locals", "py-print"):
        i = selected_index(frames, index)
        fr = frames[i]
        if command == "py-list":
            return format_list(fr, args, files), None
        if command == "py-print":
            return format_print(w, fr, (args or "").strip()), None
        return format_locals(w, frames, i), None
    j, msg = move_selection(frames, index, command == "py-up", natives)
    if j is None:
        return msg, None
    if isinstance(j, tuple):
        return "#%d %s\n" % natives[j[0]][j[1]], j
    return format_summary(w, j, frames[j], files), j
