"""pyattach's gdb commands: py-bt and pyattach-bt, py-bt-full, py-list,
py-locals, py-print, py-up, py-down, py-tasks, py-exc, py-threads, and
pyattach-dap (the DAP proxy's questions: pyattach_walk_dap). Each
lists the selected inferior's threads and frames (pyattach_gdb_inferior),
asks the core for the text (walk: pyattach_walk_commands) and prints it;
where CPython's own extension is loaded, its answer is kept when it reads
the frames (pyattach_gdb_cpython)."""

import gdb

import pyattach_gdb_cpython as cpython
import pyattach_gdb_inferior as inferior
import pyattach_gdb_names as names
import pyattach_gdb_native
import pyattach_walk as walk


def _argv(args):
    return gdb.string_to_argv(args or "")


def max_frames_arg(args):
    """py-bt's --max-frames N (or --max-frames=N), None when absent."""
    try:
        return walk.bt_args(_argv(args))[1]
    except walk.UsageError as e:
        raise gdb.GdbError(str(e))


def _no_args(args, command):
    try:
        walk.no_args(args, command)
    except walk.UsageError as e:
        raise gdb.GdbError(str(e))


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
            w = inferior.walker(max_frames)
            t = inferior.current_thread_state(w)
            if t is not None:
                frames = w.thread_frames(t)
        except walk.BudgetExhausted:
            pass
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        natives = _native_lines(w, frames)[1] if frames else None
        gdb.write(walk.py_bt(frames, inferior.files(), natives))
        gdb.write(inferior.stopped_line(w))


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
        cls = cpython.command_class()
        # CPython's py-bt takes no arguments: --max-frames is the walker's;
        # it reads one interpreter's frames: a thread in a subinterpreter
        # is the walker's.
        if cls is not None and max_frames_arg(args) is None and not _in_subinterpreter():
            out = cpython.run(cls, args, from_tty)
            if out and "  File " in out and not any(m in out for m in cpython.FAILED):
                gdb.write(out)
                return
        PyattachBt.invoke(self, args, from_tty)


def _in_subinterpreter():
    """Whether the selected thread runs in more than one interpreter
    (its thread state has outer ones: Walker.os_threads)."""
    try:
        t = inferior.current_thread_state(inferior.walker())
    except walk.WalkError:
        return False
    return t is not None and bool(t.outer)



# py-list, py-locals, py-up and py-down.

# The selected Python frame of each thread, by (inferior, thread) number:
# an index into the walker's frames, innermost 0. Forgotten whenever the
# inferior runs or stops.
_selection = {}


# How the walker's answer starts when it cannot read the frame.
_WALKER_FAILED = ("pyattach: ", "Unable to locate python frame")


def _reset_selection(*_):
    _selection.clear()


def register_frame_commands():
    """Registers py-list, py-locals, py-up and py-down (CPython's own
    answer when its extension is loaded and reads the frame, the walker's
    otherwise), their pyattach-* forms (always the walker's), and the
    reset of the selected Python frame."""
    for cls in _FRAME_COMMANDS:
        cls(cls.command, cpython=True)
    if _registered:
        return
    _registered.append(True)
    for cls in _FRAME_COMMANDS:
        cls("pyattach-" + cls.command[3:], cpython=False)
    for ev in ("cont", "stop"):
        reg = getattr(gdb.events, ev, None)
        if reg is not None:
            reg.connect(_reset_selection)


_registered = []


