"""gdb adapter of pyattach's memory-only Python stack walker: py-bt.

Loaded by the scripts pyattach writes; setup() takes what pyattach
already knows (version, ABI flags, the offsets, the process's root).
"""

import os

import gdb

import pyattach_gdb_bt
import pyattach_gdb_native
import pyattach_walk as walk

_config = {}
_walker = None


def setup(version="", flags="", root="", tables=None, runtime=None, creds=None, asyncio_debug=None):
    """Registers pyattach-bt, and py-bt (see PyBt). Called once, before
    the program is loaded; claim() runs again whenever CPython's own
    extension may have been loaded since and taken py-bt over. runtime
    is _PyRuntime's run-time address when pyattach computed it (then no
    symbol is looked up). creds is a core's (uid, gid, groups), whose
    permissions its source files are read with (a live process's are
    read from /proc)."""
    global _walker
    _config.update(version=version, flags=flags, root=root, runtime=runtime, creds=creds, asyncio_debug=asyncio_debug)
    _config["tables"] = tables
    # Called again for another target (a project .gdbinit's hook, after
    # each attach or load): the new facts replace the old, once set up.
    _walker = None
    if _config.get("set_up"):
        claim()
        return
    _config["set_up"] = True
    _parameters()
    PyattachBt("pyattach-bt")
    PyBt()
    pyattach_gdb_bt.register(lambda: walker(max_frames=0), current_thread_state)
    claim_more()
    for ev in ("new_objfile", "stop", "before_prompt"):
        reg = getattr(gdb.events, ev, None)
        if reg is not None:
            reg.connect(claim)


def claim(*_):
    """Takes py-bt back after CPython's extension registered its own."""
    if _cpython_bt() is not None and _claimed.get("cls") is not _cpython_bt():
        _claimed["cls"] = _cpython_bt()
        PyBt()
        claim_more()


_claimed = {}


def _cpython_bt():
    """CPython's PyBacktrace class, when its extension (libpython.py,
    python3.X-gdb.py) was sourced or auto-loaded: gdb runs those in
    __main__."""
    import __main__

    return getattr(__main__, "PyBacktrace", None)


_CPYTHON_FAILED = (
    "Unable to locate python frame",
    "(unable to read python frame information)",
    "(frame information optimized out)",
)


def _run_cpython_bt(cls, args, from_tty):
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
    __main__.open = _source_opener(_files())
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
        w = walker()
        t = current_thread_state(w)
        frames = w.frames(t.tstate) if t is not None else []
    except walk.WalkError:
        return True
    for fr in frames:
        for s in (fr.filename, fr.name, fr.qualname):
            if walk.has_controls(s):
                return False
    return True


# Thread names. A target names its threads itself (prctl PR_SET_NAME,
# threading in 3.14+), and gdb prints those names raw: in "info threads",
# the headers of "thread apply", stop notices. Each named thread gets its
# name, escaped (walk.escape), as its user-visible name (what "thread
# name" sets), which gdb prints instead. gdb prints a stop notice before
# Python hears of the stop, so the name is set for every thread, escaped
# or not, whenever a thread appears and after each stop: a notice shows
# the name the thread had at the last stop, never one set since.

# (inferior number, ptid) -> the name pyattach set for that thread.
_set_names = {}
# Threads the user named with "thread name": left alone.
_user_names = set()
_names_hooked = []


def escape_thread_names():
    """Sets every thread's name escaped, now, whenever a thread appears
    and whenever the program stops. pyattach's scripts call it for every
    target."""
    if not _names_hooked:
        _names_hooked.append(True)
        for ev in ("new_thread", "stop", "before_prompt"):
            reg = getattr(gdb.events, ev, None)
            if reg is not None:
                reg.connect(_escape_names)
    _escape_names()


def _escape_names(event=None):
    th = getattr(event, "inferior_thread", None)
    if th is not None:
        _escape_name(th)
        return
    for inf in gdb.inferiors():
        try:
            threads = inf.threads()
        except (gdb.error, RuntimeError):
            continue
        for th in threads:
            _escape_name(th)


