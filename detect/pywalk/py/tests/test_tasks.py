"""The walker's asyncio tasks (pyattach_walk_tasks) over a fake 3.14
process (made-up offsets, an .AsyncioDebug block in its memory): names
(a str, an unnamed task's number), states, a chain of coroutines,
awaits, awaited_by sets, cycles; then what must not hang or crash on
garbage: a task list that loops, one that leads to unreadable memory, a
coroutine awaiting itself, debug offsets that are no such thing; and
100,000 tasks, capped, counted, in bounded reads."""

import struct

import pytest

import pyattach_walk as w

FIELDS = {
    "_PyRuntimeState.interpreters.head": 0,
    "PyInterpreterState.next": 0, "PyInterpreterState.threads.head": 8, "PyInterpreterState.id": 16,
    "PyThreadState.next": 0, "PyThreadState.thread_id": 8, "PyThreadState.native_thread_id": 16,
    "PyThreadState.current_frame": 24,
    "PyObject.ob_type": 8, "sizeof(PyObject)": 16, "PyTypeObject.tp_name": 24, "PyTypeObject.tp_flags": 32,
    "PyASCIIObject.length": 16, "PyASCIIObject.state": 32, "sizeof(PyASCIIObject)": 40,
    "PyASCIIObject.state.kind:bit_offset": 258, "PyASCIIObject.state.kind:bit_size": 3,
    "PyASCIIObject.state.compact:bit_offset": 261, "PyASCIIObject.state.compact:bit_size": 1,
    "PyASCIIObject.state.ascii:bit_offset": 262, "PyASCIIObject.state.ascii:bit_size": 1,
    "PyLongObject.long_value.lv_tag": 16, "PyLongObject.long_value.ob_digit": 24,
    "PyVarObject.ob_size": 16, "PyBytesObject.ob_sval": 32,
    "PyCodeObject.co_filename": 16, "PyCodeObject.co_name": 24, "PyCodeObject.co_qualname": 32,
    "PyCodeObject.co_firstlineno": 40, "PyCodeObject.co_linetable": 48, "PyCodeObject.co_code_adaptive": 64,
    "PyGenObject.gi_frame_state": 67, "PyGenObject.gi_iframe": 72,
    "_PyInterpreterFrame.f_executable": 0, "_PyInterpreterFrame.previous": 8,
    "_PyInterpreterFrame.instr_ptr": 56, "_PyInterpreterFrame.stackpointer": 64,
    "_PyInterpreterFrame.localsplus": 80, "_PyInterpreterFrame.owner": 70,
    "PySetObject.used": 24, "PySetObject.mask": 32, "PySetObject.table": 40,
    "setentry.key": 0, "setentry.hash": 8, "sizeof(setentry)": 16,
}
# _Py_AsyncioModuleDebugOffsets, 3.14's values.
DEBUG = [168, 136, 96, 108, 109, 128, 152, 512, 64, 256, 96, 104, 112]
SUSPENDED_YIELD_FROM = -1


class Mem(object):
    """Sparse memory of 64-byte blocks from 0x100000; reads count; put
    writes at an address inside any block."""

    def __init__(self):
        self.blocks = {}
        self.next = 0x100000
        self.reads = 0

    def alloc(self, size=64):
        size = (size + 63) // 64 * 64
        a = self.next
        self.next += size
        self.blocks[a] = bytearray(size)
        return a

    def put(self, addr, fmt, v):
        base = addr - addr % 64
        while base not in self.blocks:
            base -= 64
        struct.pack_into(fmt, self.blocks[base], addr - base, v)

    def read(self, addr, size):
        self.reads += 1
        if not 0x100000 <= addr < self.next:
            raise IOError("unmapped")
        base = addr - addr % 64
        while base not in self.blocks:
            base -= 64
        return bytes(self.blocks[base][addr - base:addr - base + size])

    def type(self, name, static=True):
        tp = self.alloc(128)
        cs = self.alloc(64)
        self.blocks[cs][:len(name)] = name.encode()
        self.put(tp + 24, "<Q", cs)
        self.put(tp + 32, "<Q", 0 if static else 1 << 9)
        return tp


