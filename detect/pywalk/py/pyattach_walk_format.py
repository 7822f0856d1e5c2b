"""What the walker's commands print, in CPython's formats: py-bt's
traceback, py-list, py-locals, and the frame summary of py-up and
py-down. Every string from the target is printed through escape()."""

from pyattach_walk_memory import WalkError
from pyattach_walk_source import MAX_SOURCE_LINE, SourceFiles, source_line, source_lines
from pyattach_walk_text import bounded, escape, thousands


def omitted_line(n):
    """The line that stands for n frames not shown."""
    return "  ... %s frame%s not shown ..." % (thousands(n), "" if n == 1 else "s")


# CPython's py-locals line for a caller frame it cannot read.
UNABLE_READ_FRAME = "Unable to read information on python frame"

# The line after the frames of a stack not read to its end.
NOT_READ_LINE = "  ... stack not read further: the walk stopped ..."


def not_read_line(error=None):
    """NOT_READ_LINE, or with error (a FrameList's) why the stack ends."""
    if error:
        return "  ... stack not read further: %s ..." % escape(error)
    return NOT_READ_LINE


def format_frames(frames, files=None, with_source=True, natives=None):
    """Frames as CPython's py-bt prints them, the target's strings
    escaped, source lines read through files (a SourceFiles); a
    FrameList's omitted frames as one line where they were, a partial
    one's end marked (and why, when an interpreter's frames could not be
    read). When the frames come from several interpreters (a thread that
    called into a subinterpreter), each interpreter's are headed by
    interpreter_line. natives maps a frame's index to the lines of C
    frames CPython's py-bt shows before it ("<built-in method ...>",
    "Waiting for the GIL"), each as (level, text); index len(frames)
    holds those after the last."""
    files = files or SourceFiles()
    natives = natives or {}
    out = ["Traceback (most recent call first):"]
    omitted, gap = getattr(frames, "omitted", 0), getattr(frames, "gap", 0)
    labelled = len(set(getattr(fr, "interp", None) for fr in frames)) > 1
    for i, fr in enumerate(frames):
        if omitted and i == gap:
            out.append(omitted_line(omitted))
        if labelled and (i == 0 or fr.interp != frames[i - 1].interp):
            out.append(interpreter_line(fr.interp))
        out.extend("  " + text for _, text in natives.get(i, ()))
        line = "?" if fr.lineno is None else str(fr.lineno)
        out.append('  File "%s", line %s, in %s' % (escape(fr.filename), line, escape(fr.name)))
        if with_source:
            src = source_line(fr.filename, fr.lineno, files)
            if src:
                out.append("    " + escape(src))
    if omitted and gap >= len(frames):
        out.append(omitted_line(omitted))
    out.extend("  " + text for _, text in natives.get(len(frames), ()))
    if getattr(frames, "partial", False):
        out.append(not_read_line(getattr(frames, "error", None)))
    return "\n".join(out) + "\n"


def interpreter_line(interp):
    """The line above the frames a thread runs in one interpreter, when
    its stack spans several (a call into a subinterpreter)."""
    return "  In interpreter %s:" % ("?" if interp is None else interp)


def format_locals(w, frames, index):
    """py-locals from frames[index] (innermost first) in CPython's
    format: "name = repr" lines. From 3.11 on, as CPython's, each frame
    under a "Locals for NAME" line, going on with its callers up to the
    outermost frame the same call of the C eval loop runs (Frame.entry);
    a caller whose locals cannot be read ends it with CPython's message."""
    out = []
    for i in range(index, len(frames)):
        fr = frames[i]
        try:
            pairs = list(w.locals(fr))
        except WalkError:
            if i == index:
                raise
            out.append(UNABLE_READ_FRAME)
            break
        if w.L.minor >= (3, 11):
            out.append("Locals for %s" % escape(fr.name))
        for name, value in pairs:
            out.append("%s = %s" % (escape(name), value))
        if w.L.minor < (3, 11) or fr.entry:
            break
    return "\n".join(out) + "\n"


def parse_list_args(args):
    """py-list's arguments: none, START (11 lines from START) or
    START, END (inclusive); (None, None) for none."""
    # Imported here: re costs the direct reader ~10 ms to import, and
    # it never lists source.
    import re
    m = re.match(r"\s*(\d+)\s*,\s*(\d+)\s*$", args or "")
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.match(r"\s*(\d+)\s*$", args or "")
    if m:
        return int(m.group(1)), int(m.group(1)) + 10
    return None, None


