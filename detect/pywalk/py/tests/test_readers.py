"""The per-type readers (pyattach_read_*), each alone on fake memory laid
out with the offset tables generated from real builds' DWARF
(detect/pyoffsets/offsets.json): str, bytes, int, float, tuple, list,
dict (combined and split, 3.11-3.12's and 3.13's insertion order), set,
instance attributes (tp_dictoffset, managed dicts, inline values,
__slots__), built-ins, and the repr chosen by ob_type."""

import os
import struct

import pytest

from pyattach_read_callables import CallableReader
from pyattach_read_containers import DictReader, SequenceReader, SetReader
from pyattach_read_instances import InstanceReader
from pyattach_read_repr import Readers, value_repr
from pyattach_read_scalars import BytesReader, FloatReader, IntReader, StrReader
from pyattach_read_types import HEAPTYPE, INLINE_VALUES, MANAGED_DICT, TypeReader
from pyattach_walk_layout import Layout, load_tables
from pyattach_walk_memory import Budget, Memory, WalkError

TABLES = load_tables(os.path.join(os.path.dirname(__file__), "..", "..", "..", "pyoffsets", "offsets.json"))


class Fake(object):
    """Memory of objects laid out by a Layout: blocks at 16-byte aligned
    addresses; reads outside every block fail."""

    def __init__(self, version):
        self.L = Layout(version, "", TABLES[version.rsplit(".", 1)[0]])
        self.f = self.L.f
        self.blocks = {}
        self.next = 0x10000
        self.reads = 0
        self.types = {}

    def read(self, addr, size):
        self.reads += 1
        for base, b in self.blocks.items():
            if base <= addr and addr + size <= base + len(b):
                return bytes(b[addr - base:addr - base + size])
        raise IOError("unmapped 0x%x" % addr)

    def alloc(self, size, before=0):
        """A zeroed block of size bytes (and before bytes ahead of the
        address returned)."""
        base = self.next
        self.blocks[base] = bytearray(before + size)
        self.next += (before + size + 0x2F) & ~0xF
        return base + before

    def put(self, addr, fmt, *v):
        for base, b in self.blocks.items():
            if base <= addr < base + len(b):
                struct.pack_into("<" + fmt, b, addr - base, *v)
                return
        raise IOError("unmapped 0x%x" % addr)

    def field(self, addr, name, fmt, v):
        self.put(addr + self.f[name], fmt, v)

    def cstr(self, s):
        a = self.alloc(len(s) + 32)  # C strings are read 32 bytes at a time
        self.put(a, "%ds" % len(s), s.encode())
        return a

    def typ(self, name, flags=0, dictoffset=0, basicsize=0):
        t = self.alloc(self.f["PyHeapTypeObject.ht_cached_keys"] + 8)
        self.field(t, "PyTypeObject.tp_name", "Q", self.cstr(name))
        self.field(t, "PyTypeObject.tp_flags", "Q", flags)
        self.field(t, "PyTypeObject.tp_dictoffset", "q", dictoffset)
        self.field(t, "PyTypeObject.tp_basicsize", "q", basicsize)
        return t

    def static(self, name):
        if name not in self.types:
            self.types[name] = self.typ(name)
        return self.types[name]

    def obj(self, tp, size=64, before=0):
        o = self.alloc(size, before)
        self.field(o, "PyObject.ob_type", "Q", tp)
        return o

    def str(self, s):
        """A compact str: ASCII, or latin-1 (kind 1) / UCS-2 (kind 2)."""
        ascii_ = all(ord(c) < 128 for c in s)
        kind = 1 if max([ord(c) for c in s] or [0]) < 256 else 2
        head = self.f["sizeof(PyASCIIObject)" if ascii_ else "sizeof(PyCompactUnicodeObject)"]
        a = self.obj(self.static("str"), head + kind * (len(s) + 1))
        self.field(a, "PyASCIIObject.length", "q", len(s))
        state = self.f["PyASCIIObject.state"] * 8
        word = ((kind << (self.f["PyASCIIObject.state.kind:bit_offset"] - state)) |
                (1 << (self.f["PyASCIIObject.state.compact:bit_offset"] - state)) |
                (int(ascii_) << (self.f["PyASCIIObject.state.ascii:bit_offset"] - state)))
        self.field(a, "PyASCIIObject.state", "I", word)
        data = s.encode("ascii" if ascii_ else ("latin-1" if kind == 1 else "utf-16-le"))
        self.put(a + head, "%ds" % len(data), data)
        return a

    def int(self, v):
        digits = []
        n = abs(v)
        while n:
            digits.append(n & ((1 << 30) - 1))
            n >>= 30
        a = self.obj(self.static("int"), 32 + 4 * len(digits))
        if "PyLongObject.long_value.lv_tag" in self.f:
            sign = 1 if v == 0 else (2 if v < 0 else 0)
            self.field(a, "PyLongObject.long_value.lv_tag", "Q", (len(digits) << 3) | sign)
            at = self.f["PyLongObject.long_value.ob_digit"]
        else:
            self.field(a, "PyVarObject.ob_size", "q", len(digits) * (-1 if v < 0 else 1))
            at = self.f["PyLongObject.ob_digit"]
        for i, d in enumerate(digits):
            self.put(a + at + 4 * i, "I", d)
        return a

    def keys(self, items, unicode=True, log2_size=3):
        """A keys table holding items ((key, value) addresses; value 0
        for a split table's keys)."""
        n = len(items)
        if "PyDictKeysObject.dk_log2_size" in self.f:
            esize = self.f["sizeof(PyDictUnicodeEntry)" if unicode else "sizeof(PyDictKeyEntry)"]
            ent = "PyDictUnicodeEntry" if unicode else "PyDictKeyEntry"
            index_bytes = 1 << log2_size
            k = self.alloc(self.f["PyDictKeysObject.dk_indices"] + index_bytes + esize * n)
            self.put(k + self.f["PyDictKeysObject.dk_log2_size"], "B", log2_size)
            self.put(k + self.f["PyDictKeysObject.dk_log2_index_bytes"], "B", log2_size)
            self.put(k + self.f["PyDictKeysObject.dk_kind"], "B", 1 if unicode else 0)
        else:
            esize, ent = self.f["sizeof(PyDictKeyEntry)"], "PyDictKeyEntry"
            index_bytes = 1 << log2_size
            k = self.alloc(self.f["PyDictKeysObject.dk_indices"] + index_bytes + esize * n)
            self.field(k, "PyDictKeysObject.dk_size", "q", 1 << log2_size)
        self.field(k, "PyDictKeysObject.dk_nentries", "q", n)
        at = k + self.f["PyDictKeysObject.dk_indices"] + index_bytes
        for i, (key, v) in enumerate(items):
            self.put(at + esize * i + self.f[ent + ".me_key"], "Q", key)
            self.put(at + esize * i + self.f[ent + ".me_value"], "Q", v)
        return k

    def dict(self, items, values=0, keys=None):
        d = self.obj(self.static("dict"))
        self.field(d, "PyDictObject.ma_used", "q", len([1 for _, v in items if v]) if not values else len(items))
        self.field(d, "PyDictObject.ma_keys", "Q", keys or self.keys(items))
        self.field(d, "PyDictObject.ma_values", "Q", values)
        return d

    def values_313(self, vals, order, capacity=8):
        """3.13+ PyDictValues: capacity, size (entries in order), valid,
        the values, then the order bytes."""
        at = self.f["PyDictValues.values"]
        v = self.alloc(at + 8 * capacity + capacity)
        self.put(v + self.f["PyDictValues.capacity"], "B", capacity)
        self.put(v + self.f["PyDictValues.size"], "B", len(order))
        self.put(v + self.f["PyDictValues.valid"], "B", 1)
        for i, x in enumerate(vals):
            self.put(v + at + 8 * i, "Q", x)
        for i, o in enumerate(order):
            self.put(v + at + 8 * capacity + i, "B", o)
        return v

    def values_312(self, vals, order):
        """3.11/3.12 values: the order in prefix bytes before them
        (values[-2] its length, values[-3] the first index...)."""
        prefix = 16
        v = self.alloc(8 * len(vals), before=prefix)
        self.put(v - 1, "B", prefix)
        self.put(v - 2, "B", len(order))
        for i, o in enumerate(order):
            self.put(v - 3 - i, "B", o)
        for i, x in enumerate(vals):
            self.put(v + 8 * i, "Q", x)
        return v

    def set(self, keys, slots=8, dead=None):
        size = self.f["sizeof(setentry)"]
        table = self.alloc(size * slots)
        for i, k in enumerate(keys):
            self.put(table + size * i + self.f["setentry.key"], "Q", k)
            self.put(table + size * i + self.f["setentry.hash"], "q", 100 + i)
        if dead is not None:
            self.put(table + size * dead + self.f["setentry.key"], "Q", self.obj(self.static("dummy")))
            self.put(table + size * dead + self.f["setentry.hash"], "q", -1)
        s = self.obj(self.static("set"), 200)
        self.field(s, "PySetObject.used", "q", len(keys))
        self.field(s, "PySetObject.mask", "q", slots - 1)
        self.field(s, "PySetObject.table", "Q", table)
        return s

    def memory(self):
        return Memory(self.read, Budget())