def thread_name(th):
    """The name the target gave th, not the one pyattach set; None when
    it has none."""
    mine = _set_names.get((th.inferior.num, th.ptid))
    name = th.name
    if mine is None or name != mine:
        return name
    return _own_name(th, mine)


def _own_name(th, shown):
    """The target's name for th, whose user-visible name is shown."""
    th.name = None
    try:
        return th.name
    finally:
        th.name = shown


def _escape_name(th):
    try:
        if not th.is_valid():
            return
        key = (th.inferior.num, th.ptid)
        if key in _user_names:
            return
        mine = _set_names.get(key)
        shown = th.name
        if mine is not None and shown != mine:
            # "thread name NAME": the user's; "thread name": the target's again.
            if shown is not None and _own_name(th, shown) != shown:
                _user_names.add(key)
                del _set_names[key]
                return
        th.name = None
        name = th.name
        if name is None:
            _set_names.pop(key, None)
            return
        th.name = _set_names[key] = walk.escape(name)
    except (gdb.error, RuntimeError):
        pass


def _live(inf):
    """Whether gdb debugs a running process (not a core)."""
    return getattr(getattr(inf, "connection", None), "type", "") == "native"


def _native_tid(inf, tid):
    """A thread's id as CPython recorded it: in a live process's own PID
    namespace (a container's), the id gdb knows otherwise."""
    if tid and _live(inf):
        return walk.namespace_tid(inf.pid, tid)
    return tid


def _files():
    """How the selected inferior's source files are read (walk.SourceFiles)."""
    inf = gdb.selected_inferior()
    return walk.process_files(inf.pid, _live(inf), _config.get("root", ""), _config.get("creds"))


def _read(addr, size):
    return gdb.selected_inferior().read_memory(addr, size).tobytes()


def _symbol(name):
    try:
        return int(gdb.parse_and_eval("(unsigned long)&'%s'" % name))
    except gdb.error:
        return None


def _version():
    if _config.get("version"):
        return _config["version"]
    # 3.11+: Py_Version holds PY_VERSION_HEX.
    addr = _symbol("Py_Version")
    if addr:
        v = int.from_bytes(_read(addr, 4), "little")
        return "%d.%d.%d" % (v >> 24, (v >> 16) & 0xFF, (v >> 8) & 0xFF)
    raise walk.WalkError("the Python version is not known; start gdb through pyattach")


class _Limit(gdb.Parameter):
    """A limit of the walker's, "unlimited" or 0 for none."""

    def __init__(self, name, default, doc):
        self.__doc__ = doc
        self.set_doc = "Set " + doc[0].lower() + doc[1:]
        self.show_doc = "Show " + doc[0].lower() + doc[1:]
        super(_Limit, self).__init__(name, gdb.COMMAND_STACK, gdb.PARAM_ZUINTEGER_UNLIMITED)
        self.value = default

    def get_set_string(self):
        return ""

    def limit(self):
        """The value as the walker takes it: 0 for unlimited."""
        return 0 if self.value is None or self.value < 0 else self.value


_limits = {}


def _parameters():
    """set/show pyattach-max-frames, pyattach-max-reads, pyattach-timeout."""
    if _limits:
        return
    _limits["max_frames"] = _Limit("pyattach-max-frames", walk.MAX_FRAMES,
                                   "How many frames of a thread py-bt shows: the innermost half and the outermost half.")
    _limits["max_reads"] = _Limit("pyattach-max-reads", walk.MAX_READS,
                                  "How many memory reads one command of pyattach's walker may make.")
    _limits["timeout"] = _Limit("pyattach-timeout", int(walk.TIMEOUT),
                                "How many seconds one command of pyattach's walker may take.")


def _limit(name, default):
    p = _limits.get(name)
    return default if p is None else p.limit()


def walker(max_frames=None, budget=None):
    """A Walker for the current inferior (rebuilt when it changes), with a
    fresh budget for the command that asks (the gdb settings' limits
    unless given)."""
    w = _inferior_walker()
    if budget is None:
        budget = walk.Budget(max_reads=_limit("max_reads", walk.MAX_READS), timeout=_limit("timeout", walk.TIMEOUT))
    if max_frames is None:
        max_frames = _limit("max_frames", walk.MAX_FRAMES)
    w.begin(budget, max_frames)
    return w