def _selected_frames():
    """The walker, the selection key, the selected thread's Python
    frames and the selected index."""
    w = inferior.walker()
    t = inferior.current_thread_state(w)
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
    if (i[0] if isinstance(i, tuple) else i) >= len(frames) + isinstance(i, tuple):
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
    """The walker's output for py-list, py-locals, py-print, py-up,
    py-down or py-bt-full (walk.frame_command, walk.py_bt_full)."""
    try:
        w, key, frames, i = _selected_frames()
        files = inferior.files()
        if command == "py-bt-full":
            levels, natives = _native_lines(w, frames) if frames else ([], {})
            return walk.py_bt_full(w, frames, levels, natives, files)
        # py-up and py-down stop on the C frame lines py-bt shows, as
        # CPython's do (a built-in method the Python frames called).
        natives = _native_lines(w, frames)[1] if frames and command in ("py-up", "py-down") else None
        out, j = walk.frame_command(w, command, frames, i, args, files, natives)
        if j is not None:
            _selection[key] = j
        return out
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
                out = cpython.run(cls, args, from_tty)
                if out and not any(m in out for m in cpython.MORE_FAILED) and not self._cpython_stuck(out):
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
        return walk.move_selection(frames, i, self.command == "py-up", _native_lines(w, frames)[1])[0] is not None


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
        try:
            limit = walk.tasks_args(_argv(args), walk.MAX_TASKS)
        except walk.UsageError as e:
            raise gdb.GdbError(str(e))
        inf = gdb.selected_inferior()
        if not inf.pid:
            raise gdb.GdbError("py-tasks: no process or core is loaded")
        try:
            w = inferior.walker()

            def numbers():
                oss, states = inferior.thread_states(inf, w)
                return walk.thread_numbers(oss, states, lambda ot: ot.handle.num)

            gdb.write(walk.py_tasks(w, inferior.asyncio_debug_address(), limit, inferior.files(), numbers))
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        gdb.write(inferior.stopped_line(w))


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
        _no_args(args, "py-exc")
        inf = gdb.selected_inferior()
        th = gdb.selected_thread()
        if not inf.pid or th is None:
            raise gdb.GdbError("py-exc: no process or core is loaded")
        try:
            w = inferior.walker()
            oss, states = inferior.thread_states(inf, w)
            ot = inferior.selected_os_thread(oss)
            out = walk.py_exc(w, states.get(ot.native_tid) if ot is not None else None)
            if out is None:
                gdb.write("pyattach: thread %d runs no Python\n" % th.num)
                return
            gdb.write(out)
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        gdb.write(inferior.stopped_line(w))


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
        _no_args(args, "py-threads")
        inf = gdb.selected_inferior()
        if not inf.pid:
            raise gdb.GdbError("py-threads: no process or core is loaded")
        try:
            w = inferior.walker()
            oss, states = inferior.thread_states(inf, w)
            for ot in oss:
                ot.os_name = names.thread_name(ot.handle)
            selected = gdb.selected_thread()
            gdb.write(walk.py_threads(w, inf.pid, inferior.live(inf), oss, states,
                                      lambda ot: selected is not None and ot.handle.num == selected.num,
                                      lambda ot: ot.handle.num))
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        gdb.write(inferior.stopped_line(w))


PyThreads()


class _DapTarget(object):
    """The selected inferior as pyattach_walk_dap asks it: a thread's DAP
    id is its global number."""

    def __init__(self):
        self.inf = gdb.selected_inferior()

    def walker(self):
        if not self.inf.pid:
            raise walk.WalkError("no process or core is loaded")
        return inferior.walker()

    def _thread(self, tid):
        th = next((th for th in self.inf.threads() if th.global_num == tid), None)
        if th is None:
            raise walk.WalkError("no thread %d" % tid)
        return th

    def thread_state(self, w, tid):
        return inferior.thread_state_of(w, self._thread(tid))

    def native_frames(self, tid):
        """The thread's frames as gdb unwinds them, inlined ones too, as
        gdb's DAP stackTrace lists them (no frame filter)."""
        def frames():
            out = []
            f = gdb.newest_frame()
            while f is not None and len(out) < walk.dap.MAX_NATIVE:
                out.append({"function": f.name(), "pc": f.pc()})
                f = f.older()
            return out

        return inferior.on_thread(self._thread(tid), frames)

    def threads(self, w):
        oss, states = inferior.thread_states(self.inf, w)
        for ot in oss:
            ot.os_name = names.thread_name(ot.handle)
        return oss, states, lambda ot: ot.handle.global_num

    def files(self):
        return inferior.files()


class PyattachDap(gdb.Command):
    """Answer pyattach's DAP proxy: pyattach-dap stack TID | locals FRAME |
children ADDR | threads | source HEX.

Prints one line, "pyattach-dap: " and JSON (see pyattach_walk_dap); TID
is a thread's global number. Nothing stays selected."""

    def __init__(self):
        super(PyattachDap, self).__init__("pyattach-dap", gdb.COMMAND_DATA, gdb.COMPLETE_NONE)

    def invoke(self, args, from_tty):
        gdb.write(walk.dap.answer((args or "").split(), _DapTarget(), errors=(gdb.error,)) + "\n")


PyattachDap()
