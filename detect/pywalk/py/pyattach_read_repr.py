"""The bounded repr() of a value in the inferior's memory, as py-locals,
py-print and dump --locals print it: chosen by the object's type
(ob_type), one function per static type (REPRS), instances of classes
from their __dict__ and __slots__, anything else as "<TYPE object at
0xADDR>". The values are read by the per-type readers (Readers)."""

from pyattach_read_asyncio import FutureReader, TaskReader
from pyattach_read_callables import CallableReader
from pyattach_read_code import CodeReader
from pyattach_read_containers import DictReader, SequenceReader, SetReader
from pyattach_read_instances import InstanceReader
from pyattach_read_scalars import (
    MAX_INT_DECIMAL, BytesReader, FloatReader, IntReader, StrReader, int_decimal)
from pyattach_read_types import HEAPTYPE, TypeCache, TypeReader
from pyattach_walk_memory import BudgetExhausted, WalkError
from pyattach_walk_text import MAX_REPR, bounded, escape

# How far a repr goes: containers and instances nested deeper than
# MAX_DEPTH show as type and address, the first MAX_ITEMS items of each
# are shown, then "..."; one value's repr stops adding items after
# MAX_VALUE_READS memory reads (and the walk's Budget holds as ever).
MAX_DEPTH = 3
MAX_ITEMS = 10
MAX_VALUE_READS = 2000
# A set's table of more slots than this is not believed (a repr reads
# only its first keys).
_MAX_REPR_SET_SLOTS = 1 << 30
# Set entries a repr reads at once.
_REPR_SET_CHUNK = 64


class Readers(object):
    """One reader per CPython type, all reading through mem (a
    pyattach_walk_memory.Memory) with the Layout L and pointer size ptr."""

    def __init__(self, mem, layout, ptr=8):
        self.mem = mem
        self.L = layout
        self.types = TypeReader(mem, layout)
        self.strs = StrReader(mem, layout)
        self.bytes = BytesReader(mem, layout)
        self.ints = IntReader(mem, layout)
        self.floats = FloatReader(mem, layout)
        self.seqs = SequenceReader(mem, layout, ptr)
        self.dicts = DictReader(mem, layout, ptr)
        self.sets = SetReader(mem, layout)
        self.instances = InstanceReader(mem, layout, self.dicts, self.types, ptr)
        self.callables = CallableReader(mem, layout, self.types)
        self.code = CodeReader(mem, layout, self.strs, self.bytes)
        self.tasks = TaskReader(mem, layout, self.types, self.strs, self.ints, ptr)
        self.futures = FutureReader(mem, layout, self.sets, ptr)


class _Context(object):
    """One repr's state: its length and read bounds, the containers
    being printed (cycles) and the types read."""

    def __init__(self, readers, limit):
        self.r = readers
        self.limit = limit
        self.chars = 0
        self.budget = readers.mem.budget
        self.reads_end = self.budget.reads + MAX_VALUE_READS
        self.active = set()
        self.types = TypeCache(readers.types)

    def add(self, text):
        self.chars += len(text)
        return text

    def spent(self):
        return self.chars > self.limit or self.budget.reads > self.reads_end


def value_repr(readers, addr, limit=MAX_REPR):
    """repr() of the object at addr, as repr() writes it, for None, bool,
    int, float, str, bytes, tuple, list, dict, set, frozenset and
    instances of classes ("<Widget(name='gizmo') at 0x..>", from the
    instance's __dict__ and __slots__); built-ins as CPython's gdb
    extension prints them; "<TYPE object at 0xADDR>" for anything else,
    "<unreadable at 0xADDR>" where memory cannot be read. Cut at limit
    characters."""
    ctx = _Context(readers, limit)
    return bounded(_repr(addr, ctx, 0), limit)


def _repr(addr, ctx, depth):
    try:
        return _repr_of(addr, ctx, depth)
    except BudgetExhausted:
        raise
    except WalkError:
        return "<unreadable at 0x%x>" % addr


def _repr_of(addr, ctx, depth):
    tp, name, flags = ctx.types.of(addr)
    if flags & HEAPTYPE:
        return _instance(addr, tp, name, flags, ctx, depth)
    how = REPRS.get(name)
    if name in _CONTAINERS:
        # A container's length is that of its items' reprs (added as
        # each is made).
        return _container(how, addr, name, ctx, depth)
    if how is not None:
        text = how(addr, name, ctx, depth)
        if text is not None:
            return ctx.add(text)
    return ctx.add("<%s object at 0x%x>" % (escape(name), addr))


def _none(addr, name, ctx, depth):
    return "None"


def _bool(addr, name, ctx, depth):
    return "True" if ctx.r.ints.value(addr) else "False"


def _int(addr, name, ctx, depth):
    v = ctx.r.ints.value(addr)
    if v is None:
        return None
    text = int_decimal(v)
    return text if len(text.lstrip("-")) <= MAX_INT_DECIMAL else None


def _float(addr, name, ctx, depth):
    return repr(ctx.r.floats.value(addr))


def _str(addr, name, ctx, depth):
    got = ctx.r.strs.prefix(addr, ctx.limit + 1)
    return None if got is None else repr(got[0])