def stopped_line(w):
    """The line that says the walk was cut, or ""."""
    why = w.stopped()
    return "pyattach: walk stopped: %s; output is partial\n" % why if why else ""


def max_frames_arg(args):
    """py-bt's --max-frames N (or --max-frames=N), None when absent."""
    argv = gdb.string_to_argv(args or "")
    n = None
    i = 0
    while i < len(argv):
        a = argv[i]
        val = None
        if a == "--max-frames" and i + 1 < len(argv):
            val = argv[i + 1]
            i += 1
        elif a.startswith("--max-frames="):
            val = a.split("=", 1)[1]
        if val is None or not val.isdigit():
            raise gdb.GdbError("usage: py-bt [--max-frames N] (N frames kept, 0 for all)")
        n = int(val)
        i += 1
    return n


def _inferior_walker():
    global _walker
    inf = gdb.selected_inferior()
    key = (inf.num, inf.pid)
    if _walker is not None and _walker[0] == key:
        return _walker[1]
    runtime = _config.get("runtime") or _symbol("_PyRuntime")
    if not runtime:
        raise walk.WalkError("no _PyRuntime symbol: is this a Python 3.7+ process?")
    tables = _config.get("tables") or walk.load_tables()
    layout = walk.Layout.for_version(_version(), _config.get("flags", ""), tables, read=_read, runtime=runtime)
    w = walk.Walker(_read, runtime, layout)
    _walker = (key, w)
    return w


def _pthread_of(thread):
    try:
        h = thread.handle()
        if h:
            return int.from_bytes(bytes(h), "little")
    # RuntimeError: no libthread_db for the inferior's glibc (a container's).
    except (gdb.error, AttributeError, TypeError, RuntimeError):
        pass
    try:
        return int(gdb.parse_and_eval("$fs_base"))
    except gdb.error:
        return None


def current_thread_state(w):
    th = gdb.selected_thread()
    if th is None:
        return None
    inf = gdb.selected_inferior()
    native = _native_tid(inf, th.ptid[1] or th.ptid[2]) or None
    t = w.thread_for(native_id=native, pthread_id=_pthread_of(th))
    if t is None:
        threads = w.os_threads()
        if len(threads) == 1 and len(gdb.selected_inferior().threads()) == 1:
            t = threads[0]
    return t