def format_list(fr, args="", files=None):
    """py-list in CPython's format: the lines around the frame's current
    line (five either side, or START[, END]), each number right-aligned in
    four columns, the current one marked with ">"."""
    if fr.lineno is None:
        return "Unable to read python frame line number\n"
    start, end = parse_list_args(args)
    if start is None:
        start, end = fr.lineno - 5, fr.lineno + 5
    start = max(start, 1)
    lines = source_lines(fr.filename, files or SourceFiles(), end)
    if lines is None:
        return "Unable to open %s\n" % escape(fr.filename)
    out = []
    for n in range(start, min(end, len(lines)) + 1):
        mark = ">%d" % n if n == fr.lineno else str(n)
        out.append("%4s    %s\n" % (mark, escape(bounded(lines[n - 1], MAX_SOURCE_LINE))))
    return "".join(out)


def format_summary(w, index, fr, files=None):
    """What py-up and py-down print for the frame they select, as CPython
    does: "#INDEX Frame 0xADDR, for file F, line N, in NAME (locals)" and
    the source line. INDEX counts Python frames, innermost 0 (CPython's
    counts gdb's C frames)."""
    line = "?" if fr.lineno is None else str(fr.lineno)
    try:
        loc = ", ".join("%s=%s" % (escape(n), v) for n, v in w.locals(fr))
    except WalkError:
        loc = ""
    head = bounded("Frame 0x%x, for file %s, line %s, in %s (%s)" % (fr.addr, escape(fr.filename), line, escape(fr.name), loc))
    out = "#%d %s\n" % (index, head)
    src = source_line(fr.filename, fr.lineno, files or SourceFiles())
    if src:
        out += "    %s\n" % escape(src)
    return out


def move_selection(frames, index, up, natives=None):
    """(new index, message) for py-up/py-down from the selected index:
    None and CPython's message when there is no frame that way. With
    natives (see format_frames), they stop, as CPython's do, on each C
    frame line py-bt shows (a built-in method, a method-wrapper), whose
    index is (i, k) for natives[i][k]; -1 (the C code the innermost frame
    called) moves up to frames[0], as CPython's does."""
    stops = []
    for i in range(len(frames) + 1):
        stops.extend((i, k) for k in range(len((natives or {}).get(i, ()))))
        if i < len(frames):
            stops.append(i)
    if index == -1 or not frames:
        j = 0 if up and frames else None
    else:
        at = stops.index(index) if index in stops else stops.index(0)
        j = at + (1 if up else -1)
        j = stops[j] if 0 <= j < len(stops) else None
    if j is not None:
        return j, None
    if up:
        return None, "Unable to find an older python frame\n"
    return None, "Unable to find a newer python frame\n"


def selected_index(frames, index):
    """The index of the Python frame py-list, py-locals and py-print read
    at index (see move_selection): on a C frame line, the Python frame
    that called it; the outermost past it."""
    if isinstance(index, tuple):
        index = index[0]
    return min(max(index, 0), len(frames) - 1)


def format_full(w, frames, levels, natives, files=None):
    """py-bt-full in CPython's format: each Python frame as py-up prints
    it (format_summary) and each line of natives (see format_frames) as
    "#LEVEL TEXT", innermost first. levels[i] is the number shown for
    frames[i] (CPython's: the level of the C frame that runs it)."""
    out = []
    for i, fr in enumerate(frames):
        out.extend("#%d %s\n" % (level, text) for level, text in natives.get(i, ()))
        out.append(format_summary(w, levels[i], fr, files))
    out.extend("#%d %s\n" % (level, text) for level, text in natives.get(len(frames), ()))
    return "".join(out)


def format_print(w, fr, name):
    """py-print NAME in CPython's format: "local 'x' = 5" (else global,
    else builtin, as the frame sees the name), or "'x' not found"."""
    scope, addr = w.lookup_name(fr, name)
    if scope is None:
        return "%s not found\n" % escape(repr(name))
    return "%s %s = %s\n" % (scope, escape(repr(name)), w.value_repr(addr))
