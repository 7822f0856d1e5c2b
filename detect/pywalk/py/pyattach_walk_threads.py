"""Who a thread is and what it does: its Python name (threading's, read
from memory), its interpreter, whether it holds the GIL, and one state:
running, idle, waiting for the GIL, or collecting garbage.

Names: sys.modules (the interpreter's modules dict) -> "threading" ->
its __dict__ -> "_active" (ident -> Thread) -> each Thread's instance
dict -> "_name". Dicts are read from their keys table (3.7-3.10: dk_size
and index width; 3.11+: dk_log2_index_bytes and dk_kind), split tables
and the instance values of 3.11+ (managed dicts: 3.11 two pointers
before the object, 3.12 a tagged pointer, 3.13+ inline after it).

The GIL: the runtime's (3.7-3.11) or the one the interpreter's
ceval.gil points to (3.12+); a thread holds it when it is locked and
its last_holder is that thread's state. Free-threaded builds have none.

State (see thread_state): the collector's flag belongs to the thread
holding the GIL; of a live process, the kernel's view of each thread
(/proc/PID/task/TID/syscall) says whether it is in a system call, and a
futex wait on an address inside the GIL's own struct is a wait for the
GIL. A core has no kernel view: its states are unknown (None) except
for the collector."""

import struct

from pyattach_walk_frames import executable_mask
from pyattach_walk_memory import WalkError
from pyattach_walk_text import MAX_REPR, TRUNCATED, escape

# tp_flags bits.
_MANAGED_DICT = 1 << 4   # 3.11+: the instance dict is before the object
_INLINE_VALUES = 1 << 2  # 3.13+: the instance values are after it

# A dict with more entries than this is not read for names.
_MAX_DICT_ENTRIES = 1 << 14

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


