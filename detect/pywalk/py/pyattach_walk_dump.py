"""What `pyattach dump` reports of a process, whichever debugger (or
none) reads its memory: each OS thread's facts (thread_facts), its
Python frames with their locals and source lines, the exception it
handles and, when the adapter unwinds them, its C frames.

An adapter lists the process's OS threads as OSThread values, matches
them to thread states (pyattach_walk_match.match_threads) and calls
write_dump."""

from pyattach_walk_commands import thread_numbers
from pyattach_walk_frames import FrameList
from pyattach_walk_json import dumps
from pyattach_walk_memory import BudgetExhausted, WalkError
from pyattach_walk_native import merge_stack
from pyattach_walk_source import source_line, source_lines_at
from pyattach_walk_tasks import MAX_LISTED, MAX_TASKS, format_tasks, running_tasks, tasks_json
from pyattach_walk_text import thousands
from pyattach_walk_threads import kernel_view, known_thread_infos, thread_facts


def exception_of(w, t):
    """The exception thread state t handles (Walker.exception), None when
    it handles none or it cannot be read."""
    if t is None or w.budget.exhausted:
        return None
    try:
        return w.exception(t.tstate)
    except WalkError:
        return None


def core_view(kernel, tid):
    """The kernel view (as kernel_view gives it) of thread tid of a core
    from kernel, the system calls pyattach read from the core's
    registers: None when it did not say."""
    if not kernel or not tid:
        return None
    v = kernel.get(tid)
    if not isinstance(v, tuple) or len(v) != 2:
        return None
    return v


def stack_of(entry, frames):
    """A thread's merged stack (merge_stack) from its dump entry (with
    "native") and its Frame values: (stack, None), or (None, why) when
    the Python frames cannot be matched to the C frames."""
    if entry.get("partial"):
        return None, "the Python stack was not read to its end"
    if entry.get("frames_omitted"):
        return None, "%s Python frames are not shown" % thousands(entry["frames_omitted"])
    if entry.get("error"):
        return None, "the Python stack could not be read"
    return merge_stack(frames, entry["native"])


def read_thread(w, t, with_locals):
    """Thread state t's Python frames (Frame values), their dicts (with
    locals when asked), the exception it handles and the entry's flags
    (error, frames_omitted, frames_omitted_at, partial)."""
    flags = {}
    frames = []
    if w.budget.exhausted:
        flags["partial"] = True
        return frames, [], None, flags
    try:
        frames = w.thread_frames(t)
    except BudgetExhausted:
        frames = FrameList()
        frames.partial = True
    except WalkError as e:
        flags["error"] = str(e)
        frames = []
    if getattr(frames, "error", None):
        flags["error"] = frames.error
    if getattr(frames, "omitted", 0):
        flags["frames_omitted"] = frames.omitted
        flags["frames_omitted_at"] = frames.gap
    if getattr(frames, "partial", False):
        flags["partial"] = True
    dicts = []
    for fr in frames:
        d = fr.as_dict()
        if with_locals:
            try:
                d["locals"] = [[n, v] for n, v in w.locals(fr)]
            except WalkError:
                pass
        dicts.append(d)
    return frames, dicts, exception_of(w, t), flags