def test_str_bytes_int_float():
    m = Fake("3.12.1")
    mem = m.memory()
    strs = StrReader(mem, m.L)
    assert strs.value(m.str("gizmo")) == "gizmo"
    assert strs.value(m.str(u"caf\xe9")) == u"caf\xe9"
    assert strs.value(m.str(u"\u20ac10")) == u"\u20ac10"
    assert strs.value(0) == "<NULL>"
    assert strs.prefix(m.str("abcdef"), 3) == ("abc", 6)
    ints = IntReader(mem, m.L)
    for v in (0, 7, -7, 1 << 70, -(1 << 100) + 3):
        assert ints.value(m.int(v)) == v
    old = Fake("3.10.13")
    assert IntReader(old.memory(), old.L).value(old.int(-(1 << 65))) == -(1 << 65)
    b = m.obj(m.static("bytes"), 48)
    m.field(b, "PyVarObject.ob_size", "q", 3)
    m.put(b + m.f["PyBytesObject.ob_sval"], "3s", b"a\0b")
    assert BytesReader(mem, m.L).prefix(b, 10) == b"a\0b"
    assert BytesReader(mem, m.L).value(b, 2) == b""
    f = m.obj(m.static("float"))
    m.field(f, "PyFloatObject.ob_fval", "d", 2.5)
    assert FloatReader(mem, m.L).value(f) == 2.5