class Threads(object):
    """The Walker's reads of thread identity and state: through its
    memory (pyattach_walk_memory.Memory), with self.L and self.runtime."""

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
                g = self.ptrv(interp + L.off("PyInterpreterState.ceval.gil"))
            else:
                return None
            locked = self.i32(g + L.off("_gil_runtime_state.locked"))
            holder = self.ptrv(g + L.off("_gil_runtime_state.last_holder"))
        except WalkError:
            return None
        return g, locked == 1, holder

    def collecting(self, interp):
        """Whether the interpreter's garbage collector runs now."""
        L = self.L
        try:
            if L.has("PyInterpreterState.gc.collecting"):
                return self.i32(interp + L.off("PyInterpreterState.gc.collecting")) != 0
            if L.has("_PyRuntimeState.gc.collecting"):
                return self.i32(self.runtime + L.off("_PyRuntimeState.gc.collecting")) != 0
        except WalkError:
            pass
        return False

    def interpreter_id(self, interp):
        try:
            return self.i64(interp + self.L.off("PyInterpreterState.id"))
        except WalkError:
            return None

    # Dicts.

    def dict_entries(self, keys, values=0):
        """(key, value) addresses of a dict keys table, in insertion
        order; values is a split table's values array, 0 for a combined
        one. Empty slots are left out."""
        L = self.L
        n = self.i64(keys + L.off("PyDictKeysObject.dk_nentries"))
        if n < 0 or n > _MAX_DICT_ENTRIES:
            raise WalkError("dict keys at 0x%x: %d entries" % (keys, n))
        if L.has("PyDictKeysObject.dk_log2_index_bytes"):
            head = self.read(keys + L.off("PyDictKeysObject.dk_log2_size"), 3)
            log2_index_bytes, kind = head[1], head[2]
            if log2_index_bytes > 40:
                raise WalkError("dict keys at 0x%x: bad index size" % keys)
            entries = keys + L.off("PyDictKeysObject.dk_indices") + (1 << log2_index_bytes)
            if kind == 0:
                size, koff, voff = L.off("sizeof(PyDictKeyEntry)"), 8, 16
            else:
                size, koff, voff = L.off("sizeof(PyDictUnicodeEntry)"), 0, 8
            vbase = values + L.off("PyDictValues.values") if values else 0
        else:
            dk_size = self.i64(keys + L.off("PyDictKeysObject.dk_size"))
            if dk_size <= 0 or dk_size > 1 << 40:
                raise WalkError("dict keys at 0x%x: bad size" % keys)
            width = 1 if dk_size <= 0xff else 2 if dk_size <= 0xffff else 4 if dk_size <= 0xffffffff else 8
            entries = keys + L.off("PyDictKeysObject.dk_indices") + dk_size * width
            size, koff, voff = L.off("sizeof(PyDictKeyEntry)"), 8, 16
            vbase = values
        if n == 0:
            return []
        block = self.read(entries, n * size)
        vals = struct.unpack("<%dQ" % n, self.read(vbase, 8 * n)) if vbase else None
        out = []
        for i in range(n):
            k = struct.unpack_from("<Q", block, i * size + koff)[0]
            v = vals[i] if vals is not None else struct.unpack_from("<Q", block, i * size + voff)[0]
            if k and v:
                out.append((k, v))
        return out

    def dict_items(self, d):
        """(key, value) addresses of the dict object at d."""
        L = self.L
        keys = self.ptrv(d + L.off("PyDictObject.ma_keys"))
        values = self.ptrv(d + L.off("PyDictObject.ma_values"))
        return self.dict_entries(keys, values)

    def str_lookup(self, items, name):
        """The value of the str key name among items, or 0."""
        for k, v in items:
            if self.string(k) == name:
                return v
        return 0

    def instance_items(self, obj):
        """(key, value) addresses of an instance's attributes (its
        __dict__, or 3.11+'s values kept beside the object)."""
        L = self.L
        tp = self.ptrv(obj + L.off("PyObject.ob_type"))
        flags = self.u64(tp + L.off("PyTypeObject.tp_flags"))
        minor = L.minor
        if minor >= (3, 11) and flags & _MANAGED_DICT:
            cached = lambda: self.ptrv(tp + L.off("PyHeapTypeObject.ht_cached_keys"))
            slot = self.ptrv(obj - 3 * self.ptr)
            if minor == (3, 11):
                if slot:
                    return self.dict_items(slot)
                return self.dict_entries(cached(), self.ptrv(obj - 4 * self.ptr))
            if minor == (3, 12):
                if slot & 1:
                    return self.dict_entries(cached(), slot + 1)
                return self.dict_items(slot) if slot else []
            if slot:
                return self.dict_items(slot)
            if flags & _INLINE_VALUES:
                return self.dict_entries(cached(), obj + self.i64(tp + L.off("PyTypeObject.tp_basicsize")))
            return []
        off = self.i64(tp + L.off("PyTypeObject.tp_dictoffset"))
        if off <= 0:
            return []
        d = self.ptrv(obj + off)
        return self.dict_items(d) if d else []

    def python_names(self, interp):
        """threading's names of an interpreter's threads: {ident: name}
        (ident: the pthread_t CPython keeps as thread_id); {} when
        threading is not imported or cannot be read."""
        L = self.L
        key = "PyInterpreterState.imports.modules" if L.has("PyInterpreterState.imports.modules") else "PyInterpreterState.modules"
        out = {}
        try:
            modules = self.ptrv(interp + L.off(key))
            if not modules:
                return out
            mod = self.str_lookup(self.dict_items(modules), "threading")
            if not mod:
                return out
            md = self.ptrv(mod + L.off("PyModuleObject.md_dict"))
            active = self.str_lookup(self.dict_items(md), "_active")
            if not active:
                return out
            for k, t in self.dict_items(active):
                try:
                    ident = self.int_value(k)
                    name = self.str_lookup(self.instance_items(t), "_name")
                    if ident is not None and name and self.type_of(name)[0] == "str":
                        out[ident] = self.string(name)
                except WalkError:
                    continue
        except WalkError:
            pass
        return out

    def thread_infos(self):
        """{thread state address: ThreadInfo} for every thread state
        listed (Walker.threads)."""
        out = {}
        per_interp = {}
        for th in self.threads():
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
    user space), or None (a core, or /proc unreadable). kernel is
    kernel_view's answer, or None."""
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
    name = info.name if info is not None else None
    # A thread running in a subinterpreter keeps the name threading gave
    # it in the interpreter it called from (t.outer: Walker.os_threads).
    for o in (getattr(t, "outer", ()) if t is not None and name is None else ()):
        name = getattr(infos.get(o.tstate), "name", None)
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


