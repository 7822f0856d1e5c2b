"""The selected inferior as pyattach's walker reads it in gdb: its
Walker (rebuilt when the inferior changes), its OS threads and which
thread state each runs in (walk.match_threads), how its source files
are read, its .AsyncioDebug section. setup() (pyattach_gdb) fills
config with what pyattach knows of the target."""

import gdb

import pyattach_gdb_settings as settings
import pyattach_walk as walk

config = {}
_walker = []


def forget():
    """Drops the Walker: the next command builds one for the new facts."""
    del _walker[:]


def live(inf):
    """Whether gdb debugs a running process (not a core)."""
    return getattr(getattr(inf, "connection", None), "type", "") == "native"


def native_tid(inf, tid):
    """A thread's id as CPython recorded it: in a live process's own PID
    namespace (a container's), the id gdb knows otherwise."""
    if tid and live(inf):
        return walk.namespace_tid(inf.pid, tid)
    return tid


def files():
    """How the selected inferior's source files are read (walk.SourceFiles)."""
    inf = gdb.selected_inferior()
    return walk.process_files(inf.pid, live(inf), config.get("root", ""), config.get("creds"))


def _read(addr, size):
    return gdb.selected_inferior().read_memory(addr, size).tobytes()


def _symbol(name):
    try:
        return int(gdb.parse_and_eval("(unsigned long)&'%s'" % name))
    except gdb.error:
        return None


def walker(max_frames=None, budget=None):
    """A Walker for the current inferior (rebuilt when it changes), with a
    fresh budget for the command that asks (the gdb settings' limits
    unless given)."""
    w = _inferior_walker()
    if budget is None:
        budget = walk.Budget(max_reads=settings.limit("max_reads", walk.MAX_READS),
                             timeout=settings.limit("timeout", walk.TIMEOUT))
    if max_frames is None:
        max_frames = settings.limit("max_frames", walk.MAX_FRAMES)
    w.begin(budget, max_frames)
    return w


def stopped_line(w):
    """The line that says the walk was cut, or ""."""
    why = w.stopped()
    return "pyattach: walk stopped: %s; output is partial\n" % why if why else ""


def _inferior_walker():
    inf = gdb.selected_inferior()
    key = (inf.num, inf.pid)
    if _walker and _walker[0] == key:
        return _walker[1]
    runtime = config.get("runtime") or _symbol("_PyRuntime")
    if not runtime:
        raise walk.WalkError("no _PyRuntime symbol: is this a Python 3.7+ process?")
    version = walk.target_version(config.get("version"), _read, _symbol("Py_Version") if not config.get("version") else None, "gdb")
    w = walk.open_walker(_read, runtime, version, config.get("flags", ""), config.get("tables") or None)
    _walker[:] = [key, w]
    return w


def _handle(thread):
    """The thread's pthread_t as gdb's thread handle gives it, or None."""
    try:
        h = thread.handle()
        if h:
            return int.from_bytes(bytes(h), "little")
    # RuntimeError: no libthread_db for the inferior's glibc (a container's).
    except (gdb.error, AttributeError, TypeError, RuntimeError):
        pass
    return None


def _fs_base():
    try:
        return int(gdb.parse_and_eval("$fs_base"))
    except gdb.error:
        return None


def on_thread(th, fn):
    """fn() run with th selected; gdb's selected thread and frame are
    put back."""
    selected = gdb.selected_thread()
    try:
        frame = gdb.selected_frame()
    except gdb.error:
        frame = None
    try:
        th.switch()
        return fn()
    finally:
        if selected is not None and selected.is_valid():
            selected.switch()
            try:
                if frame is not None and frame.is_valid():
                    frame.select()
            except gdb.error:
                pass


def _pthread(th, switch):
    """A function that gives th's pthread_t: its handle, else the fs_base
    register (read after switching to th when switch: on_thread)."""
    def pthread():
        p = _handle(th)
        if p is not None:
            return p
        selected = gdb.selected_thread()
        if selected is not None and selected.ptid == th.ptid:
            return _fs_base()
        if not switch:
            return None
        try:
            return on_thread(th, _fs_base)
        except gdb.error:
            return None

    return pthread


def os_threads(inf, switch=None):
    """The inferior's threads, by number, as walk.OSThread values (handle:
    the gdb thread). A pthread_t is read by switching thread (switch;
    by default in a core only: a gcore core of a process in another PID
    namespace records the host's thread ids, CPython the namespace's)."""
    if switch is None:
        switch = not live(inf)
    out = []
    for th in sorted(inf.threads(), key=lambda th: th.num):
        tid = th.ptid[1] or th.ptid[2]
        out.append(walk.OSThread(tid, native_tid(inf, tid), None, th, pthread=_pthread(th, switch)))
    return out


def current_thread_state(w):
    """The selected thread's thread state (thread_state_of), or None."""
    th = gdb.selected_thread()
    return thread_state_of(w, th) if th is not None else None


def thread_state_of(w, th):
    """gdb thread th's thread state (walk.match_thread), or None. No
    thread is switched to (gdb's frame filter asks while it unwinds the
    selected thread)."""
    inf = th.inferior
    native = native_tid(inf, th.ptid[1] or th.ptid[2]) or None

    def threads():
        oss = os_threads(inf, switch=False)
        for ot in oss:
            if ot.handle.ptid == th.ptid:
                ot.native_tid = native
        return oss

    return walk.match_thread(w, threads, native)


def thread_states(inf, w):
    """The inferior's threads (os_threads) and the thread states by
    their native_tid (walk.match_threads)."""
    oss = os_threads(inf)
    return oss, walk.match_threads(w, oss)


def selected_os_thread(oss):
    """The OSThread of oss that gdb has selected, or None."""
    th = gdb.selected_thread()
    if th is None:
        return None
    return next((ot for ot in oss if ot.handle.ptid == th.ptid), None)


_SECTION_RE = None


def asyncio_debug_address():
    """The run-time address of the .AsyncioDebug section (3.14+: the
    _asyncio module's, or the executable's when the module is built in)
    among the sections gdb knows, else the one pyattach passed to setup,
    else None."""
    if config.get("asyncio_debug"):
        return config["asyncio_debug"]
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
