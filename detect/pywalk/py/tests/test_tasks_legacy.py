"""legacy_task_addrs over fake memory (FakeMemory with a made-up 3.12.99
layout of objects, dicts, sets, weak references and modules): the tasks
of a WeakSet's data set of weak references, an eager set and the current
tasks' dict, found once each though the C module binds the same
objects; dead references and deleted slots left out; the limit and the
total; and garbage (a set table that loops back onto the set, sizes that
lie, a huge readable table) that ends within the walk's Budget with a
one-line error naming the version."""

import random

import pytest

import pyattach_walk as w
import pyattach_walk_tasks_legacy as tl
from fakes import UNMAPPED, FakeMemory

VERSION = "3.12.99"
LFIELDS = {
    "_PyRuntimeState.interpreters.head": 0,
    "PyInterpreterState.next": 0, "PyInterpreterState.imports.modules": 8,
    "PyObject.ob_type": 8, "sizeof(PyObject)": 16,
    "PyTypeObject.tp_name": 24, "PyTypeObject.tp_flags": 32,
    "PyTypeObject.tp_dictoffset": 40, "PyTypeObject.tp_basicsize": 48,
    "PyASCIIObject.length": 16, "PyASCIIObject.state": 32, "sizeof(PyASCIIObject)": 40,
    "PyASCIIObject.state.kind:bit_offset": 258, "PyASCIIObject.state.kind:bit_size": 3,
    "PyASCIIObject.state.compact:bit_offset": 261, "PyASCIIObject.state.compact:bit_size": 1,
    "PyASCIIObject.state.ascii:bit_offset": 262, "PyASCIIObject.state.ascii:bit_size": 1,
    "PyDictObject.ma_used": 16, "PyDictObject.ma_keys": 32, "PyDictObject.ma_values": 40,
    "PyDictKeysObject.dk_log2_size": 8, "PyDictKeysObject.dk_log2_index_bytes": 9,
    "PyDictKeysObject.dk_kind": 10, "PyDictKeysObject.dk_nentries": 24,
    "PyDictKeysObject.dk_indices": 32, "sizeof(PyDictKeyEntry)": 24,
    "sizeof(PyDictUnicodeEntry)": 16, "PyDictValues.values": 0,
    "PyModuleObject.md_dict": 16,
    "PySetObject.fill": 16, "PySetObject.used": 24, "PySetObject.mask": 32, "PySetObject.table": 40,
    "setentry.key": 0, "setentry.hash": 8, "sizeof(setentry)": 16,
    "PyWeakReference.wr_object": 16,
    "TaskObj.task_name": 144,
}
HEAPTYPE = 1 << 9


class Mem(FakeMemory):
    """FakeMemory with objects of the layout above; addresses in
    [0x40000000, 0x40000000 + ZEROS) read as zeros (a huge table)."""

    ZERO_AT = 0x40000000
    ZEROS = 1 << 28

    def read(self, addr, size):
        if self.ZERO_AT <= addr < self.ZERO_AT + self.ZEROS:
            self.reads += 1
            return b"\0" * size
        return FakeMemory.read(self, addr, size)

    def typ(self, name, flags=0, dictoffset=0):
        t = self.alloc(b"\0" * 64)
        self.put(t, 24, "<Q", self.alloc(name.encode() + b"\0"))
        self.put(t, 32, "<Q", flags)
        self.put(t, 40, "<q", dictoffset)
        return t

    def obj(self, tp, size=64):
        o = self.alloc(b"\0" * size)
        self.put(o, 8, "<Q", tp)
        return o

    def string(self, s):
        a = self.obj(self.str_t, 40 + len(s) + 1)
        self.put(a, 16, "<q", len(s))
        self.put(a, 32, "<I", (1 << 2) | (1 << 5) | (1 << 6))
        self.blocks[a][40:40 + len(s)] = s.encode()
        return a

    def dict(self, items):
        """A combined dict of str keys (unicode entries)."""
        n = len(items)
        keys = self.alloc(b"\0" * (32 + 8 + 16 * n))
        self.blocks[keys][8:11] = bytes([3, 3, 1])
        self.put(keys, 24, "<q", n)
        for i, (k, v) in enumerate(items):
            self.put(keys, 40 + 16 * i, "<Q", self.string(k))
            self.put(keys, 48 + 16 * i, "<Q", v)
        d = self.obj(self.dict_t)
        self.put(d, 16, "<q", n)
        self.put(d, 32, "<Q", keys)
        return d

    def set(self, keys, slots=8, dead_slot=None):
        """A set of keys in a table of slots (a deleted slot at dead_slot)."""
        table = self.alloc(b"\0" * (16 * slots))
        for i, k in enumerate(keys):
            self.put(table, 16 * i, "<Q", k)
            self.put(table, 16 * i + 8, "<q", 12345 + i)
        if dead_slot is not None:
            self.put(table, 16 * dead_slot, "<Q", self.obj(self.none_t))
            self.put(table, 16 * dead_slot + 8, "<q", -1)
        s = self.obj(self.set_t, 200)
        self.put(s, 16, "<q", len(keys) + (dead_slot is not None))
        self.put(s, 24, "<q", len(keys))
        self.put(s, 32, "<q", slots - 1)
        self.put(s, 40, "<Q", table)
        return s

    def weakref(self, target):
        r = self.obj(self.ref_t)
        self.put(r, 16, "<Q", target)
        return r

    def task(self, name):
        t = self.obj(self.task_t, 192)
        self.put(t, 144, "<Q", self.string(name))
        return t

    def interp(self, modules):
        i = self.alloc()
        self.put(i, 8, "<Q", modules)
        return i