def test_sequences():
    m = Fake("3.12.1")
    seqs = SequenceReader(m.memory(), m.L)
    t = m.obj(m.static("tuple"), 64)
    m.field(t, "PyVarObject.ob_size", "q", 2)
    m.put(t + m.f["PyTupleObject.ob_item"], "QQ", 11, 22)
    assert seqs.size(t) == 2 and seqs.items(t, "tuple", 2) == (11, 22)
    items = m.alloc(24)
    m.put(items, "QQQ", 1, 2, 3)
    lst = m.obj(m.static("list"))
    m.field(lst, "PyVarObject.ob_size", "q", 3)
    m.field(lst, "PyListObject.ob_item", "Q", items)
    assert seqs.items(lst, "list", 3) == (1, 2, 3) and seqs.item(lst, "list", 1) == 2


@pytest.mark.parametrize("version", ["3.10.13", "3.11.7", "3.12.1", "3.13.0"])
def test_combined_dict(version):
    m = Fake(version)
    a, b = m.str("a"), m.str("b")
    items = [(a, 10), (0, 0), (b, 20)]  # a deleted entry between
    d = m.dict(items)
    dicts = DictReader(m.memory(), m.L)
    assert dicts.items(d) == [(a, 10), (b, 20)]
    assert dicts.first_items(d, 1) == ([(a, 10)], True)
    assert dicts.str_lookup(dicts.items(d), "b", StrReader(dicts.mem, m.L)) == 20


