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
extension does not show either) is tried."""

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


# Without a symbol that holds pc (a static function of a stripped
# build), how far before pc the C function may start.
_MAX_UNNAMED = 1 << 16


def _runs(fn, pc):
    """Whether the C function at fn is the one running at pc: no symbol
    starts between them, and fn is close before pc when no symbol holds
    either."""
    if not fn <= pc:
        return False
    start = _function_start(pc)
    if start is not None:
        return start <= fn
    return pc - fn < _MAX_UNNAMED and _function_start(fn) is None


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
    groups = walk.eval_groups(frames)
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
    index = 0
    gap_start = 0
    for n, f in enumerate(cs):
        if not _is_eval(f):
            continue
        index = _gap(w, cs, gap_start, n, index, named, types, natives)
        gap_start = n + 1
        if groups:
            for _ in groups.pop(0):
                if index < len(levels):
                    levels[index] = _level(f, n)
                index += 1
    _gap(w, cs, gap_start, len(cs), index, named, types, natives)
    return levels, natives


def _gap(w, cs, lo, hi, index, named, types, natives):
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
        if n == lo or (named and kind not in ("builtin", "wrapper")):
            continue
        addr = None
        if kind is not None:
            addr = _dwarf_callable(w, f, kind, types)
        if addr is None:
            if values is None:
                values = _candidates(w, _values(cs[lo:hi + 1]), types)
            addr, got = _validated(values, cs[n - 1].pc(), kind)
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


def _validated(cands, pc, kind):
    """The candidate (see _candidates) whose C function runs at pc (the
    closest one when several do), and its kind; (None, None) when none
    does."""
    best, best_fn, best_kind = None, -1, None
    for v, k, fn in cands:
        if kind is not None and k != kind:
            continue
        if fn and best_fn < fn <= pc and _runs(fn, pc):
            best, best_fn, best_kind = v, fn, k
    return best, best_kind