def world():
    """A process of one interpreter running asyncio: tasks a..e in the
    WeakSet (and a dead reference), f in the eager set, a running (the
    current tasks' dict); the C module binds the same WeakSet."""
    m = Mem()
    m.str_t = m.typ("str")
    m.dict_t = m.typ("dict")
    m.set_t = m.typ("set")
    m.none_t = m.typ("NoneType")
    m.ref_t = m.typ("weakref.ReferenceType")
    m.task_t = m.typ("_asyncio.Task")
    m.none = m.obj(m.none_t)
    ws_t = m.typ("WeakSet", HEAPTYPE, 16)
    m.tasks = [m.task(n) for n in "abcdef"]
    refs = [m.weakref(t) for t in m.tasks[:5]] + [m.weakref(m.none)]
    data = m.set(refs, slots=16, dead_slot=9)
    ws = m.obj(ws_t)
    m.put(ws, 16, "<Q", m.dict([("data", data), ("_pending_removals", m.none)]))
    eager = m.set([m.tasks[5]])
    loop = m.obj(m.typ("_UnixSelectorEventLoop", HEAPTYPE))
    cur = m.dict([("x", m.tasks[0])])
    tasks_mod = m.obj(m.typ("module"))
    m.put(tasks_mod, 16, "<Q", m.dict([("_scheduled_tasks", ws), ("_eager_tasks", eager), ("_current_tasks", cur), ("sleep", loop)]))
    c_mod = m.obj(m.typ("module"))
    m.put(c_mod, 16, "<Q", m.dict([("_scheduled_tasks", ws), ("_current_tasks", cur)]))
    modules = m.dict([("sys", m.none), ("asyncio.tasks", tasks_mod), ("_asyncio", c_mod)])
    runtime = m.alloc()
    m.put(runtime, 0, "<Q", m.interp(modules))
    m.ws, m.data, m.runtime = ws, data, runtime
    return m


def walker(m, **budget):
    return w.Walker(m.read, m.runtime, w.Layout(VERSION, "", LFIELDS), budget=w.Budget(**budget))


def test_every_task_once():
    # a..e from the WeakSet, f from the eager set, a again from the
    # current tasks and the C module's binding.
    m = world()
    ww = walker(m)
    addrs, total, err = tl.legacy_task_addrs(ww, 100)
    assert err is None, err
    assert sorted(addrs) == sorted(m.tasks), (addrs, m.tasks)
    assert total == 6, total
    names = [ww.string(ww.ptrv(a + 144)) for a in addrs]
    assert names == list("abcdef"), names


def test_limit_counts_past_it():
    # 2 read; past the limit weak references are counted, not read (the
    # dead one too).
    m = world()
    addrs, total, err = tl.legacy_task_addrs(walker(m), 2)
    assert err is None and len(addrs) == 2 and total == 7, (addrs, total, err)


@pytest.mark.parametrize("limit", range(8))
def test_limits(limit):
    addrs, total, err = tl.legacy_task_addrs(walker(world()), limit)
    assert len(addrs) == min(limit, 6) and total == (6 if limit >= 6 else 7), (limit, addrs, total)


def test_no_asyncio_no_tasks_no_error():
    m = world()
    m.put(m.runtime, 0, "<Q", m.interp(m.dict([("sys", m.none)])))
    assert tl.legacy_task_addrs(walker(m), 10) == ([], 0, None)


