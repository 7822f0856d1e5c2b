"""lldb adapter of pyattach's memory-only Python stack walker.

`command script import` this file, then call setup() (pyattach's scripts
do both). Commands: py-bt (selected thread), py-bt all (every thread),
py-threads, py-list, py-locals, py-up, py-down, py-exc,
pyattach-bt-filter (Python frames in bt: pyattach_lldb_bt) and
pyattach-dap (the DAP proxy's questions: pyattach_walk_dap).
"""

import lldb

import pyattach_lldb_bt
import pyattach_walk as walk

try:
    # lldb 22+: Python frames as lldb's own frames (scripted frame providers).
    import pyattach_lldb_frames
except ImportError:
    pyattach_lldb_frames = None

_config = {}
_walkers = {}


def setup(version="", flags="", root="", tables=None, creds=None):
    """What pyattach knows of the target; creds is a core's (uid, gid,
    groups), whose permissions its source files are read with."""
    _config.update(version=version, flags=flags, root=root, creds=creds)
    _config["tables"] = tables


# Thread names. A target names its threads itself (prctl PR_SET_NAME,
# threading in 3.14+), and lldb prints those names raw through its
# thread-format ("thread list", "thread info") and thread-stop-format
# (the stop report, "bt"). escape_thread_names swaps the name part of
# both for a function here that prints the name escaped; the rest of
# each format stays as it was.

# The name parts of lldb 14's default formats (lldb's own spelling in
# "settings show"), and the function each becomes. A thread without a
# name prints no name part: the function prints the whole part.
_NAME_PARTS = (
    ("{, name = ${ansi.fg.green}'${thread.name}'${ansi.normal}}", "thread_name_part_colored"),
    ("{, name = '${thread.name}'}", "thread_name_part"),
)
_GREEN, _NORMAL = "\x1b[32m", "\x1b[0m"


def escape_thread_names(debugger):
    """Makes debugger print thread names escaped (walk.escape) wherever
    its thread-format and thread-stop-format print them. pyattach's
    scripts call it for every target."""
    name = debugger.GetInstanceName()
    for var in ("thread-format", "thread-stop-format"):
        vals = debugger.GetInternalVariableValue(var, name)
        if vals is None or vals.GetSize() != 1:
            continue
        fmt = vals.GetStringAtIndex(0)
        new = fmt
        for part, fn in _NAME_PARTS:
            new = new.replace(part, "{${script.thread:%s.%s}}" % (__name__, fn))
        # Any other spelling: the escaped name alone.
        new = new.replace("${thread.name}", "${script.thread:%s.thread_name}" % __name__)
        if new != fmt:
            debugger.SetInternalVariable(var, new, name)


def _thread_name(thread):
    """The name the target gave thread, None when it has none. In a stop
    report lldb's API gives no name (the process's run lock is still
    held): a live thread's is read where lldb read it, /proc's comm."""
    n = thread.GetName()
    if n is not None:
        return n
    process = thread.GetProcess()
    if not process.IsValid() or not _live(process):
        return None
    try:
        with open("/proc/%d/task/%d/comm" % (process.GetProcessID(), thread.GetThreadID()), "rb") as f:
            b = f.read(64)
    except (IOError, OSError):
        return None
    return b.rstrip(b"\n").decode("utf-8", "surrogateescape") or None


def thread_name(thread, internal_dict=None):
    """The thread's name, escaped; "" when it has none."""
    return walk.escape(_thread_name(thread))


def thread_name_part(thread, internal_dict=None):
    """", name = 'NAME'" with NAME escaped; "" for a thread without a name."""
    n = _thread_name(thread)
    return ", name = '%s'" % walk.escape(n) if n else ""


def thread_name_part_colored(thread, internal_dict=None):
    """thread_name_part, the quoted name in green when lldb uses colour
    (as lldb's default thread-format prints it)."""
    n = _thread_name(thread)
    if not n:
        return ""
    color = False
    try:
        color = thread.GetProcess().GetTarget().GetDebugger().GetUseColor()
    except Exception:
        pass
    q = "'%s'" % walk.escape(n)
    return ", name = " + (_GREEN + q + _NORMAL if color else q)


def __lldb_init_module(debugger, internal_dict):
    # -o: replaces cpython_lldb's py-bt (it stops at 3.10) when that was
    # imported first; its other commands stay.
    debugger.HandleCommand("command script add -o -f %s.py_bt py-bt" % __name__)
    debugger.HandleCommand("command script add -o -f %s.py_bt pyattach-bt" % __name__)
    for name in ("py-list", "py-locals", "py-up", "py-down", "py-exc", "py-threads", "py-tasks", "pyattach-bt-filter",
                 "pyattach-dap"):
        debugger.HandleCommand("command script add -o -f %s.%s %s" % (__name__, name.replace("-", "_"), name))
    pyattach_lldb_bt.register(_walker, _thread_state, pyattach_lldb_frames)