class Process(object):
    """A 3.14 process of one interpreter and one thread state, each with
    a task list, and the asyncio module's debug offsets (at debug)."""

    def __init__(self):
        m = self.m = Mem()
        self.STR, self.INT, self.CORO, self.TASK, self.FUT = (
            m.type(n) for n in ("str", "int", "coroutine", "_asyncio.Task", "_asyncio.Future"))
        self.runtime = m.alloc(64)
        self.interp = m.alloc(512)
        self.tstate = m.alloc(256)
        m.put(self.runtime, "<Q", self.interp)
        m.put(self.interp + 8, "<Q", self.tstate)
        m.put(self.tstate + 8, "<Q", 0x7000)
        m.put(self.tstate + 16, "<Q", 42)
        self.debug = m.alloc(128)
        for i, v in enumerate(DEBUG):
            m.put(self.debug + 8 * i, "<Q", v)
        for head in (self.interp + 64, self.tstate + 112):
            m.put(head, "<Q", head)
            m.put(head + 8, "<Q", head)

    def string(self, s):
        m = self.m
        a = m.alloc(48 + len(s))
        m.put(a + 8, "<Q", self.STR)
        m.put(a + 16, "<q", len(s))
        m.put(a + 32, "<I", (1 << 2) | (1 << 5) | (1 << 6))
        m.blocks[a][40:40 + len(s)] = s.encode()
        return a

    def integer(self, v):
        m = self.m
        a = m.alloc(64)
        m.put(a + 8, "<Q", self.INT)
        m.put(a + 16, "<Q", 1 << 3)
        m.put(a + 24, "<I", v)
        return a

    def code(self, name):
        m = self.m
        c = m.alloc(128)
        m.put(c + 16, "<Q", self.string("/app.py"))
        m.put(c + 24, "<Q", self.string(name))
        m.put(c + 32, "<Q", self.string(name))
        m.put(c + 40, "<i", 10)
        return c

    def coro(self, name, awaits=0):
        m = self.m
        g = m.alloc(256)
        m.put(g + 8, "<Q", self.CORO)
        m.put(g + 67, "<b", SUSPENDED_YIELD_FROM)
        f = g + 72
        c = self.code(name)
        m.put(f, "<Q", c | 1)
        m.put(f + 56, "<Q", c + 64 + 4)
        m.put(f + 80, "<Q", awaits)
        m.put(f + 64, "<Q", f + 88)
        return g

    def link(self, head, task):
        """Appends task to the list at head (task_node at 152)."""
        m = self.m
        node = task + 152
        last = self.last(head)
        m.put(last, "<Q", node)
        m.put(node, "<Q", head)
        m.put(node + 8, "<Q", last)
        m.put(head + 8, "<Q", node)

    def last(self, head):
        """The last node of the list at head."""
        return struct.unpack("<Q", self.m.read(head + 8, 8))[0]

    def task(self, name, co=0, state=0, waiter=0, head=None):
        m = self.m
        t = m.alloc(192)
        m.put(t + 8, "<Q", self.TASK)
        m.put(t + 136, "<Q", name if isinstance(name, int) else self.string(name))
        m.put(t + 104, "<i", state)
        m.put(t + 128, "<Q", co)
        m.put(t + 120, "<Q", waiter)
        self.link(head or self.tstate + 112, t)
        return t

    def set_by(self, t, ids):
        m = self.m
        if len(ids) == 1:
            m.put(t + 96, "<Q", ids[0])
            return
        s = m.alloc(64)
        table = m.alloc(16 * 8)
        m.put(s + 24, "<q", len(ids))
        m.put(s + 32, "<q", 7)
        m.put(s + 40, "<Q", table)
        for i, x in enumerate(ids):
            m.put(table + 16 * i, "<Q", x)
            m.put(table + 16 * i + 8, "<Q", i + 1)
        m.put(t + 96, "<Q", s)
        m.put(t + 109, "<b", 1)

    def walker(self, version="3.14.99", **budget):
        return w.Walker(self.m.read, self.runtime, w.Layout(version, "", dict(FIELDS)), budget=w.Budget(**budget))


def tasks_of():
    """main and worker-0 wait on a future; worker-0 runs a chain of
    coroutines and main awaits it; Task-7 (unnamed) is done, in the
    interpreter's list; cycle-a and cycle-b await each other."""
    p = Process()
    p.fut = p.m.alloc(192)
    p.m.put(p.fut + 8, "<Q", p.FUT)
    leaf = p.coro("leaf", p.coro("sleep"))
    p.main = p.task("main", p.coro("main"), waiter=p.fut)
    p.worker = p.task("worker-0", p.coro("worker", p.coro("middle", leaf)), waiter=p.fut)
    p.done = p.task(p.integer(7), 0, state=2, head=p.interp + 64)
    p.ca = p.task("cycle-a", p.coro("cycle_a"))
    p.cb = p.task("cycle-b", p.coro("cycle_b"), waiter=p.ca)
    p.m.put(p.ca + 120, "<Q", p.cb)
    p.set_by(p.worker, [p.main])
    p.set_by(p.ca, [p.main, p.cb])
    return p


@pytest.fixture
def proc():
    return tasks_of()


def test_names_states_frames_awaits(proc):
    tl = proc.walker().tasks(proc.debug)
    assert tl.error is None, tl.error
    by = dict((t.name, t) for t in tl)
    assert sorted(by) == ["Task-7", "cycle-a", "cycle-b", "main", "worker-0"], sorted(by)
    assert tl.total == 5
    assert [f.name for f in by["worker-0"].frames] == ["sleep", "leaf", "middle", "worker"], [f.name for f in by["worker-0"].frames]
    assert by["worker-0"].awaited_by == [proc.main] and by["worker-0"].awaiting == proc.fut
    assert by["worker-0"].awaiting_type == "_asyncio.Future"
    assert by["Task-7"].state == "done" and by["main"].state == "pending"
    assert sorted(by["cycle-a"].awaited_by) == sorted([proc.main, proc.cb]), by["cycle-a"].awaited_by
    assert len(tl.cycles) == 1 and sorted(tl.cycles[0]) == sorted([proc.ca, proc.cb]), tl.cycles


