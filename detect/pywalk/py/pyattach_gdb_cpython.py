"""Taking over CPython's own gdb commands (its extension, libpython.py
or python3.X-gdb.py, registers py-bt, py-list, py-locals, ...): running
one to keep its output where it reads the frames, and telling when the
walker must answer instead."""

import os

import pyattach_gdb_inferior as inferior
import pyattach_walk as walk


def command_class(name="PyBacktrace"):
    """One of CPython's command classes (PyBacktrace for py-bt), when its
    extension was sourced or auto-loaded: gdb runs it in __main__."""
    import __main__

    return getattr(__main__, name, None)


FAILED = (
    "Unable to locate python frame",
    "(unable to read python frame information)",
    "(frame information optimized out)",
)


def run(cls, args, from_tty):
    """CPython's output for one of its commands, or None when it raised,
    or when the walker must answer instead: the output holds controls
    (walk.has_controls), or a frame's name or file does (a newline in
    a name would fake a frame line). CPython's extension opens the
    source files the target names with open(): while it runs, its open
    is the walker's (within the process's root, as its user, bounded,
    escaped lines)."""
    import io
    import sys

    import __main__

    cmd = cls.__new__(cls)
    old = sys.stdout
    buf = io.StringIO()
    sys.stdout = buf
    had = "open" in __main__.__dict__
    saved = __main__.__dict__.get("open")
    __main__.open = _source_opener(inferior.files())
    try:
        cmd.invoke(args, from_tty)
    except Exception:
        return None
    finally:
        sys.stdout = old
        if had:
            __main__.open = saved
        else:
            del __main__.open
    out = buf.getvalue()
    if any(walk.has_controls(line) for line in out.split("\n")) or not _names_printable():
        return None
    return out


def _source_opener(files):
    """An open() for CPython's extension: it reads the target's source
    files only, through walk.source_lines, with each line escaped."""
    import errno
    import io

    def open_(name, mode="r", *args, **kwargs):
        lines = walk.source_lines(os.fsdecode(name), files, 1 << 30)
        if lines is None:
            raise IOError(errno.EACCES, "not a regular file the process may read")
        return io.StringIO("".join(walk.escape(l) + "\n" for l in lines))

    return open_


def _names_printable():
    """Whether the selected thread's Python frames (as the walker reads
    them) have names and files without controls (walk.has_controls); True when the
    walker cannot read them."""
    try:
        w = inferior.walker()
        t = inferior.current_thread_state(w)
        frames = w.frames(t.tstate) if t is not None else []
    except walk.WalkError:
        return True
    for fr in frames:
        for s in (fr.filename, fr.name, fr.qualname):
            if walk.has_controls(s):
                return False
    return True


# What CPython's commands print when they cannot read the frame: the
# walker answers instead.
MORE_FAILED = FAILED + (
    "Unable to locate gdb frame for python bytecode interpreter",
    "Unable to read information on python frame",
    "Unable to read python frame line number",
)