def bt_frames(debugger):
    """Makes lldb's bt show the Python frames each eval loop frame runs
    (pyattach_lldb_bt): through the frame-format, and where lldb has
    scripted frame providers (lldb 22+) as frames of their own in every
    target that exists (pyattach's scripts call it again once the
    target exists)."""
    pyattach_lldb_bt.install(debugger)


def pyattach_bt_filter(debugger, command, exe_ctx, result, internal_dict):
    """pyattach-bt-filter [on|off]: whether bt (thread backtrace, frame
    select) shows under each _PyEval_EvalFrameDefault frame the Python
    frames it runs, with the interpreter's own frames kept terse. Off
    puts back the frame-format as it was."""
    try:
        result.AppendMessage(pyattach_lldb_bt.command(debugger, command))
    except ValueError as e:
        result.SetError(str(e))


def _reader(process, target):
    def read(addr, size):
        err = lldb.SBError()
        b = process.ReadMemory(addr, size, err)
        if err.Success() and b is not None and len(b) == size:
            return b
        # lldb 14 on a core cannot read read-only data that lives only in
        # the library file: read it from the file. lldb 22 then returns
        # the file's bytes with the process's error still set ("core file
        # does not contain"): all size bytes read are the answer.
        err2 = lldb.SBError()
        b = target.ReadMemory(lldb.SBAddress(addr, target), size, err2)
        if b is not None and len(b) == size:
            return b
        raise walk.WalkError(err.GetCString() or "read failed")

    return read


def _symbol(target, name):
    for ctx in target.FindSymbols(name):
        sym = ctx.GetSymbol()
        if sym.IsValid():
            a = sym.GetStartAddress().GetLoadAddress(target)
            if a != lldb.LLDB_INVALID_ADDRESS:
                return a
    return None


def _walker(target, process):
    """The process's Walker, with a fresh budget (the defaults) for the
    command that asks."""
    w = _process_walker(target, process)
    w.begin(walk.Budget(), walk.MAX_FRAMES)
    return w


def _process_walker(target, process):
    key = (target.GetExecutable().fullpath, process.GetProcessID())
    w = _walkers.get(key)
    if w is not None:
        return w
    runtime = _symbol(target, "_PyRuntime")
    if not runtime:
        raise walk.WalkError("no _PyRuntime symbol: is this a Python 3.7+ process?")
    read = _reader(process, target)
    given = _config.get("version")
    version = walk.target_version(given, read, None if given else _symbol(target, "Py_Version"), "lldb")
    w = walk.open_walker(read, runtime, version, _config.get("flags", ""), _config.get("tables") or None)
    _walkers[key] = w
    return w


def _frame0(thread):
    return thread.GetFrameAtIndex(0)


def _fs_base(frame):
    if frame is not None and frame.IsValid():
        reg = frame.FindRegister("fs_base")
        if reg.IsValid():
            return reg.GetValueAsUnsigned()
    return None


def _live(process):
    """Whether lldb reads a running process (not a core)."""
    return process.GetPluginName() != "elf-core"


def _files(process):
    """How the process's source files are read (walk.process_files)."""
    return walk.process_files(process.GetProcessID(), _live(process), _config.get("root", ""), _config.get("creds"))


def _native_tid(process, thread):
    """A thread's id as CPython recorded it: in a live process's own PID
    namespace (a container's), lldb's id otherwise."""
    if _live(process):
        return walk.namespace_tid(process.GetProcessID(), thread.GetThreadID())
    return thread.GetThreadID()


def _sp(frame):
    return frame.GetSP() if frame is not None and frame.IsValid() else None


def os_threads(process, frame0=_frame0):
    """The process's threads as walk.OSThread values (handle: the lldb
    thread; pthread: fs_base; sp in a core only: a core of a process in
    another PID namespace, whose thread ids are the host's); a thread's
    registers are read in frame0(thread), its innermost frame (None:
    not read)."""
    live = _live(process)
    out = []
    for i in range(process.GetNumThreads()):
        th = process.GetThreadAtIndex(i)
        out.append(walk.OSThread(th.GetThreadID(), _native_tid(process, th), None, th,
                                 pthread=(lambda th=th: _fs_base(frame0(th))),
                                 sp=None if live else (lambda th=th: _sp(frame0(th)))))
    return out


