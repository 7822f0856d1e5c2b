"""Who a thread is and what it does: its Python name (threading's, read
from memory), its interpreter, whether it holds the GIL, and one state:
running, idle, waiting for the GIL, or collecting garbage.

Names: sys.modules (the interpreter's modules dict) -> "threading" ->
its __dict__ -> "_active" (ident -> Thread) -> each Thread's instance
dict -> "_name", each read by the walker's readers (dicts:
pyattach_read_containers; instance dicts: pyattach_read_instances).

The GIL: the runtime's (3.7-3.11) or the one the interpreter's
ceval.gil points to (3.12+); a thread holds it when it is locked and
its last_holder is that thread's state. Free-threaded builds have none.

State (see thread_state): the collector's flag belongs to the thread
holding the GIL; of a live process, the kernel's view of each thread
(/proc/PID/task/TID/syscall) says whether it is in a system call, and a
futex wait on an address inside the GIL's own struct is a wait for the
GIL. A core has no /proc: pyattach reads the same view from each
thread's registers in the core (orig_rax or x8 and the instruction
before the pc; detect/core ThreadSyscall) and passes it in, so the rule
is the same; without it a core's states are unknown (None) except for
the collector."""

from pyattach_read_code import line_311
from pyattach_read_repr import value_repr
from pyattach_walk_frames import code_field, executable_mask
from pyattach_walk_memory import WalkError
from pyattach_walk_text import MAX_REPR, TRUNCATED, escape

# x86-64's futex system call number.
_SYS_FUTEX = 202

STATES = ("running", "idle", "waiting-for-gil", "gc")
NO_GIL = "no GIL (free-threaded)"


class ThreadInfo(object):
    """What py-threads and dump say of one thread state."""
    __slots__ = ("name", "interpreter", "holds_gil", "collecting", "gil_addr", "gil_size")

    def __init__(self):
        self.name = None
        self.interpreter = None
        self.holds_gil = None
        self.collecting = False
        self.gil_addr = None
        self.gil_size = 0


class ThreadStateReader(object):
    """Reads who a thread is and what it does, from its interpreter:
    through mem (pyattach_walk_memory.Memory) with the Layout L, the
    address of _PyRuntime (runtime) and readers (pyattach_read_repr
    .Readers) for the dicts and instances threading keeps."""

    def __init__(self, mem, layout, runtime, readers):
        self.mem = mem
        self.L = layout
        self.runtime = runtime
        self.r = readers

    def _lookup(self, items, name):
        return self.r.dicts.str_lookup(items, name, self.r.strs)

    def free_threaded(self):
        return "t" in self.L.flags

    def gil(self, interp):
        """(address of the GIL's struct, locked, last_holder) of the GIL
        an interpreter runs under; None when there is none or it cannot
        be read."""
        L = self.L
        if self.free_threaded():
            return None
        try:
            if L.has("_PyRuntimeState.ceval.gil"):
                g = self.runtime + L.off("_PyRuntimeState.ceval.gil")
            elif L.has("PyInterpreterState.ceval.gil"):
                g = self.mem.ptrv(interp + L.off("PyInterpreterState.ceval.gil"))
            else:
                return None
            locked = self.mem.i32(g + L.off("_gil_runtime_state.locked"))
            holder = self.mem.ptrv(g + L.off("_gil_runtime_state.last_holder"))
        except WalkError:
            return None
        return g, locked == 1, holder

    def collecting(self, interp):
        """Whether the interpreter's garbage collector runs now."""
        L = self.L
        try:
            if L.has("PyInterpreterState.gc.collecting"):
                return self.mem.i32(interp + L.off("PyInterpreterState.gc.collecting")) != 0
            if L.has("_PyRuntimeState.gc.collecting"):
                return self.mem.i32(self.runtime + L.off("_PyRuntimeState.gc.collecting")) != 0
        except WalkError:
            pass
        return False

    def interpreter_id(self, interp):
        try:
            return self.mem.i64(interp + self.L.off("PyInterpreterState.id"))
        except WalkError:
            return None

    def python_names(self, interp):
        """threading's names of an interpreter's threads: {ident: name}
        (ident: the pthread_t CPython keeps as thread_id); {} when
        threading is not imported or cannot be read."""
        L = self.L
        key = "PyInterpreterState.imports.modules" if L.has("PyInterpreterState.imports.modules") else "PyInterpreterState.modules"
        out = {}
        try:
            modules = self.mem.ptrv(interp + L.off(key))
            if not modules:
                return out
            mod = self._lookup(self.r.dicts.items(modules), "threading")
            if not mod:
                return out
            md = self.mem.ptrv(mod + L.off("PyModuleObject.md_dict"))
            active = self._lookup(self.r.dicts.items(md), "_active")
            if not active:
                return out
            for k, t in self.r.dicts.items(active):
                try:
                    ident = self.r.ints.value(k)
                    name = self._lookup(self.r.instances.items(t), "_name")
                    if ident is not None and name and self.r.types.name_static(name)[0] == "str":
                        out[ident] = self.r.strs.value(name)
                except WalkError:
                    continue
        except WalkError:
            pass
        return out

    def infos(self, threads):
        """{thread state address: ThreadInfo} for every thread state of
        threads (Walker.threads)."""
        out = {}
        per_interp = {}
        for th in threads:
            if th.interp not in per_interp:
                per_interp[th.interp] = (self.interpreter_id(th.interp), self.gil(th.interp),
                                         self.collecting(th.interp), self.python_names(th.interp))
            iid, gil, gc, names = per_interp[th.interp]
            info = ThreadInfo()
            info.interpreter = iid
            info.name = names.get(th.thread_id)
            if gil is not None:
                g, locked, holder = gil
                info.holds_gil = bool(locked and holder == th.tstate)
                info.collecting = bool(gc and info.holds_gil)
                info.gil_addr = g
                info.gil_size = self.L.f.get("sizeof(_gil_runtime_state)", 0)
            out[th.tstate] = info
        return out


