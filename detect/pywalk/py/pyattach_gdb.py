"""gdb adapter of pyattach's memory-only Python stack walker: py-bt.

Loaded by the scripts pyattach writes; setup() takes what pyattach
already knows (version, ABI flags, the offsets, the process's root).
"""

import gdb

import pyattach_walk as walk

_config = {}
_walker = None


def setup(version="", flags="", root="", tables=None):
    """Registers pyattach-bt, and py-bt (see PyBt). Called once, before
    the program is loaded; claim() runs again whenever CPython's own
    extension may have been loaded since and taken py-bt over."""
    _config.update(version=version, flags=flags, root=root)
    _config["tables"] = tables
    PyattachBt("pyattach-bt")
    PyBt()
    for ev in ("new_objfile", "stop", "before_prompt"):
        reg = getattr(gdb.events, ev, None)
        if reg is not None:
            reg.connect(claim)


def claim(*_):
    """Takes py-bt back after CPython's extension registered its own."""
    if _cpython_bt() is not None and _claimed.get("cls") is not _cpython_bt():
        _claimed["cls"] = _cpython_bt()
        PyBt()


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
    """CPython's py-bt output, or None when it raised."""
    import io
    import sys

    cmd = cls.__new__(cls)
    old = sys.stdout
    buf = io.StringIO()
    sys.stdout = buf
    try:
        cmd.invoke(args, from_tty)
    except Exception:
        return None
    finally:
        sys.stdout = old
    return buf.getvalue()


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


def walker():
    """A Walker for the current inferior (rebuilt when it changes)."""
    global _walker
    inf = gdb.selected_inferior()
    key = (inf.num, inf.pid)
    if _walker is not None and _walker[0] == key:
        return _walker[1]
    runtime = _symbol("_PyRuntime")
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
    native = th.ptid[1] or th.ptid[2] or None
    t = w.thread_for(native_id=native, pthread_id=_pthread_of(th))
    if t is None:
        threads = w.threads()
        if len(threads) == 1 and len(gdb.selected_inferior().threads()) == 1:
            t = threads[0]
    return t


class PyattachBt(gdb.Command):
    """Print the Python stack of the selected thread, read from memory.

Works without debug information (stripped interpreters) and on optimised
builds whose eval loop hides its frame. Use "thread apply all py-bt"
for every thread."""

    def __init__(self, name):
        super(PyattachBt, self).__init__(name, gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def invoke(self, args, from_tty):
        try:
            w = walker()
            t = current_thread_state(w)
            if t is None:
                gdb.write("Unable to locate python frame\n")
                return
            frames = w.frames(t.tstate)
        except walk.WalkError as e:
            gdb.write("pyattach: %s\n" % e)
            return
        if not frames:
            gdb.write("Unable to locate python frame\n")
            return
        inf = gdb.selected_inferior()
        live = getattr(getattr(inf, "connection", None), "type", "") == "native"
        root, cwd = walk.process_dirs(inf.pid, live, _config.get("root", ""))
        gdb.write(walk.format_frames(frames, root, cwd))


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
        if cls is not None:
            out = _run_cpython_bt(cls, args, from_tty)
            if out and "  File " in out and not any(m in out for m in _CPYTHON_FAILED):
                gdb.write(out)
                return
        PyattachBt.invoke(self, args, from_tty)