def test_general_keys_311():
    m = Fake("3.11.7")
    k = m.keys([(5, 50), (6, 60)], unicode=False)
    assert DictReader(m.memory(), m.L).entries(k) == [(5, 50), (6, 60)]


def test_split_dict_insertion_order():
    # 3.12: the order in prefix bytes before the values.
    m = Fake("3.12.1")
    keys = m.keys([(m.str("x"), 0), (m.str("y"), 0), (m.str("z"), 0)])
    vals = m.values_312([100, 0, 300], [2, 0])
    got = DictReader(m.memory(), m.L).entries(keys, vals)
    assert [v for _, v in got] == [300, 100]
    # 3.13: the order after the values.
    m = Fake("3.13.0")
    keys = m.keys([(m.str("x"), 0), (m.str("y"), 0), (m.str("z"), 0)])
    vals = m.values_313([100, 200, 300], [1, 2, 0])
    d = m.dict([(1, 0)] * 3, values=vals, keys=keys)
    dicts = DictReader(m.memory(), m.L)
    assert [v for _, v in dicts.items(d)] == [200, 300, 100]
    pairs, more = dicts.first_items(d, 2)
    assert [v for _, v in pairs] == [200, 300] and more


def test_dict_sizes_that_lie():
    m = Fake("3.12.1")
    k = m.keys([(m.str("a"), 1)])
    m.field(k, "PyDictKeysObject.dk_nentries", "q", 1 << 20)
    with pytest.raises(WalkError):
        DictReader(m.memory(), m.L).entries(k)
    m.field(k, "PyDictKeysObject.dk_nentries", "q", -1)
    with pytest.raises(WalkError):
        DictReader(m.memory(), m.L).entries(k)


def test_set():
    m = Fake("3.12.1")
    s = m.set([7, 8, 9], slots=8, dead=5)
    sets = SetReader(m.memory(), m.L)
    assert list(sets.keys(s)) == [7, 8, 9]
    m.field(s, "PySetObject.mask", "q", 6)  # 7 slots: not a power of two
    with pytest.raises(WalkError):
        list(sets.keys(s))


def _readers(m):
    mem = m.memory()
    types = TypeReader(mem, m.L)
    dicts = DictReader(mem, m.L)
    return mem, types, dicts, InstanceReader(mem, m.L, dicts, types)


def test_instance_dictoffset():
    m = Fake("3.10.13")
    mem, types, dicts, inst = _readers(m)
    dictoffset = 16  # where this made-up type keeps its __dict__
    tp = m.typ("Widget", HEAPTYPE, dictoffset=dictoffset)
    o = m.obj(tp)
    a = m.str("name")
    m.put(o + dictoffset, "Q", m.dict([(a, 42)]))
    assert inst.items(o) == [(a, 42)]
    assert inst.first_items(o, tp, types.flags(tp), 5) == [(a, 42)]
    assert inst.items(m.obj(m.typ("NoDict", HEAPTYPE))) == []


def test_instance_managed_312():
    m = Fake("3.12.1")
    mem, types, dicts, inst = _readers(m)
    tp = m.typ("Widget", HEAPTYPE | MANAGED_DICT)
    x = m.str("x")
    m.field(tp, "PyHeapTypeObject.ht_cached_keys", "Q", m.keys([(x, 0)]))
    o = m.obj(tp, before=32)
    vals = m.values_312([5], [0])
    m.put(o - 3 * 8, "Q", vals - 1)  # tagged: the values' address minus one
    assert inst.items(o) == [(x, 5)]
    d = m.dict([(x, 6)])
    m.put(o - 3 * 8, "Q", d)
    assert inst.items(o) == [(x, 6)]