def kernel_view(pid, tid):
    """A live thread's (syscall number, first argument) from
    /proc/PID/task/TID/syscall: (None, None) when it runs in user space
    (or was stopped there), None when /proc does not say."""
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
            words = f.read().split()
    except (IOError, OSError):
        return None
    if not words:
        return None
    if words[0] in ("running", "-1"):
        return (None, None)
    try:
        return int(words[0]), int(words[1], 16) if len(words) > 1 else None
    except ValueError:
        return None


def thread_state(info, kernel):
    """One word for a thread: "gc" (it holds the GIL while its
    interpreter collects), "waiting-for-gil" (it waits on a futex inside
    the GIL's struct), "idle" (in any other system call), "running" (in
    user space), or None (a core without registers, or /proc
    unreadable). kernel is kernel_view's answer, the same view read
    from a core's registers, or None."""
    if info is not None and info.collecting:
        return "gc"
    if kernel is None:
        return None
    nr, arg = kernel
    if nr is None:
        return "running"
    if (info is not None and nr == _SYS_FUTEX and info.gil_addr and arg is not None and
            not info.holds_gil and info.gil_addr <= arg < info.gil_addr + (info.gil_size or 1)):
        return "waiting-for-gil"
    return "idle"


def gil_words(holds_gil, free_threaded):
    """The bracketed GIL note of a thread's header line."""
    if free_threaded:
        return "[" + NO_GIL + "]"
    if holds_gil:
        return "[Has the GIL]"
    return ""


def thread_header(tid, name, os_name, interp, holds_gil, state, free_threaded=False):
    """A thread's header line: Thread TID "NAME" (os name "OS"),
    interpreter N, [Has the GIL], STATE. Strings come escaped."""
    out = "Thread %s" % tid
    if name is not None:
        out += ' "%s"' % name
    if os_name is not None and os_name != name:
        out += ' (os name "%s")' % os_name
    if interp is not None:
        out += ", interpreter %d" % interp
    g = gil_words(holds_gil, free_threaded)
    if g:
        out += ", " + g
    out += ", " + (state or "state unknown")
    return out


def known_thread_infos(w):
    """w.thread_infos(), {} when the walk's budget ends first or the
    thread list cannot be read."""
    try:
        return w.thread_infos()
    except WalkError:
        return {}


def thread_facts(w, tid, os_name, t, infos, kernel):
    """What dump and py-threads say of one OS thread (kernel id tid, OS
    name os_name, thread state t or None, infos from known_thread_infos,
    kernel from kernel_view or None): tid, name (threading's, else the
    OS name), os_name, interpreter, holds_gil (None on a free-threaded
    build or when unknown), state (STATES or None) and free_threaded.
    t is the thread state the thread runs in now (Walker.os_threads):
    its interpreter is the thread's."""
    info = infos.get(t.tstate) if t is not None else None
    free = w.free_threaded()
    # A thread running in a subinterpreter keeps the name threading gave
    # it in the interpreter that started it, the outermost of its thread
    # states (t.outer: Walker.os_threads): a subinterpreter that imports
    # threading there lists the thread it runs on as its "MainThread".
    name = None
    for s in (list(reversed(getattr(t, "outer", ()))) + [t] if t is not None else ()):
        name = getattr(infos.get(s.tstate), "name", None)
        if name is not None:
            break
    return {
        "tid": tid,
        "name": name if name is not None else os_name,
        "os_name": os_name,
        "interpreter": info.interpreter if info is not None else None,
        "holds_gil": None if info is None or free else info.holds_gil,
        "state": thread_state(info, kernel) if t is not None else None,
        "free_threaded": free,
    }


def facts_header(f):
    """A thread's header line (thread_header) from thread_facts, the
    target's strings escaped."""
    esc = lambda v: None if v is None else escape(v)
    return thread_header(f["tid"], esc(f["name"]), esc(f["os_name"]), f["interpreter"],
                         f["holds_gil"], f["state"], f["free_threaded"])


# How many traceback entries exception() follows (innermost kept).
MAX_TRACEBACK = 64