def test_format_tasks(proc):
    text = w.format_tasks(proc.walker().tasks(proc.debug), with_source=False)
    assert "5 asyncio tasks" in text and "cycle: cycle-" in text, text
    assert "Task worker-0 (0x%x) [pending]" % proc.worker in text, text
    assert 'File "/app.py", line ?, in leaf' in text, text
    # A task the main task does not await is a root of the tree; the
    # cycle is printed once and named.
    assert text.count("Task cycle-a (0x%x) [pending]" % proc.ca) == 1, text


def test_tasks_json(proc):
    tl = proc.walker().tasks(proc.debug)
    j = w.tasks_json(tl)
    assert j["tasks_total"] == 5 and len(j["tasks"]) == 5 and j["task_cycles"] == [list(c) for c in tl.cycles]
    d = [t for t in j["tasks"] if t["name"] == "worker-0"][0]
    assert d["frames"][1] == {"function": "leaf", "file": "/app.py", "line": None}, d["frames"]


def test_name_escaped_in_text_kept_in_json(proc):
    proc.m.put(proc.ca + 136, "<Q", proc.string("evil\x1b[2J\nname"))
    tl = proc.walker().tasks(proc.debug)
    text = w.format_tasks(tl, with_source=False)
    assert "Task evil\\x1b[2J\\nname (0x%x)" % proc.ca in text and "\x1b" not in text, text
    assert [t for t in w.tasks_json(tl)["tasks"] if t["id"] == proc.ca][0]["name"] == "evil\x1b[2J\nname"


def test_cap_shows_some_counts_all(proc):
    tl = proc.walker().tasks(proc.debug, 2)
    assert len(tl) == 2 and tl.total == 5
    assert "... 3 more tasks not shown ..." in w.format_tasks(tl, with_source=False)


def test_no_debug_offsets_or_garbage_for_them(proc):
    # The module not loaded, or garbage where the offsets should be.
    assert "not found" in proc.walker().tasks(0).error
    err = proc.walker().tasks(proc.runtime).error
    assert "no asyncio debug offsets" in err, err


def test_before_3_14_legacy_module_names_version(proc):
    err = proc.walker("3.12.99").tasks(proc.debug).error
    assert "3.12.99" in err, err


def add_selfish(proc):
    """A task whose coroutine awaits itself."""
    selfish = proc.coro("selfish")
    proc.m.put(selfish + 72 + 80, "<Q", selfish)
    proc.task("selfish", selfish)


def test_coroutine_awaiting_itself_ends(proc):
    add_selfish(proc)
    tl = proc.walker().tasks(proc.debug)
    assert [f.name for f in [t for t in tl if t.name == "selfish"][0].frames] == ["selfish"]


def test_node_to_unreadable_memory_ends_list_says_so(proc):
    add_selfish(proc)
    proc.m.put(proc.last(proc.tstate + 112), "<Q", 0x10)
    ww = proc.walker()
    tl = ww.tasks(proc.debug)
    assert len(tl) == 6 and ww.stopped() and "task list" in ww.stopped(), (len(tl), ww.stopped())


def test_list_that_loops_ends_where_it_loops(proc):
    add_selfish(proc)
    proc.m.put(proc.last(proc.tstate + 112), "<Q", proc.worker + 152)
    tl = proc.walker().tasks(proc.debug)
    assert len(tl) == 6, len(tl)


@pytest.fixture(scope="module")
def many():
    """tasks_of and 100,000 more tasks in the interpreter's list."""
    p = tasks_of()
    head = p.interp + 64
    for i in range(100000):
        t = p.m.alloc(192)
        p.m.put(t + 8, "<Q", p.TASK)
        p.m.put(t + 136, "<Q", 0)
        p.link(head, t)
    return p


def test_100000_tasks_capped_counted_bounded_reads(many):
    # 1,000 read, all counted, the reads bounded by the list.
    many.m.reads = 0
    tl = many.walker().tasks(many.debug)
    assert len(tl) == 1000 and tl.total == 100005, (len(tl), tl.total)
    assert many.m.reads < 100000 + 1000 * 20, many.m.reads
    assert "100,005 asyncio tasks (1,000 shown)" in w.format_tasks(tl, with_source=False)


def test_small_budget_stops_tasks_walk(many):
    ww = many.walker(max_reads=5000)
    ww.tasks(many.debug)
    assert ww.stopped() and "budget" in ww.stopped(), ww.stopped()


def test_frame_states():
    # A coroutine's frame states: the layout's enum constants where it has
    # them (made-up values), else those each minor is known to use.
    fs = {"PyFrameState.FRAME_CREATED": 6, "PyFrameState.FRAME_SUSPENDED": 7,
          "PyFrameState.FRAME_SUSPENDED_YIELD_FROM": 8, "PyFrameState.FRAME_EXECUTING": 9}
    assert w.frame_states((3, 99), fs) == ((7, 8), 9), w.frame_states((3, 99), fs)
    assert w.frame_states((3, 12), {}) == ((-1,), 0)
    assert w.frame_states((3, 13)) == ((-2, -1), 0)