def test_instance_inline_values_313():
    m = Fake("3.13.0")
    mem, types, dicts, inst = _readers(m)
    tp = m.typ("Widget", HEAPTYPE | MANAGED_DICT | INLINE_VALUES, basicsize=16)
    x, y = m.str("x"), m.str("y")
    m.field(tp, "PyHeapTypeObject.ht_cached_keys", "Q", m.keys([(x, 0), (y, 0)]))
    o = m.obj(tp, size=16 + m.f["PyDictValues.values"] + 8 * 4 + 4, before=32)
    at = o + 16
    m.put(at + m.f["PyDictValues.capacity"], "B", 4)
    m.put(at + m.f["PyDictValues.size"], "B", 2)
    m.put(at + m.f["PyDictValues.valid"], "B", 1)
    m.put(at + m.f["PyDictValues.values"], "QQ", 70, 80)
    m.put(at + m.f["PyDictValues.values"] + 8 * 4, "BB", 1, 0)
    assert inst.items(o) == [(y, 80), (x, 70)]
    m.put(at + m.f["PyDictValues.valid"], "B", 0)
    assert inst.first_items(o, tp, types.flags(tp), 5) is None


def test_slots():
    m = Fake("3.12.1")
    mem, types, dicts, inst = _readers(m)
    size = m.f["sizeof(PyMemberDef)"]
    members = m.alloc(size * 3)
    for i, (name, off) in enumerate((("a", 16), ("b", 24))):
        m.put(members + size * i + m.f["PyMemberDef.name"], "Q", m.cstr(name))
        m.put(members + size * i + m.f["PyMemberDef.type"], "i", 16)
        m.put(members + size * i + m.f["PyMemberDef.offset"], "q", off)
    tp = m.typ("Slotted", HEAPTYPE)
    m.field(tp, "PyTypeObject.tp_members", "Q", members)
    o = m.obj(tp)
    m.put(o + 16, "Q", 0x1234)
    got = inst.slots(o, tp)
    assert [(mem.cstring(n), v) for n, v in got] == [("a", 0x1234)]


def test_builtins_as_cpython_prints_them():
    m = Fake("3.11.7")
    mem = m.memory()
    ml = m.alloc(32)
    m.put(ml + m.f["PyMethodDef.ml_name"], "Q", m.cstr("len"))
    m.put(ml + m.f["PyMethodDef.ml_meth"], "Q", 0xC0DE)
    mod = m.obj(m.static("module"))
    fn = m.obj(m.static("builtin_function_or_method"))
    m.field(fn, "PyCFunctionObject.m_ml", "Q", ml)
    m.field(fn, "PyCFunctionObject.m_self", "Q", mod)
    calls = CallableReader(mem, m.L, TypeReader(mem, m.L))
    assert calls.builtin_line(fn) == "<built-in method len of module object at remote 0x%x>" % mod
    assert calls.builtin_c_function(fn) == 0xC0DE
    assert value_repr(Readers(mem, m.L), fn) == "<built-in method len of module object at remote 0x%x>" % mod
    m.field(fn, "PyCFunctionObject.m_self", "Q", 0)
    assert value_repr(Readers(mem, m.L), fn) == "<built-in function len>"


def test_repr_by_type():
    m = Fake("3.12.1")
    r = Readers(m.memory(), m.L)
    none = m.obj(m.static("NoneType"))
    assert value_repr(r, none) == "None"
    assert value_repr(r, m.int(-12)) == "-12"
    assert value_repr(r, m.str("it's")) == repr("it's")
    d = m.dict([(m.str("k"), m.int(1)), (m.str("n"), none)])
    assert value_repr(r, d) == "{'k': 1, 'n': None}"
    s = m.set([m.int(3)], dead=4)
    assert value_repr(r, s) == "{3}"
    tp = m.typ("Widget", HEAPTYPE, dictoffset=16)
    w = m.obj(tp)
    m.put(w + 16, "Q", m.dict([(m.str("name"), m.str("gizmo"))]))
    assert value_repr(r, w) == "<Widget(name='gizmo') at 0x%x>" % w
    # A list holding itself.
    items = m.alloc(8)
    lst = m.obj(m.static("list"))
    m.put(items, "Q", lst)
    m.field(lst, "PyVarObject.ob_size", "q", 1)
    m.field(lst, "PyListObject.ob_item", "Q", items)
    assert value_repr(r, lst) == "[[...]]"
    assert value_repr(r, 0xDEAD0) == "<unreadable at 0xdead0>"
    assert value_repr(r, m.obj(m.static("module"))).startswith("<module object at 0x")