class ExceptionReader(object):
    """The exception a thread is handling (in an except block), read from
    its thread state: exc_info (the top _PyErr_StackItem) and, as
    sys.exc_info() does, the items below it while they hold none; then
    the exception's type, args[0] and __traceback__ (tb_next to the
    innermost entry; tb_frame's code, tb_lineno, or from 3.12 on tb_lasti
    through the code's line table while tb_lineno is -1). Read through
    mem with the Layout L and readers (pyattach_read_repr.Readers)."""

    def __init__(self, mem, layout, readers):
        self.mem = mem
        self.L = layout
        self.r = readers

    def exception(self, tstate):
        """{"type", "message", "frames": [{"file", "line", "function"}]}
        of the exception the thread handles (describe), or None when it
        handles none or the build's layout lacks the fields."""
        exc = self.handled(tstate)
        return self.describe(exc) if exc else None

    def handled(self, tstate):
        """The address of the exception the thread handles, 0 when it
        handles none or the build's layout lacks the fields."""
        L = self.L
        if not (L.has("PyThreadState.exc_info") and L.has("_PyErr_StackItem.exc_value")):
            return 0
        item = self.mem.ptrv(tstate + L.off("PyThreadState.exc_info"))
        exc, seen = 0, set()
        while item and item not in seen and len(seen) < MAX_TRACEBACK:
            seen.add(item)
            value = self.mem.ptrv(item + L.off("_PyErr_StackItem.exc_value"))
            if value and self.r.types.name_static(value)[0] != "NoneType":
                exc = value
                break
            if not L.has("_PyErr_StackItem.previous_item"):
                break
            item = self.mem.ptrv(item + L.off("_PyErr_StackItem.previous_item"))
        return exc

    def describe(self, exc):
        """{"type", "message", "frames": [{"file", "line", "function"}]}
        of the exception object at exc, innermost frame first (where it
        was raised); frames is [] when the traceback cannot be read."""
        L = self.L
        out = {"type": self.r.types.name_static(exc)[0], "message": None, "frames": []}
        if L.has("PyBaseExceptionObject.args"):
            out["message"] = self._exc_message(self.mem.ptrv(exc + L.off("PyBaseExceptionObject.args")))
        try:
            out["frames"] = self._exc_frames(exc)
        except WalkError:
            pass
        return out

    def _exc_message(self, args):
        """str(args[0]) for a str, else its repr; "" for no args."""
        if not args:
            return ""
        n = self.mem.i64(args + self.L.off("PyVarObject.ob_size"))
        if n <= 0:
            return ""
        first = self.mem.ptrv(args + self.L.off("PyTupleObject.ob_item"))
        name, static = self.r.types.name_static(first)
        if name == "str" and static:
            got = self.r.strs.prefix(first, MAX_REPR)
            if got is not None:
                text, length = got
                return text if length <= MAX_REPR else text + TRUNCATED
        return value_repr(self.r, first)

    def _exc_frames(self, exc):
        L = self.L
        need = ("PyBaseExceptionObject.traceback", "PyTracebackObject.tb_next",
                "PyTracebackObject.tb_frame", "PyTracebackObject.tb_lineno")
        if not all(L.has(n) for n in need):
            return []
        tb = self.mem.ptrv(exc + L.off("PyBaseExceptionObject.traceback"))
        entries, seen = [], set()
        while tb and tb not in seen:
            seen.add(tb)
            entries.append(tb)
            if len(entries) > MAX_TRACEBACK:
                entries.pop(0)
            tb = self.mem.ptrv(tb + L.off("PyTracebackObject.tb_next"))
        frames = []
        for tb in reversed(entries):
            frame = self.mem.ptrv(tb + L.off("PyTracebackObject.tb_frame"))
            line = self.mem.i32(tb + L.off("PyTracebackObject.tb_lineno"))
            if L.minor >= (3, 11):
                inner = self.mem.ptrv(frame + L.off("PyFrameObject.f_frame"))
                code = self.mem.ptrv(inner + L.off(code_field(L))) & executable_mask(L.minor)
            else:
                code = self.mem.ptrv(frame + L.off("PyFrameObject.f_code"))
            c = self.r.code.read(code)
            if line < 0 and L.minor >= (3, 11) and L.has("PyTracebackObject.tb_lasti"):
                line = line_311(c, self.mem.i32(tb + L.off("PyTracebackObject.tb_lasti")))
            frames.append({"file": c["filename"], "line": line if line is None or line >= 0 else None,
                           "function": c["qualname"]})
        return frames


def exception_lines(exc):
    """What py-exc prints of Exceptions.exception's result (None: "no
    exception is being handled"), the target's strings escaped."""
    if exc is None:
        return ["No exception is being handled."]
    lines = [_exc_summary(exc)]
    if exc["frames"]:
        f = exc["frames"][0]
        lines.append('  raised at File "%s", line %s, in %s' % (
            escape(f["file"]), "?" if f["line"] is None else f["line"], escape(f["function"])))
    return lines


def _exc_summary(exc):
    if exc["message"]:
        return "%s: %s" % (escape(exc["type"]), escape(exc["message"]))
    return escape(exc["type"])
