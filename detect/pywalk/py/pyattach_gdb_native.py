"""The C frames that gdb's py-bt and py-bt-full show among the walker's
Python frames, where CPython's extension shows them: "Waiting for the
GIL" (take_gil), "Garbage-collecting" (collect, gc_collect_main), and
the built-in function or method-wrapper that Python called
("<built-in method sleep of module object at remote 0x..>").

The called object is the one CPython's extension reads from the call
frame's variable (func, wp) where DWARF has it. Without DWARF (a
stripped build), or where it is optimised out, the values the call
frames and the eval loop frame that made the call keep in registers and
on the eval loop's stack are tried: a value is taken only when it is a
built-in function (its type PyCFunction_Type or PyCMethod_Type) whose C
function (PyMethodDef.ml_meth) is the one the frame it called runs, as
the symbol table places it. Where nothing passes, no line is shown.
Without a symbol table the call frames cannot be named: every frame
whose caller is not the eval loop (a specialised call, which CPython's
extension does not show either) is tried, and a C function counts as the
one a frame runs only when it starts the unwind table entry (the
.eh_frame_hdr FDE) that holds the frame's address; without that table,
none does."""

import re

import gdb

import pyattach_walk as walk

# How many C frames of a thread are looked at, and how much of the eval
# loop's stack is read.
_MAX_FRAMES = 4096
_MAX_STACK = 8192
_REGISTERS = ("rbx", "rbp", "r12", "r13", "r14", "r15", "rdi", "rsi", "rdx", "rcx", "r8", "r9")

_INFO_SYMBOL = re.compile(r"^(.*?)(?: \+ (\d+))? in section ")


def _name(f):
    try:
        return f.name() or ""
    except (gdb.error, RuntimeError):
        return ""


def _level(f, counted):
    try:
        return f.level()
    except (AttributeError, gdb.error):
        return counted


def _symbol(name):
    try:
        return int(gdb.parse_and_eval("(unsigned long)&'%s'" % name))
    except gdb.error:
        return None


def _named():
    """Whether the symbol table names the interpreter's static functions
    (not a stripped build)."""
    return _symbol("cfunction_vectorcall_O") is not None


def _function_start(pc):
    """Where the symbol that holds pc starts, as gdb's symbol table (or,
    stripped, the dynamic one) says; None when none does."""
    try:
        out = gdb.execute("info symbol 0x%x" % pc, to_string=True)
    except gdb.error:
        return None
    m = _INFO_SYMBOL.match(out.strip())
    if not m:
        return None
    return pc - int(m.group(2) or 0)


_INFO_FILES = re.compile(r"^\s*0x([0-9a-f]+) - 0x([0-9a-f]+) is (\.\S+)(?: in (.*))?$")

# The .eh_frame_hdr forms read: version 1, a 4-byte eh_frame_ptr, a
# udata4 count, a table of (initial location, FDE) pairs, each a signed
# 4-byte offset from the header's start (DW_EH_PE_datarel|sdata4).
_EH_PTR_ENCODINGS = (0x03, 0x0B, 0x1B, 0x3B)
_EH_COUNT_ENCODING = 0x03
_EH_TABLE_ENCODING = 0x3B