def _thread_state(w, thread, process, frame0=_frame0):
    """thread's thread state (walk.match_thread), or None; frame0 as
    os_threads takes it."""
    return walk.match_thread(w, lambda: os_threads(process, frame0), _native_tid(process, thread))


def _thread_frames(w, thread, process, max_frames=None):
    """The Python frames of thread, innermost first, in every interpreter
    it runs in (Walker.thread_frames); [] where it runs none."""
    t = _thread_state(w, thread, process)
    return w.thread_frames(t, max_frames) if t is not None else []


def _command(exe_ctx, result, run):
    """Appends to result what run(process, walker) returns for the process
    of exe_ctx; sets result's error instead where there is no process or
    the walker fails."""
    process = exe_ctx.GetProcess()
    if not process.IsValid():
        result.SetError("no process: attach to a Python process or load a core first")
        return
    try:
        w = _walker(exe_ctx.GetTarget(), process)
        try:
            out = run(process, w)
        except walk.BudgetExhausted:
            out = ""
    except walk.WalkError as e:
        result.SetError("pyattach: %s" % e)
        return
    why = w.stopped()
    if why:
        out += ("\n" if out else "") + "pyattach: walk stopped: %s; output is partial" % why
    result.AppendMessage(out)


def py_bt(debugger, command, exe_ctx, result, internal_dict):
    """py-bt [all] [--max-frames N]: the Python stack of the selected
    thread (or every thread), read from memory; of a stack deeper than N
    frames (4096; 0 for all), the innermost and outermost halves."""
    try:
        every, max_frames = walk.bt_args(command.split(), allow_all=True)
    except walk.UsageError as e:
        result.SetError(str(e))
        return

    def bt(process, w):
        if every:
            threads = [process.GetThreadAtIndex(i) for i in range(process.GetNumThreads())]
        else:
            threads = [exe_ctx.GetThread()]
        files = _files(process)
        infos = walk.known_thread_infos(w) if every else {}
        out = []
        for th in threads:
            try:
                t = _thread_state(w, th, process)
                if every:
                    out.append(_thread_line(w, process, th, t, infos))
                frames = w.thread_frames(t, max_frames) if t is not None else []
            except walk.BudgetExhausted:
                frames = []
            out.append(walk.py_bt(frames, files))
        return "".join(out).rstrip("\n")

    _command(exe_ctx, result, bt)


def _thread_line(w, process, th, t, infos):
    """A thread's line in py-threads and py-bt all: "*" on the selected
    thread, lldb's index, then the header dump and gdb's py-threads
    print (walk.facts_header)."""
    ot = walk.OSThread(th.GetThreadID(), None, _thread_name(th), th)
    selected = th.GetThreadID() == process.GetSelectedThread().GetThreadID()
    return walk.thread_line(w, process.GetProcessID(), _live(process), ot, t, infos, selected, th.GetIndexID())


def py_threads(debugger, command, exe_ctx, result, internal_dict):
    """py-threads: every thread, one line each: Thread TID "NAME" (os name
    "OS"), interpreter N, [Has the GIL], STATE (running, idle,
    waiting-for-gil, gc, or "state unknown"), as gdb's py-threads; "*"
    marks the selected thread."""
    if not _args_ok(command, "py-threads", result):
        return

    def run(process, w):
        oss = os_threads(process)
        for ot in oss:
            ot.os_name = _thread_name(ot.handle)
        selected = process.GetSelectedThread().GetThreadID()
        return walk.py_threads(w, process.GetProcessID(), _live(process), oss, walk.match_threads(w, oss),
                               lambda ot: ot.tid == selected, lambda ot: ot.handle.GetIndexID()).rstrip("\n")

    _command(exe_ctx, result, run)


# py-list, py-locals, py-up and py-down.

# The selected Python frame of each thread: (process id, thread id) ->
# (the process's stop id when it was selected, index into the walker's
# frames, innermost 0). A later stop selects the innermost frame again.
_selection = {}


def _frame_command(command, args, exe_ctx, result):
    def run(process, w):
        th = exe_ctx.GetThread()
        frames = _thread_frames(w, th, process)
        if not frames:
            return "Unable to locate python frame"
        key = (process.GetProcessID(), th.GetThreadID())
        stop, i = _selection.get(key, (None, 0))
        if stop != process.GetStopID() or i >= len(frames):
            i = 0
        out, j = walk.frame_command(w, command, frames, i, args, _files(process))
        if j is not None:
            _selection[key] = (process.GetStopID(), j)
        return out.rstrip("\n")

    _command(exe_ctx, result, run)