class Exceptions(object):
    """The exception a thread is handling (in an except block), read from
    its thread state: exc_info (the top _PyErr_StackItem) and, as
    sys.exc_info() does, the items below it while they hold none; then
    the exception's type, args[0] and __traceback__ (tb_next to the
    innermost entry; tb_frame's code, tb_lineno, or from 3.12 on tb_lasti
    through the code's line table while tb_lineno is -1)."""

    def exception(self, tstate):
        """{"type", "message", "frames": [{"file", "line", "function"}]}
        of the exception the thread handles, innermost frame first (where
        it was raised), or None when it handles none or the build's
        layout lacks the fields. frames is [] when the traceback cannot
        be read."""
        L = self.L
        if not (L.has("PyThreadState.exc_info") and L.has("_PyErr_StackItem.exc_value")):
            return None
        item = self.ptrv(tstate + L.off("PyThreadState.exc_info"))
        exc, seen = 0, set()
        while item and item not in seen and len(seen) < MAX_TRACEBACK:
            seen.add(item)
            value = self.ptrv(item + L.off("_PyErr_StackItem.exc_value"))
            if value and self.type_of(value)[0] != "NoneType":
                exc = value
                break
            if not L.has("_PyErr_StackItem.previous_item"):
                break
            item = self.ptrv(item + L.off("_PyErr_StackItem.previous_item"))
        if not exc:
            return None
        out = {"type": self.type_of(exc)[0], "message": None, "frames": []}
        if L.has("PyBaseExceptionObject.args"):
            out["message"] = self._exc_message(self.ptrv(exc + L.off("PyBaseExceptionObject.args")))
        try:
            out["frames"] = self._exc_frames(exc)
        except WalkError:
            pass
        return out

    def _exc_message(self, args):
        """str(args[0]) for a str, else its repr; "" for no args."""
        if not args:
            return ""
        n = self.i64(args + self.L.off("PyVarObject.ob_size"))
        if n <= 0:
            return ""
        first = self.ptrv(args + self.L.off("PyTupleObject.ob_item"))
        name, static = self.type_of(first)
        if name == "str" and static:
            got = self.str_prefix(first, MAX_REPR)
            if got is not None:
                text, length = got
                return text if length <= MAX_REPR else text + TRUNCATED
        return self.value_repr(first)

    def _exc_frames(self, exc):
        L = self.L
        need = ("PyBaseExceptionObject.traceback", "PyTracebackObject.tb_next",
                "PyTracebackObject.tb_frame", "PyTracebackObject.tb_lineno")
        if not all(L.has(n) for n in need):
            return []
        tb = self.ptrv(exc + L.off("PyBaseExceptionObject.traceback"))
        entries, seen = [], set()
        while tb and tb not in seen:
            seen.add(tb)
            entries.append(tb)
            if len(entries) > MAX_TRACEBACK:
                entries.pop(0)
            tb = self.ptrv(tb + L.off("PyTracebackObject.tb_next"))
        frames = []
        for tb in reversed(entries):
            frame = self.ptrv(tb + L.off("PyTracebackObject.tb_frame"))
            line = self.i32(tb + L.off("PyTracebackObject.tb_lineno"))
            if L.minor >= (3, 11):
                inner = self.ptrv(frame + L.off("PyFrameObject.f_frame"))
                field = "_PyInterpreterFrame.f_code" if L.has("_PyInterpreterFrame.f_code") else "_PyInterpreterFrame.f_executable"
                code = self.ptrv(inner + L.off(field)) & executable_mask(L.minor)
            else:
                code = self.ptrv(frame + L.off("PyFrameObject.f_code"))
            c = self.code(code)
            if line < 0 and L.minor >= (3, 11) and L.has("PyTracebackObject.tb_lasti"):
                line = self._line_311(c, self.i32(tb + L.off("PyTracebackObject.tb_lasti")))
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