def dump_threads(w, pid, threads, states, live, files, source=False, with_locals=False,
                 native=None, detach=None, tasks=None, kernel=None, settle=None):
    """Every OS thread's entry (see write_dump), in the order of threads
    (OSThread values); states maps a native_tid to its thread state.
    native(os_thread) returns the thread's C frames when the adapter
    unwinds them. Source lines are read once every stack is: detach()
    is called first when given (a stopped process), so that no read of
    a file it names keeps it stopped. Returns (entries, why the output is partial
    or None). A live thread's state comes from /proc (kernel_view); a
    core's (or a live process's read while it was stopped) from kernel,
    {tid: (syscall number or None, first argument or None)} as pyattach
    read it, through the same rule (thread_state); a thread kernel
    lacks has none.

    settle(read, key), when given, reads a thread of a running process:
    it calls read() (which reads the thread's stack) until what it read
    holds still, and returns (read()'s value, None), or (None, tries)
    when it never did: the entry then says "unsettled": tries and has
    no frames. key is (OS thread id, thread state address) for a
    thread, None for the tasks."""
    infos = known_thread_infos(w)
    result = []
    done = 0
    for ot in threads:
        t = states.get(ot.native_tid)
        if live:
            view = kernel_view(pid, ot.tid) if ot.tid else None
        else:
            view = core_view(kernel, ot.tid)
        entry = thread_facts(w, ot.tid, ot.os_name, t, infos, view)
        frames, exc = [], None
        entry["frames"] = []
        if t is not None:
            # What a read that did not settle found cut short (a frame
            # read as zeros as the stack moved) is not kept.
            mark = len(w.cuts)

            def read(t=t, mark=mark):
                del w.cuts[mark:]
                return read_thread(w, t, with_locals)
            got, tries = (read(), None) if settle is None else settle(read, (ot.tid, t.tstate))
            if tries:
                del w.cuts[mark:]
                entry["unsettled"] = tries
            else:
                frames, entry["frames"], exc, flags = got
                entry.update(flags)
        entry["exception"] = exc
        if native is not None:
            entry["native"] = native(ot)
            entry["stack"], entry["stack_unmerged"] = stack_of(entry, frames)
        result.append(entry)
        if not entry.get("partial"):
            done += 1
    tl = None
    if tasks is not None:
        # tasks: {"debug": the .AsyncioDebug section's address (3.14+),
        # "limit": how many tasks are reported}.
        limit = tasks.get("limit", MAX_TASKS)

        def read_tasks():
            return w.tasks(tasks.get("debug"), limit if limit else MAX_LISTED)
        tl, tries = (read_tasks(), None) if settle is None else settle(read_tasks, None)
        if tries:
            return result, w.stopped(), {"tasks_unsettled": tries}
        by_tstate = running_tasks(tl)
        tid_of = thread_numbers(threads, states, lambda ot: ot.tid)
        for ot, entry in zip(threads, result):
            t = states.get(ot.native_tid)
            task = by_tstate.get(t.tstate) if t is not None else None
            if task is not None:
                entry["task"] = {"id": task.id, "name": task.name}
    why = w.stopped()
    if why:
        why = "%s; stacks of %s of %s threads read" % (why, thousands(done), thousands(len(threads)))
    if source and (tl is not None or any(e["frames"] for e in result)) and detach is not None:
        detach()
    if source:
        add_sources(result, files)
    if tl is not None:
        extra = tasks_json(tl, tid_of)
        extra["tasks_text"] = format_tasks(tl, files, with_source=source, source_line=source_line, tid_of=tid_of)
        return result, why, extra
    return result, why


def add_sources(entries, files):
    """Gives each frame of entries (dump_threads' entries) its source
    line, read from files (SourceFiles). A deep stack runs the same
    lines again and again: each file is read once, up to the last line
    wanted of it."""
    wanted = {}
    for entry in entries:
        for d in entry["frames"]:
            n = d["line"]
            if n is not None and n >= 1:
                wanted.setdefault(d["file"], set()).add(n)
    lines = {}
    for name, ns in wanted.items():
        for n, text in source_lines_at(name, ns, files).items():
            lines[(name, n)] = text
    for entry in entries:
        for d in entry["frames"]:
            d["source"] = lines.get((d["file"], d["line"]))


def frame_runs(frames):
    """frames (dicts) with each run of equal frames written once, its
    "repeat" the number of copies that follow it: a deep recursion is
    thousands of one frame, and pyattach puts the copies back."""
    out = []
    prev = None
    for d in frames:
        if prev is not None and d == prev:
            out[-1]["repeat"] = out[-1].get("repeat", 0) + 1
            continue
        prev = d
        out.append(dict(d))
    return out


def write_dump(path, budget, run, errors=(), extra=None):
    """Writes dump's JSON to path: {"threads": [...], "truncated": why,
    "error": ..., "cost": {"reads", "bytes", "seconds"}}. run() returns
    dump_threads' (entries, why) or (entries, why, tasks: its keys
    added to the output); a WalkError or one of errors (the
    adapter's own) becomes "error". budget is the Budget whose reads are
    reported, or a function returning it; extra() returns more keys of
    "cost"."""
    out = {"threads": []}
    try:
        got = run()
        out["threads"], why = got[0], got[1]
        if len(got) > 2:
            out.update(got[2])
        if why:
            out["truncated"] = why
    except (WalkError,) + tuple(errors) as e:
        out["error"] = str(e)
    if callable(budget):
        budget = budget()
    out["cost"] = {"reads": budget.reads, "bytes": budget.bytes, "seconds": budget.elapsed()}
    if extra is not None:
        out["cost"].update(extra())
    for entry in out["threads"]:
        if len(entry.get("frames") or ()) > 1:
            entry["frames"] = frame_runs(entry["frames"])
    # json.dumps's text, encoded in C at once (json.dump would encode in
    # Python, piece by piece), without importing json (pyattach_walk_json).
    text = dumps(out)
    with open(path, "w") as f:
        f.write(text)