def py_list(debugger, command, exe_ctx, result, internal_dict):
    """py-list [START[, END]]: the source around the selected Python
    frame's line, the current one marked with ">"."""
    _frame_command("py-list", command, exe_ctx, result)


def py_locals(debugger, command, exe_ctx, result, internal_dict):
    """py-locals: the selected Python frame's local variables (values of
    None, bool, int, float, str and bytes; type and address of the rest)."""
    _frame_command("py-locals", command, exe_ctx, result)


def py_up(debugger, command, exe_ctx, result, internal_dict):
    """py-up: select and print the Python frame that called the selected one."""
    _frame_command("py-up", command, exe_ctx, result)


def py_down(debugger, command, exe_ctx, result, internal_dict):
    """py-down: select and print the Python frame the selected one called."""
    _frame_command("py-down", command, exe_ctx, result)


def py_exc(debugger, command, exe_ctx, result, internal_dict):
    """py-exc: the exception the selected thread is handling (TYPE:
    MESSAGE) and where it was raised, read from memory."""
    if not _args_ok(command, "py-exc", result):
        return

    def run(process, w):
        out = walk.py_exc(w, _thread_state(w, exe_ctx.GetThread(), process))
        return (walk.NO_FRAME if out is None else out).rstrip("\n")

    _command(exe_ctx, result, run)


def _asyncio_debug(target):
    """The run-time address of the .AsyncioDebug section (3.14+: the
    _asyncio module's, or the executable's when it is built in), None
    when no module lldb loaded has it."""
    for i in range(target.GetNumModules()):
        m = target.GetModuleAtIndex(i)
        sec = m.FindSection(".AsyncioDebug")
        if sec.IsValid():
            a = sec.GetLoadAddress(target)
            if a != lldb.LLDB_INVALID_ADDRESS:
                return a
    return None


def py_tasks(debugger, command, exe_ctx, result, internal_dict):
    """py-tasks [--max-tasks N]: every asyncio task (Python 3.11-3.15),
    its name, state and coroutine stack, what it awaits, as a tree of who
    awaits whom, cycles reported; as gdb's py-tasks."""
    try:
        limit = walk.tasks_args(command.split(), walk.MAX_TASKS)
    except walk.UsageError as e:
        result.SetError(str(e))
        return

    def run(process, w):
        def numbers():
            oss = os_threads(process)
            return walk.thread_numbers(oss, walk.match_threads(w, oss), lambda ot: ot.handle.GetIndexID())

        return walk.py_tasks(w, _asyncio_debug(exe_ctx.GetTarget()), limit, _files(process), numbers).rstrip("\n")

    _command(exe_ctx, result, run)


def _args_ok(command, name, result):
    """Whether a command that takes no arguments got none; sets result's
    error (the usage) otherwise."""
    try:
        walk.no_args(command, name)
    except walk.UsageError as e:
        result.SetError(str(e))
        return False
    return True


class _DapTarget(object):
    """A process as pyattach_walk_dap asks it: a thread's DAP id is its
    OS thread id (lldb-dap's)."""

    def __init__(self, exe_ctx):
        self.target = exe_ctx.GetTarget()
        self.process = exe_ctx.GetProcess()

    def walker(self):
        if not self.process.IsValid():
            raise walk.WalkError("no process: attach to a Python process or load a core first")
        return _walker(self.target, self.process)

    def _thread(self, tid):
        th = self.process.GetThreadByID(tid)
        if not th.IsValid():
            raise walk.WalkError("no thread %d" % tid)
        return th

    def thread_state(self, w, tid):
        return _thread_state(w, self._thread(tid), self.process)

    def native_frames(self, tid):
        """The thread's frames as lldb unwinds them, inlined ones too, as
        lldb-dap's stackTrace lists them."""
        th = self._thread(tid)
        out = []
        for i in range(min(th.GetNumFrames(), walk.dap.MAX_NATIVE)):
            f = th.GetFrameAtIndex(i)
            out.append({"function": f.GetFunctionName() or f.GetSymbol().GetName(), "pc": f.GetPC()})
        return out

    def threads(self, w):
        oss = os_threads(self.process)
        for ot in oss:
            ot.os_name = _thread_name(ot.handle)
        return oss, walk.match_threads(w, oss), lambda ot: ot.tid

    def files(self):
        return _files(self.process)


def pyattach_dap(debugger, command, exe_ctx, result, internal_dict):
    """pyattach-dap stack TID | locals FRAME | children ADDR | threads |
    source HEX: one line, "pyattach-dap: " and JSON, for pyattach's DAP
    proxy (pyattach_walk_dap); TID is the OS thread id."""
    result.AppendMessage(walk.dap.answer(command.split(), _DapTarget(exe_ctx)))