def _bytes(addr, name, ctx, depth):
    data = ctx.r.bytes.prefix(addr, ctx.limit + 1)
    return None if data is None else _bytes_repr(data)


def _builtin(addr, name, ctx, depth):
    return ctx.r.callables.builtin_line(addr)


def _items(ptrs, ctx, depth):
    """Reprs of the objects at ptrs (at most MAX_ITEMS of them are
    given), "..." after them when more is left or the value's reads or
    length are spent."""
    out = []
    for p in ptrs:
        if ctx.spent():
            out.append("...")
            break
        out.append(_repr(p, ctx, depth + 1))
    return out


def _container(how, addr, name, ctx, depth):
    if depth >= MAX_DEPTH:
        return ctx.add("<%s object at 0x%x>" % (name, addr))
    if addr in ctx.active:
        return ctx.add({"tuple": "(...)", "list": "[...]", "dict": "{...}"}.get(name, name + "(...)"))
    ctx.active.add(addr)
    try:
        return how(addr, name, ctx, depth)
    finally:
        ctx.active.discard(addr)


def _sequence(addr, name, ctx, depth):
    seqs = ctx.r.seqs
    n = seqs.size(addr)
    if n < 0:
        raise WalkError("%s of size %d" % (name, n))
    k = min(n, MAX_ITEMS)
    parts = _items(seqs.items(addr, name, k), ctx, depth)
    if n > k and parts[-1:] != ["..."]:
        parts.append("...")
    if name == "list":
        return "[" + ", ".join(parts) + "]"
    if n == 1:
        return "(" + parts[0] + ",)"
    return "(" + ", ".join(parts) + ")"


def _set(addr, name, ctx, depth):
    used, slots, table = ctx.r.sets.table(addr, _MAX_REPR_SET_SLOTS)
    keys = []
    for key in ctx.r.sets.table_keys(used, slots, table, _REPR_SET_CHUNK, ctx.spent):
        keys.append(key)
        if len(keys) >= MAX_ITEMS:
            break
    parts = _items(keys, ctx, depth)
    if used > len(keys) and parts[-1:] != ["..."]:
        parts.append("...")
    if not used:
        return name + "()"
    body = "{" + ", ".join(parts) + "}"
    return body if name == "set" else "frozenset(" + body + ")"


def _dict(addr, name, ctx, depth):
    pairs, more = ctx.r.dicts.first_items(addr, MAX_ITEMS + 1, ctx.spent)
    parts = []
    for k, v in pairs:
        if ctx.spent():
            more = True
            break
        parts.append(_repr(k, ctx, depth + 1) + ": " + _repr(v, ctx, depth + 1))
    if more:
        parts.append("...")
    return "{" + ", ".join(parts) + "}"


def _instance(addr, tp, name, flags, ctx, depth):
    """"<NAME(attr=repr, ...) at 0xADDR>" of an instance of a class,
    from its __dict__ and __slots__; "<NAME object at 0xADDR>" when
    neither can be read."""
    name = escape(name)
    if depth >= MAX_DEPTH:
        return ctx.add("<%s object at 0x%x>" % (name, addr))
    if addr in ctx.active:
        return ctx.add("<%s(...) at 0x%x>" % (name, addr))
    ctx.active.add(addr)
    try:
        attrs = _attributes(addr, tp, flags, ctx)
        if attrs is None:
            return ctx.add("<%s object at 0x%x>" % (name, addr))
        parts = []
        for k, v in attrs:
            if ctx.spent():
                parts.append("...")
                break
            if k is None:
                parts.append("...")
                continue
            parts.append("%s=%s" % (k, _repr(v, ctx, depth + 1)))
        return "<%s(%s) at 0x%x>" % (name, ", ".join(parts), addr)
    finally:
        ctx.active.discard(addr)


def _attributes(addr, tp, flags, ctx):
    """(name, value address) of an instance's attributes (name None for
    "more not shown"), or None when it has neither a __dict__ nor
    __slots__ the walker can read."""
    r = ctx.r
    found = None
    try:
        pairs = r.instances.first_items(addr, tp, flags, MAX_ITEMS + 1, ctx.spent)
    except BudgetExhausted:
        raise
    except WalkError:
        pairs = None
    if pairs is not None:
        found = []
        for k, v in pairs:
            if not k or len(found) >= MAX_ITEMS:
                found.append((None, 0))
                break
            found.append((escape(r.strs.value(k)), v))
    slots = r.instances.slots(addr, tp)
    if slots is not None:
        found = (found or []) + [(escape(r.mem.cstring(n)), v) for n, v in slots]
    return found


def _bytes_repr(data):
    """repr() of bytes, the same under Python 2 (gdb's Python may be 2)."""
    r = repr(bytes(data))
    return r if r.startswith("b") else "b" + r


# The repr of each static type by its tp_name (a class a program
# defines is an instance, whatever its name).
REPRS = {
    "NoneType": _none,
    "bool": _bool,
    "int": _int,
    "float": _float,
    "str": _str,
    "bytes": _bytes,
    "tuple": _sequence,
    "list": _sequence,
    "dict": _dict,
    "set": _set,
    "frozenset": _set,
    "builtin_function_or_method": _builtin,
}
_CONTAINERS = ("tuple", "list", "dict", "set", "frozenset")