class _Unwind(object):
    """Where each function starts as the unwind tables say, for a build
    with no symbol table: the start of the FDE that holds an address,
    found by a binary search of its object's .eh_frame_hdr table, read
    through the walker's memory (and budget)."""

    def __init__(self, w):
        self.w = w
        self.objects = None
        self.starts = {}

    def _load(self):
        """Per object (gdb's "info files"): its sections' ranges and its
        .eh_frame_hdr's."""
        objs = {}
        try:
            out = gdb.execute("info files", to_string=True)
        except gdb.error:
            out = ""
        for line in out.splitlines():
            m = _INFO_FILES.match(line)
            if not m:
                continue
            lo, hi, sec, path = int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4)
            o = objs.setdefault(path, {"ranges": [], "hdr": None})
            o["ranges"].append((lo, hi))
            if sec == ".eh_frame_hdr":
                o["hdr"] = (lo, hi)
        self.objects = list(objs.values())

    def start(self, pc):
        """The start of the FDE that holds pc (the greatest initial
        location not after it), None when no table says."""
        if pc not in self.starts:
            try:
                self.starts[pc] = self._start(pc)
            except walk.BudgetExhausted:
                raise
            except walk.WalkError:
                self.starts[pc] = None
        return self.starts[pc]

    def _start(self, pc):
        if self.objects is None:
            self._load()
        hdr = None
        for o in self.objects:
            if o["hdr"] and any(lo <= pc < hi for lo, hi in o["ranges"]):
                hdr = o["hdr"]
                break
        if hdr is None:
            return None
        w, base = self.w, hdr[0]
        head = w.read(base, 4)
        if head[0] != 1 or head[1] not in _EH_PTR_ENCODINGS or head[2] != _EH_COUNT_ENCODING or head[3] != _EH_TABLE_ENCODING:
            return None
        table = base + 12
        count = min(w.u32(base + 8), max(0, (hdr[1] - table) // 8))
        lo, hi, found = 0, count, None
        while lo < hi:
            mid = (lo + hi) // 2
            loc = base + w.i32(table + 8 * mid)
            if loc <= pc:
                found, lo = loc, mid + 1
            else:
                hi = mid
        return found


def _runs(fn, pc, unwind):
    """Whether the C function at fn is the one running at pc: no symbol
    starts between them; when no symbol holds pc, fn starts the FDE that
    holds it."""
    if not fn <= pc:
        return False
    start = _function_start(pc)
    if start is not None:
        return start <= fn
    return unwind.start(pc) == fn


def _is_eval(f):
    return walk.is_eval_loop(_name(f)) and f.type() == gdb.NORMAL_FRAME


def _values(frames):
    """Values kept in frames' registers and on the stack of the last of
    them (the eval loop frame that made the call)."""
    out = []
    for f in frames:
        for r in _REGISTERS:
            try:
                out.append(int(f.read_register(r)) & 0xFFFFFFFFFFFFFFFF)
            except (gdb.error, ValueError, RuntimeError):
                pass
    try:
        last = frames[-1]
        sp = int(last.read_register("rsp"))
        older = last.older()
        end = int(older.read_register("rsp")) if older is not None else sp + 512
        size = max(0, min(end - sp, _MAX_STACK)) & ~7
        if size:
            raw = bytes(gdb.selected_inferior().read_memory(sp, size))
            out.extend(int.from_bytes(raw[i:i + 8], "little") for i in range(0, size, 8))
    except (gdb.error, ValueError, RuntimeError, AttributeError):
        pass
    seen = set()
    res = []
    for v in out:
        if v > 0x10000 and not v & 7 and v not in seen:
            seen.add(v)
            res.append(v)
    return res


class _Types(object):
    """The addresses of the types of built-in functions and
    method-wrappers."""

    def __init__(self):
        self.builtin = set(a for a in (_symbol("PyCFunction_Type"), _symbol("PyCMethod_Type")) if a)
        self.wrapper = set(a for a in (_symbol("_PyMethodWrapper_Type"),) if a)


def _kind_of(w, addr, types):
    try:
        tp = w.ptrv(addr + w.L.off("PyObject.ob_type"))
    except walk.WalkError:
        return None
    if tp in types.builtin:
        return "builtin"
    if tp in types.wrapper:
        return "wrapper"
    return None


def _target(w, addr, kind):
    """The C function the built-in function or method-wrapper at addr
    calls first."""
    if kind == "builtin":
        return w.builtin_method(addr)
    return w.method_wrapper(addr)[2]


def _line(w, addr, kind):
    if kind == "builtin":
        return w.builtin_call_line(addr)
    return w.wrapper_call_line(addr)


def _dwarf_callable(w, f, kind, types):
    """The object CPython's extension reads from a call frame (func or
    wp), when DWARF has it and it is of that kind."""
    try:
        addr = int(f.read_var("func" if kind == "builtin" else "wp")) & 0xFFFFFFFFFFFFFFFF
    except (ValueError, gdb.error, RuntimeError):
        return None
    if addr and _kind_of(w, addr, types) == kind:
        return addr
    return None


def native_lines(w, frames):
    """(levels, natives) for the selected thread's Python frames (as
    Walker.frames read them): levels[i] is the level of the eval loop
    frame that runs frames[i] (i itself when not matched); natives maps
    an index of frames to the lines of C frames CPython's py-bt shows
    before frames[i], each (level, text). ({}, {}) when frames were
    omitted (the frames cannot be matched to the C ones)."""
    levels = list(range(len(frames)))
    natives = {}
    if getattr(frames, "omitted", 0) or not frames:
        return levels, natives
    merger = walk.StackMerger(walk.eval_groups(frames))
    try:
        cs = []
        f = gdb.newest_frame()
        while f is not None and len(cs) < _MAX_FRAMES:
            cs.append(f)
            f = f.older()
    except gdb.error:
        return levels, natives
    named = _named()
    types = _Types()
    unwind = _Unwind(w)
    index = 0
    gap_start = 0
    for n, f in enumerate(cs):
        is_eval = _is_eval(f)
        if not is_eval:
            continue
        index = _gap(w, cs, gap_start, n, index, named, types, unwind, natives)
        gap_start = n + 1
        _, group = merger.frame(_name(f), is_eval)
        if group:
            for _ in group:
                if index < len(levels):
                    levels[index] = _level(f, n)
                index += 1
    _gap(w, cs, gap_start, len(cs), index, named, types, unwind, natives)
    return levels, natives


def _gap(w, cs, lo, hi, index, named, types, unwind, natives):
    """Adds the lines of the C frames cs[lo:hi] (between two eval loop
    frames; cs[hi] is the one that called them) before frames[index]."""
    lines = []
    values = None
    for n in range(lo, hi):
        f = cs[n]
        name = _name(f)
        kind = walk.native_kind(name) if named else None
        if kind == "gil":
            lines.append((_level(f, n), walk.WAITING_FOR_GIL))
            continue
        if kind == "gc":
            lines.append((_level(f, n), walk.COLLECTING))
            continue
        # f called cs[n - 1]; never the eval loop itself (cs[hi]): its
        # own calls of C functions are specialised ones, which CPython's
        # extension does not show either.
        if named and kind not in ("builtin", "wrapper"):
            continue
        addr = None
        if kind is not None:
            addr = _dwarf_callable(w, f, kind, types)
        # The innermost frame (a breakpoint in wrapper_call) called
        # nothing: only DWARF's variable names its object.
        if addr is None and n == lo:
            continue
        if addr is None:
            if values is None:
                values = _candidates(w, _values(cs[lo:hi + 1]), types)
            # A method-wrapper's C function may run one frame further in
            # (wrapper_call calls it through wrapperdescr_raw_call where
            # that is not inlined).
            callees = [cs[n - 1]] + ([cs[n - 2]] if kind == "wrapper" and n - 2 >= lo else [])
            for callee in callees:
                addr, got = _validated(values, _pc_in(callee), kind, unwind)
                if addr is not None:
                    break
            kind = kind or got
        if addr is not None:
            try:
                lines.append((_level(f, n), _line(w, addr, kind)))
            except walk.WalkError:
                pass
    if lines:
        natives.setdefault(index, []).extend(lines)
    return index


def _candidates(w, values, types):
    """(address, kind, C function) of each built-in function and
    method-wrapper among values."""
    out = []
    for v in values:
        k = _kind_of(w, v, types)
        if k is None:
            continue
        try:
            out.append((v, k, _target(w, v, k)))
        except walk.WalkError:
            continue
    return out


def _pc_in(f):
    """An address inside the function that frame f runs: its pc, less
    one when that is a return address (a call may end a function)."""
    pc = f.pc()
    try:
        return pc - 1 if f.level() > 0 and f.type() == gdb.NORMAL_FRAME else pc
    except (AttributeError, gdb.error):
        return pc


def _validated(cands, pc, kind, unwind):
    """The candidate (see _candidates) whose C function runs at pc (the
    closest one when several do), and its kind; (None, None) when none
    does."""
    best, best_fn, best_kind = None, -1, None
    for v, k, fn in cands:
        if kind is not None and k != kind:
            continue
        if fn and best_fn < fn <= pc and _runs(fn, pc, unwind):
            best, best_fn, best_kind = v, fn, k
    return best, best_kind