def test_code_and_lines():
    from pyattach_read_code import CodeReader, line_311
    m = Fake("3.12.1")
    mem = m.memory()
    code = m.alloc(m.f["PyCodeObject.co_code_adaptive"] + 16)
    m.field(code, "PyCodeObject.co_filename", "Q", m.str("app.py"))
    m.field(code, "PyCodeObject.co_name", "Q", m.str("leaf"))
    m.field(code, "PyCodeObject.co_qualname", "Q", m.str("C.leaf"))
    m.field(code, "PyCodeObject.co_firstlineno", "i", 10)
    # Two entries: "one line" codes (10 + delta): 2 code units on line
    # 10, then 1 unit on line 12.
    table = bytes([0x80 | (10 << 3) | 1, 0, 0, 0x80 | (12 << 3) | 0, 0, 0])
    b = m.obj(m.static("bytes"), m.f["PyBytesObject.ob_sval"] + len(table) + 1)
    m.field(b, "PyVarObject.ob_size", "q", len(table))
    m.put(b + m.f["PyBytesObject.ob_sval"], "%ds" % len(table), table)
    m.field(code, "PyCodeObject.co_linetable", "Q", b)
    codes = CodeReader(mem, m.L, StrReader(mem, m.L), BytesReader(mem, m.L))
    c = codes.read(code)
    assert (c["filename"], c["name"], c["qualname"], c["firstlineno"]) == ("app.py", "leaf", "C.leaf", 10)
    assert c["code_start"] == code + m.f["PyCodeObject.co_code_adaptive"]
    assert [codes.line(c, i) for i in range(4)] == [10, 10, 12, None]
    assert line_311(c, 2) == 10
    reads = m.reads
    assert codes.read(code) is c and m.reads == reads  # read once


def test_task_and_future():
    from pyattach_read_asyncio import FutureReader, TaskReader
    m = Fake("3.14.10")
    mem = m.memory()
    f = m.f
    # From the _asyncio module's debug offsets at run time (3.14+).
    f["FutureObj.fut_awaited_by_is_set"] = f["FutureObj.fut_state"] + 4
    end = max(f["TaskObj.task_coro"], f["FutureObj.fut_awaited_by_is_set"], f["TaskObj.task_name"]) + 16
    t = m.obj(m.static("_asyncio.Task"), end)
    m.field(t, "TaskObj.task_name", "Q", m.int(7))
    m.field(t, "TaskObj.task_coro", "Q", 0xC0)
    m.field(t, "TaskObj.task_fut_waiter", "Q", 0xF0)
    m.field(t, "FutureObj.fut_state", "i", 2)
    tasks = TaskReader(mem, m.L, TypeReader(mem, m.L), StrReader(mem, m.L), IntReader(mem, m.L))
    got = tasks.read(t)
    assert (got.coro, got.waiter, got.state) == (0xC0, 0xF0, "done")
    assert tasks.name(got.name) == "Task-7" and tasks.name(m.str("worker")) == "worker"
    futures = FutureReader(mem, m.L, SetReader(mem, m.L))
    assert futures.awaiters(t, got.block) == []
    m.field(t, "FutureObj.fut_awaited_by", "Q", 0xA1)
    assert futures.awaiters(t) == [0xA1]
    m.field(t, "FutureObj.fut_awaited_by", "Q", m.set([0xB1, 0xB2]))
    m.field(t, "FutureObj.fut_awaited_by_is_set", "B", 1)
    assert futures.awaiters(t) == [0xB1, 0xB2] and futures.awaiters(t, limit=1) == [0xB1]