def test_asyncio_tasks_without_names_error_names_version():
    m = world()
    m.put(m.runtime, 0, "<Q", m.interp(m.dict([("asyncio.tasks", m.obj(m.typ("module")))])))
    tm = m.obj(m.typ("module"))
    m.put(tm, 16, "<Q", m.dict([("sleep", m.none)]))
    m.put(m.runtime, 0, "<Q", m.interp(m.dict([("asyncio.tasks", tm)])))
    addrs, total, err = tl.legacy_task_addrs(walker(m), 10)
    assert addrs == [] and err.startswith("Python 3.12.99: asyncio.tasks has none of _all_tasks"), err
    assert "\n" not in err


def test_set_table_looping_onto_set_ends():
    # It ends, having read only what the table's 8 slots span.
    g = world()
    s = g.data
    g.put(s, 40, "<Q", s)
    g.put(s, 32, "<q", 7)
    g.put(s, 24, "<q", 8)
    before = g.reads
    addrs, total, err = tl.legacy_task_addrs(walker(g), 100)
    assert g.reads - before < 400, g.reads - before
    assert g.tasks[5] in addrs, "the eager set is still read"


@pytest.mark.parametrize("used,mask", [(1 << 40, 7), (3, (1 << 30) - 1), (3, 6), (-1, 7)])
def test_set_sizes_that_lie(used, mask):
    # More keys than slots, more slots than MAX_SET_SLOTS, a mask that is
    # not a power of two less one, a negative count.
    g = world()
    g.put(g.data, 24, "<q", used)
    g.put(g.data, 32, "<q", mask)
    before = g.reads
    addrs, total, err = tl.legacy_task_addrs(walker(g), 100)
    assert err and err.startswith("Python 3.12.99: cannot read the tasks' weakset: set at 0x"), err
    assert g.tasks[5] in addrs and g.reads - before < 400, (addrs, g.reads - before)


@pytest.fixture
def huge_table():
    """The largest table believed, all of it readable and empty but
    claiming keys."""
    g = world()
    g.put(g.data, 40, "<Q", Mem.ZERO_AT)
    g.put(g.data, 32, "<q", tl.MAX_SET_SLOTS - 1)
    g.put(g.data, 24, "<q", 5)
    return g


def test_huge_table_ends_with_budget(huge_table):
    ww = walker(huge_table, max_reads=3000)
    addrs, total, err = tl.legacy_task_addrs(ww, 100)
    assert err == "Python 3.12.99: task list cut: budget of 3,000 memory reads used up", err
    assert ww.budget.reads <= 3001, ww.budget.reads


def test_huge_table_without_reads_limit_ends_at_its_end(huge_table):
    # 2**22 slots in reads of 256 (the running task and the eager one are
    # still found).
    g = huge_table
    g.reads = 0
    addrs, total, err = tl.legacy_task_addrs(walker(g, max_reads=0, max_bytes=0), 100)
    assert err is None and sorted(addrs) == sorted([g.tasks[0], g.tasks[5]]), (addrs, err)
    assert g.reads < (tl.MAX_SET_SLOTS // 256) + 400, g.reads


def test_unreadable_weakrefs_and_tasks_skipped():
    g = world()
    bad = g.set([UNMAPPED, g.weakref(0x7fff1000), g.weakref(g.tasks[1])])
    g.put(g.ws, 16, "<Q", g.dict([("data", bad)]))
    addrs, total, err = tl.legacy_task_addrs(walker(g), 100)
    assert err is None and sorted(addrs) == sorted([g.tasks[0], g.tasks[1], g.tasks[5]]), (addrs, err)


def test_random_garbage_returns_within_budget():
    # Words of the world overwritten with random values, small numbers
    # and addresses of other blocks. Every run returns (never raises)
    # within its budget, with at most limit addresses.
    for seed in range(300):
        rnd = random.Random(seed)
        g = world()
        blocks = sorted(g.blocks)
        for _ in range(rnd.randint(1, 40)):
            b = rnd.choice(blocks)
            off = 8 * rnd.randrange(len(g.blocks[b]) // 8)
            v = rnd.choice([rnd.getrandbits(64), rnd.randint(-3, 300), rnd.choice(blocks) + 8 * rnd.randint(0, 8)])
            g.put(b, off, "<Q", v & 0xFFFFFFFFFFFFFFFF)
        ww = walker(g, max_reads=20000, timeout=0)
        addrs, total, err = tl.legacy_task_addrs(ww, 4)
        assert isinstance(addrs, list) and len(addrs) <= 4 and total >= len(addrs), (seed, addrs, total)
        assert err is None or ("\n" not in err and err.startswith("Python 3.12.99: ")), (seed, err)
        assert ww.budget.reads <= 20001, (seed, ww.budget.reads)