class PyattachBt(gdb.Command):
    """Print the Python stack of the selected thread, read from memory.

Usage: pyattach-bt [--max-frames N]

Works without debug information (stripped interpreters) and on optimised
builds whose eval loop hides its frame. Use "thread apply all py-bt"
for every thread. Of a stack deeper than N frames (default: "show
pyattach-max-frames", 4096; 0 for all) the innermost and outermost
halves are shown, with a line counting the frames between. One command
reads at most "pyattach-max-reads" times from memory, for at most
"pyattach-timeout" seconds; a last line says so when it stops there."""

    def __init__(self, name):
        super(PyattachBt, self).__init__(name, gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def invoke(self, args, from_tty):
        max_frames = max_frames_arg(args)
        frames = []
        try:
            w = walker(max_frames)
            t = current_thread_state(w)
            if t is not None:
                frames = w.thread_frames(t)
        except walk.BudgetExhausted:
            pass
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        if not frames:
            gdb.write("Unable to locate python frame\n")
        else:
            _, natives = _native_lines(w, frames)
            gdb.write(walk.format_frames(frames, _files(), natives=natives))
        gdb.write(stopped_line(w))


def _native_lines(w, frames):
    """pyattach_gdb_native.native_lines, none when they cannot be read."""
    try:
        return pyattach_gdb_native.native_lines(w, frames)
    except (walk.WalkError, gdb.error):
        return list(range(len(frames))), {}


class PyBt(PyattachBt):
    """Print the Python stack of the selected thread.

When CPython's own extension is loaded and reads every frame, its output
is printed (it also shows C functions called from Python); otherwise
pyattach's memory-only walker answers (stripped interpreters, optimised
3.13+ builds, no extension). "pyattach-bt" always runs the walker."""

    def __init__(self):
        super(PyBt, self).__init__("py-bt")

    def invoke(self, args, from_tty):
        cls = _cpython_bt()
        # CPython's py-bt takes no arguments: --max-frames is the walker's;
        # it reads one interpreter's frames: a thread in a subinterpreter
        # is the walker's.
        if cls is not None and max_frames_arg(args) is None and not _in_subinterpreter():
            out = _run_cpython_bt(cls, args, from_tty)
            if out and "  File " in out and not any(m in out for m in _CPYTHON_FAILED):
                gdb.write(out)
                return
        PyattachBt.invoke(self, args, from_tty)


def _in_subinterpreter():
    """Whether the selected thread runs in more than one interpreter
    (its thread state has outer ones: Walker.os_threads)."""
    try:
        t = current_thread_state(walker())
    except walk.WalkError:
        return False
    return t is not None and bool(t.outer)


# py-list, py-locals, py-up and py-down.

# The selected Python frame of each thread, by (inferior, thread) number:
# an index into the walker's frames, innermost 0. Forgotten whenever the
# inferior runs or stops.
_selection = {}

# What CPython's commands print when they cannot read the frame: the
# walker answers instead.
_CPYTHON_MORE_FAILED = _CPYTHON_FAILED + (
    "Unable to locate gdb frame for python bytecode interpreter",
    "Unable to read information on python frame",
    "Unable to read python frame line number",
)


# How the walker's answer starts when it cannot read the frame.
_WALKER_FAILED = ("pyattach: ", "Unable to locate python frame")


def _reset_selection(*_):
    _selection.clear()


def claim_more():
    """Registers py-list, py-locals, py-up and py-down (CPython's own
    answer when its extension is loaded and reads the frame, the walker's
    otherwise), their pyattach-* forms (always the walker's), and the
    reset of the selected Python frame."""
    for cls in _FRAME_COMMANDS:
        cls(cls.command, cpython=True)
    if _claimed.get("more"):
        return
    _claimed["more"] = True
    for cls in _FRAME_COMMANDS:
        cls("pyattach-" + cls.command[3:], cpython=False)
    for ev in ("cont", "stop"):
        reg = getattr(gdb.events, ev, None)
        if reg is not None:
            reg.connect(_reset_selection)


def _selected_frames():
    """The walker, the selection key, the selected thread's Python
    frames and the selected index."""
    w = walker()
    t = current_thread_state(w)
    if t is None:
        return w, None, [], 0
    frames = w.thread_frames(t)
    th = gdb.selected_thread()
    key = (gdb.selected_inferior().num, th.global_num if th is not None else 0)
    i = _selection.get(key)
    if i is None:
        # Nothing selected yet: -1 while gdb's selected frame is C code
        # that the innermost Python frame called (py-up selects that
        # frame, as CPython's does).
        i = -1 if _below_python() else 0
    if i >= len(frames):
        i = 0
    return w, key, frames, i


def _below_python():
    """Whether gdb's selected frame is newer than the thread's first eval
    loop frame (C code called from Python, or no Python at all)."""
    try:
        sel = gdb.selected_frame()
        f = gdb.newest_frame()
        while f is not None:
            if f == sel:
                return not walk.is_eval_loop(f.name() or "")
            if walk.is_eval_loop(f.name() or ""):
                return False
            f = f.older()
    except gdb.error:
        pass
    return False


def walker_answer(command, args=""):
    """The walker's output for py-list, py-locals, py-up or py-down."""
    try:
        w, key, frames, i = _selected_frames()
        if not frames:
            return "Unable to locate python frame\n"
        files = _files()
        if command == "py-bt-full":
            levels, natives = _native_lines(w, frames)
            return walk.format_full(w, frames, levels, natives, files)
        if command in ("py-list", "py-locals", "py-print"):
            fr = frames[max(i, 0)]
            if command == "py-list":
                return walk.format_list(fr, args, files)
            if command == "py-print":
                return walk.format_print(w, fr, (args or "").strip())
            return walk.format_locals(w, fr)
        j, msg = walk.move_selection(frames, i, command == "py-up")
        if j is None:
            return msg
        _selection[key] = j
        return walk.format_summary(w, j, frames[j], files)
    except walk.WalkError as e:
        return "pyattach: %s\n" % e


class _FrameCommand(gdb.Command):
    command = ""
    category = gdb.COMMAND_STACK

    def __init__(self, name, cpython=False):
        super(_FrameCommand, self).__init__(name, self.category, gdb.COMPLETE_NONE)
        self.cpython = cpython

    # Whether the walker answers first, CPython's extension only where
    # the walker cannot read the frame (py-locals: the walker's reprs are
    # at least as rich as CPython's).
    walker_first = False

    def invoke(self, args, from_tty):
        if self.cpython and self.walker_first:
            out = walker_answer(self.command, args)
            if not out.startswith(_WALKER_FAILED):
                gdb.write(out)
                return
        if self.cpython:
            import __main__

            cls = getattr(__main__, type(self).__name__, None)
            if cls is not None:
                try:
                    before = gdb.selected_frame()
                except gdb.error:
                    before = None
                out = _run_cpython_bt(cls, args, from_tty)
                if out and not any(m in out for m in _CPYTHON_MORE_FAILED) and not self._cpython_stuck(out):
                    gdb.write(out)
                    return
                # CPython's py-up or py-down selects the eval loop frame
                # it tried before it fails to read it: the walker's answer
                # starts from the frame selected before.
                try:
                    if before is not None and before.is_valid() and gdb.selected_frame() != before:
                        before.select()
                except gdb.error:
                    pass
        gdb.write(walker_answer(self.command, args))

    def _cpython_stuck(self, out):
        """Whether CPython's py-up or py-down found no frame to move to
        where the walker finds one (a stripped build: CPython's sees the
        eval loop by its exported name, not the frames it runs)."""
        if self.command not in ("py-up", "py-down") or not out.startswith("Unable to find a"):
            return False
        try:
            w, key, frames, i = _selected_frames()
        except walk.WalkError:
            return False
        return walk.move_selection(frames, i, self.command == "py-up")[0] is not None


class PyList(_FrameCommand):
    """List the source around the selected Python frame's line.

"py-list START" lists from START, "py-list START, END" that range. The
current line is marked with ">". The file is read as the process sees it
(under /proc/PID/root). CPython's own py-list answers when its extension
is loaded and reads the frame; pyattach-list always reads memory."""

    command = "py-list"
    category = gdb.COMMAND_FILES


class PyLocals(_FrameCommand):
    """Print the local variables of the selected Python frame.

Values of None, bool, int, float, str, bytes, tuple, list, dict, set and
frozenset are shown as repr() shows them, instances of classes as
<Widget(name='gizmo') at 0x..> (from __dict__ and __slots__); nested
three deep, ten items each, cut at 1024 characters; other objects as their
type and address. pyattach's walker answers; CPython's own py-locals only
where the walker cannot read the frame. pyattach-locals always reads
memory."""

    command = "py-locals"
    category = gdb.COMMAND_DATA
    walker_first = True


class PyUp(_FrameCommand):
    """Select and print the Python frame that called the selected one.

py-list and py-locals then act on it; running or stopping the program
selects the innermost frame again."""

    command = "py-up"


class PyDown(_FrameCommand):
    """Select and print the Python frame the selected one called."""

    command = "py-down"


class PyBacktraceFull(_FrameCommand):
    """Print the Python stack of the selected thread with each frame's
    locals, as py-up prints a frame, innermost first.

Each frame is numbered by the C frame (eval loop) that runs it, as
CPython's py-bt-full numbers them; the C frames CPython's py-bt shows
(built-in functions called from Python, "Waiting for the GIL",
"Garbage-collecting") are listed where they are. CPython's own
py-bt-full answers when its extension is loaded and reads the frames;
pyattach-bt-full always reads memory."""

    command = "py-bt-full"


class PyPrint(_FrameCommand):
    """Print a Python variable of the selected Python frame: py-print NAME.

NAME is looked up as the frame sees it: its locals, then its globals,
then its builtins; printed as "local 'NAME' = VALUE" (global, builtin),
or "'NAME' not found". CPython's own py-print answers when its
extension is loaded and reads the frame; pyattach-print always reads
memory."""

    command = "py-print"
    category = gdb.COMMAND_DATA


_FRAME_COMMANDS = (PyList, PyLocals, PyUp, PyDown, PyBacktraceFull, PyPrint)


def dump(path, native=False, source=False, max_frames=walk.MAX_FRAMES, max_reads=walk.MAX_READS, timeout=walk.TIMEOUT, locals=False,
         tasks=False, asyncio_debug=0, max_tasks=walk.MAX_TASKS):
    """Writes every OS thread's Python stack (innermost first) as JSON to
    path (walk.write_dump, walk.dump_threads): {"threads": [{"tid",
    "name", "frames": [{"function", "file", "line"}]}]}, plus each
    frame's "source" line with source, each thread's C frames as
    "native" with native, and "error" when the stacks cannot be read.
    Threads without a Python thread state get no frames. Of a stack
    deeper than max_frames, the innermost and outermost halves are
    kept: "frames_omitted" counts the others, which were before
    frames["frames_omitted_at"]; a stack not read to its end has
    "partial": true. The whole walk has one budget (max_reads, timeout;
    0 for none): once it is used up, "truncated" says why and the
    threads left are listed without their stacks. With locals, each
    frame has "locals": [[name, repr], ...] (see Walker.locals). With
    tasks, the asyncio tasks too (walk.tasks_json; asyncio_debug is the
    .AsyncioDebug section's address when pyattach found it)."""
    budget = walk.Budget(max_reads=max_reads, timeout=timeout)
    want = None
    if tasks:
        want = {"debug": asyncio_debug or None, "limit": max_tasks}  # 0: all
    walk.write_dump(path, budget, lambda: _dump_threads(native, source, max_frames, budget, locals, want),
                    errors=(gdb.error,))


def _thread_states(inf, w):
    """The inferior's threads by number, their ids as gdb knows them, each
    id's id as CPython recorded it (in the process's own PID namespace),
    and the thread states by that id (the one Python thread of a one-
    thread process when nothing matched)."""
    threads = sorted(inf.threads(), key=lambda th: th.num)
    tids = [th.ptid[1] or th.ptid[2] for th in threads]
    native = dict((tid, _native_tid(inf, tid)) for tid in tids)
    states = w.match_tids(list(native.values()))
    if not _live(inf) and any(native[tid] not in states for tid in tids):
        # A gcore core of a process in another PID namespace records the
        # host's thread ids, CPython the namespace's: match by pthread_t.
        _match_pthreads(threads, tids, native, states, w)
    if not states:
        pys = w.os_threads()
        if len(pys) == 1 and len(threads) == 1:
            states = {native[tids[0]]: pys[0]}
    return threads, tids, native, states


def _match_pthreads(threads, tids, native, states, w):
    """Adds to states the thread states of the threads left unmatched,
    found by their pthread_t (the thread handle, else $fs_base)."""
    selected = gdb.selected_thread()
    taken = set(states[native[tid]].tstate for tid in tids if native[tid] in states)
    try:
        for th, tid in zip(threads, tids):
            if native[tid] in states:
                continue
            th.switch()
            t = w.thread_for(pthread_id=_pthread_of(th))
            if t is not None and t.tstate not in taken:
                states[native[tid]] = t
                taken.add(t.tstate)
    except gdb.error:
        pass
    finally:
        if selected is not None and selected.is_valid():
            selected.switch()


def _dump_threads(native, source, max_frames, budget, with_locals=False, tasks=None):
    inf = gdb.selected_inferior()
    if not inf.pid:
        raise walk.WalkError("no process or core is loaded")
    w = walker(max_frames, budget)
    threads, tids, natives, states = _thread_states(inf, w)
    oss = [walk.OSThread(tid, natives[tid], thread_name(th), th) for th, tid in zip(threads, tids)]
    selected = gdb.selected_thread()
    try:
        return walk.dump_threads(
            w, inf.pid, oss, states, _live(inf), _files(), source=source, with_locals=with_locals,
            native=(lambda ot: _native_frames(ot.handle)) if native else None,
            detach=lambda: gdb.execute("detach", to_string=True), tasks=_with_debug(tasks))
    finally:
        if selected is not None and native and selected.is_valid():
            selected.switch()


def _with_debug(tasks):
    """tasks with the .AsyncioDebug section's address found by gdb when
    pyattach gave none."""
    if tasks is not None and not tasks.get("debug"):
        tasks = dict(tasks, debug=asyncio_debug_address())
    return tasks


_SECTION_RE = None


def asyncio_debug_address():
    """The run-time address of the .AsyncioDebug section (3.14+: the
    _asyncio module's, or the executable's when the module is built in)
    among the sections gdb knows, else the one pyattach passed to setup,
    else None."""
    if _config.get("asyncio_debug"):
        return _config["asyncio_debug"]
    global _SECTION_RE
    if _SECTION_RE is None:
        import re
        _SECTION_RE = re.compile(r"^\s*\[\s*\d+\]\s+0x([0-9a-fA-F]+)->0x[0-9a-fA-F]+ at 0x[0-9a-fA-F]+: \.AsyncioDebug\b")
    try:
        out = gdb.execute("maint info sections -all-objects", to_string=True)
    except gdb.error:
        return None
    for line in out.splitlines():
        m = _SECTION_RE.match(line)
        if m:
            return int(m.group(1), 16)
    return None


class PyTasks(gdb.Command):
    """List the asyncio tasks of the process, read from memory.

Usage: py-tasks [--max-tasks N]

Every task (Python 3.11-3.15; 3.11-3.13 where the task list can be
found): its name, state and coroutine stack (innermost first: the coroutine
the task runs, then what it awaits, down the chain), the task or future
it awaits, as a tree of who awaits whom (like python -m asyncio
pstree). Tasks that await each other in a circle are reported as a
cycle. A task a thread is running says which thread. Of more than N
tasks (default 1000; 0 for all) the first N are shown and all are
counted. Works without debug information and on cores."""

    def __init__(self):
        super(PyTasks, self).__init__("py-tasks", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def invoke(self, args, from_tty):
        argv = gdb.string_to_argv(args or "")
        limit = walk.MAX_TASKS
        if argv:
            if len(argv) == 2 and argv[0] == "--max-tasks" and argv[1].isdigit():
                limit = int(argv[1]) or (1 << 62)
            else:
                raise gdb.GdbError("usage: py-tasks [--max-tasks N]")
        inf = gdb.selected_inferior()
        if not inf.pid:
            raise gdb.GdbError("py-tasks: no process or core is loaded")
        try:
            w = walker()
            tl = w.tasks(asyncio_debug_address(), limit)
            tid_of = {}
            if any(t.running is not None for t in tl):
                threads, tids, native, states = _thread_states(inf, w)
                for th, tid in zip(threads, tids):
                    ts = states.get(native[tid])
                    if ts is not None:
                        tid_of[ts.tstate] = th.num
            gdb.write(walk.format_tasks(tl, _files(), source_line=walk.source_line, tid_of=tid_of))
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        gdb.write(stopped_line(w))


PyTasks()


class PyExc(gdb.Command):
    """Show the exception the selected thread is handling, read from memory.

Usage: py-exc

Prints TYPE: MESSAGE (MESSAGE is str() of the exception's first
argument, else its repr) and where it was raised: the innermost entry
of its traceback, as File "FILE", line N, in FUNCTION. "No exception is
being handled" outside an except block."""

    def __init__(self):
        super(PyExc, self).__init__("py-exc", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def invoke(self, args, from_tty):
        if args.strip():
            raise gdb.GdbError("usage: py-exc (no arguments)")
        inf = gdb.selected_inferior()
        th = gdb.selected_thread()
        if not inf.pid or th is None:
            raise gdb.GdbError("py-exc: no process or core is loaded")
        try:
            w = walker()
            threads, tids, native, states = _thread_states(inf, w)
            tid = th.ptid[1] or th.ptid[2]
            t = states.get(native.get(tid))
            if t is None:
                gdb.write("pyattach: thread %d runs no Python\n" % th.num)
                return
            for line in walk.exception_lines(w.exception(t.tstate)):
                gdb.write(line + "\n")
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        gdb.write(stopped_line(w))


PyExc()


class PyThreads(gdb.Command):
    """List every thread with its Python facts, read from memory.

Usage: py-threads

One line a thread: Thread TID "NAME" (os name "OS"), interpreter N,
[Has the GIL], STATE. NAME is the name the program gave the thread
(threading), else its OS name; STATE is running, idle (in a system
call), waiting-for-gil, gc (collecting garbage) or "state unknown" (a
core, or a thread without a Python thread state). Free-threaded builds
say "[no GIL (free-threaded)]". A "*" marks the selected thread."""

    def __init__(self):
        super(PyThreads, self).__init__("py-threads", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def invoke(self, args, from_tty):
        if args.strip():
            raise gdb.GdbError("usage: py-threads (no arguments)")
        inf = gdb.selected_inferior()
        if not inf.pid:
            raise gdb.GdbError("py-threads: no process or core is loaded")
        try:
            w = walker()
            threads, tids, native, states = _thread_states(inf, w)
            infos = walk.known_thread_infos(w)
            live = _live(inf)
            selected = gdb.selected_thread()
            for th, tid in zip(threads, tids):
                kernel = walk.kernel_view(inf.pid, tid) if live and tid else None
                f = walk.thread_facts(w, tid, thread_name(th), states.get(native[tid]), infos, kernel)
                mark = "*" if selected is not None and th.num == selected.num else " "
                gdb.write("%s %d %s\n" % (mark, th.num, walk.facts_header(f)))
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        gdb.write(stopped_line(w))


PyThreads()


def _native_frames(th):
    """The thread's C frames as gdb unwinds them, innermost first,
    without the frames of inlined functions: pc, the name gdb has (None
    when it has none), file and line when gdb read them, and block_pc,
    an address inside the frame's function (a caller's pc is its return
    address: the byte before it)."""
    out = []
    try:
        th.switch()
        f = gdb.newest_frame()
        inner_normal = False
        while f is not None and len(out) < 4096:
            if f.type() == gdb.INLINE_FRAME:
                # A function inlined into the real frame below, at the
                # same pc: one frame per pc, named by the symbol table.
                f = f.older()
                continue
            sal = f.find_sal()
            symtab = sal.symtab if sal is not None else None
            pc = f.pc()
            normal = f.type() == gdb.NORMAL_FRAME
            out.append({
                "function": f.name(),
                "file": symtab.filename if symtab is not None else None,
                "line": sal.line if symtab is not None and sal.line else None,
                "pc": pc,
                "block_pc": pc - 1 if normal and inner_normal and pc > 0 else pc,
            })
            inner_normal = normal
            f = f.older()
    except gdb.error:
        pass
    return out


class PyattachDump(gdb.Command):
    """pyattach-dump FILE: write every thread's Python stack as JSON to FILE.

FILE gets {"threads": [{"tid", "name", "frames": [{"function", "file",
"line"}]}]}, innermost frame first; "pyattach dump" runs it."""

    def __init__(self):
        super(PyattachDump, self).__init__("pyattach-dump", gdb.COMMAND_STACK, gdb.COMPLETE_FILENAME)

    def invoke(self, args, from_tty):
        argv = gdb.string_to_argv(args)
        if len(argv) != 1:
            raise gdb.GdbError("usage: pyattach-dump FILE")
        dump(argv[0], max_frames=_limit("max_frames", walk.MAX_FRAMES),
             max_reads=_limit("max_reads", walk.MAX_READS), timeout=_limit("timeout", walk.TIMEOUT))


PyattachDump()
