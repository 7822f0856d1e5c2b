package pywalk

import "testing"

// tasksPy drives the walker's asyncio tasks (pyattach_walk_tasks) over
// a fake 3.14 process (made-up offsets, an .AsyncioDebug block in its
// memory): names (a str, an unnamed task's number), states, a chain of
// coroutines, awaits, awaited_by sets, cycles; then what must not hang
// or crash on garbage: a task list that loops, one that leads to
// unreadable memory, a coroutine awaiting itself, debug offsets that are
// no such thing; and 100,000 tasks, capped, counted, in bounded reads.
const tasksPy = `import struct
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


m = Mem()
STR, INT, CORO, TASK, FUT = (m.type(n) for n in ("str", "int", "coroutine", "_asyncio.Task", "_asyncio.Future"))


def string(s):
    a = m.alloc(48 + len(s))
    m.put(a + 8, "<Q", STR)
    m.put(a + 16, "<q", len(s))
    m.put(a + 32, "<I", (1 << 2) | (1 << 5) | (1 << 6))
    m.blocks[a][40:40 + len(s)] = s.encode()
    return a


def integer(v):
    a = m.alloc(64)
    m.put(a + 8, "<Q", INT)
    m.put(a + 16, "<Q", 1 << 3)
    m.put(a + 24, "<I", v)
    return a


def code(name):
    c = m.alloc(128)
    m.put(c + 16, "<Q", string("/app.py"))
    m.put(c + 24, "<Q", string(name))
    m.put(c + 32, "<Q", string(name))
    m.put(c + 40, "<i", 10)
    return c


def coro(name, awaits=0):
    g = m.alloc(256)
    m.put(g + 8, "<Q", CORO)
    m.put(g + 67, "<b", SUSPENDED_YIELD_FROM)
    f = g + 72
    c = code(name)
    m.put(f, "<Q", c | 1)
    m.put(f + 56, "<Q", c + 64 + 4)
    m.put(f + 80, "<Q", awaits)
    m.put(f + 64, "<Q", f + 88)
    return g


runtime = m.alloc(64)
interp = m.alloc(512)
tstate = m.alloc(256)
m.put(runtime, "<Q", interp)
m.put(interp + 8, "<Q", tstate)
m.put(tstate + 8, "<Q", 0x7000)
m.put(tstate + 16, "<Q", 42)
debug = m.alloc(128)
for i, v in enumerate(DEBUG):
    m.put(debug + 8 * i, "<Q", v)
for head in (interp + 64, tstate + 112):
    m.put(head, "<Q", head)
    m.put(head + 8, "<Q", head)


def link(head, task):
    """Appends task to the list at head (task_node at 152)."""
    node = task + 152
    last = struct.unpack("<Q", m.read(head + 8, 8))[0]
    m.put(last, "<Q", node)
    m.put(node, "<Q", head)
    m.put(node + 8, "<Q", last)
    m.put(head + 8, "<Q", node)


def task(name, co=0, state=0, waiter=0, by=(), head=None):
    t = m.alloc(192)
    m.put(t + 8, "<Q", TASK)
    m.put(t + 136, "<Q", name if isinstance(name, int) else string(name))
    m.put(t + 104, "<i", state)
    m.put(t + 128, "<Q", co)
    m.put(t + 120, "<Q", waiter)
    link(head or tstate + 112, t)
    return t


def set_by(t, ids):
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


def walker(**budget):
    return w.Walker(m.read, runtime, w.Layout("3.14.99", "", dict(FIELDS)), budget=w.Budget(**budget))


fut = m.alloc(192)
m.put(fut + 8, "<Q", FUT)
leaf = coro("leaf", coro("sleep"))
main = task("main", coro("main"), waiter=fut)
worker = task("worker-0", coro("worker", coro("middle", leaf)), waiter=fut)
done = task(integer(7), 0, state=2, head=interp + 64)
ca = task("cycle-a", coro("cycle_a"))
cb = task("cycle-b", coro("cycle_b"), waiter=ca)
m.put(ca + 120, "<Q", cb)
set_by(worker, [main])
set_by(ca, [main, cb])

tl = walker().tasks(debug)
assert tl.error is None, tl.error
by = dict((t.name, t) for t in tl)
assert sorted(by) == ["Task-7", "cycle-a", "cycle-b", "main", "worker-0"], sorted(by)
assert tl.total == 5
assert [f.name for f in by["worker-0"].frames] == ["sleep", "leaf", "middle", "worker"], [f.name for f in by["worker-0"].frames]
assert by["worker-0"].awaited_by == [main] and by["worker-0"].awaiting == fut
assert by["worker-0"].awaiting_type == "_asyncio.Future"
assert by["Task-7"].state == "done" and by["main"].state == "pending"
assert sorted(by["cycle-a"].awaited_by) == sorted([main, cb]), by["cycle-a"].awaited_by
assert len(tl.cycles) == 1 and sorted(tl.cycles[0]) == sorted([ca, cb]), tl.cycles
text = w.format_tasks(tl, with_source=False)
assert "5 asyncio tasks" in text and "cycle: cycle-" in text, text
assert "Task worker-0 (0x%x) [pending]" % worker in text, text
assert 'File "/app.py", line ?, in leaf' in text, text
# A task the main task does not await is a root of the tree; the cycle
# is printed once and named.
assert text.count("Task cycle-a (0x%x) [pending]" % ca) == 1, text
j = w.tasks_json(tl)
assert j["tasks_total"] == 5 and len(j["tasks"]) == 5 and j["task_cycles"] == [list(c) for c in tl.cycles]
d = [t for t in j["tasks"] if t["name"] == "worker-0"][0]
assert d["frames"][1] == {"function": "leaf", "file": "/app.py", "line": None}, d["frames"]

# A name from the target is escaped in the text, kept in the JSON.
m.put(ca + 136, "<Q", string("evil\x1b[2J\nname"))
tl = walker().tasks(debug)
text = w.format_tasks(tl, with_source=False)
assert "Task evil\\x1b[2J\\nname (0x%x)" % ca in text and "\x1b" not in text, text
assert [t for t in w.tasks_json(tl)["tasks"] if t["id"] == ca][0]["name"] == "evil\x1b[2J\nname"
m.put(ca + 136, "<Q", string("cycle-a"))

# The cap: 2 shown, 5 counted.
tl = walker().tasks(debug, 2)
assert len(tl) == 2 and tl.total == 5
assert "... 3 more tasks not shown ..." in w.format_tasks(tl, with_source=False)

# No debug offsets (the module not loaded), or garbage where they should be.
assert "not found" in walker().tasks(0).error
assert "no asyncio debug offsets" in walker().tasks(runtime).error, walker().tasks(runtime).error
# Before 3.14 the legacy module answers, naming the version.
old = w.Walker(m.read, runtime, w.Layout("3.12.99", "", dict(FIELDS)))
assert "3.12.99" in old.tasks(debug).error, old.tasks(debug).error

# Garbage: a coroutine that awaits itself ends; a node that leads to
# unreadable memory ends its list (the walk says so); a list that loops
# ends where it loops.
selfish = coro("selfish")
m.put(selfish + 72 + 80, "<Q", selfish)
task("selfish", selfish)
tl = walker().tasks(debug)
assert [f.name for f in [t for t in tl if t.name == "selfish"][0].frames] == ["selfish"]
last = struct.unpack("<Q", m.read(tstate + 112 + 8, 8))[0]
m.put(last, "<Q", 0x10)
ww = walker()
tl = ww.tasks(debug)
assert len(tl) == 6 and ww.stopped() and "task list" in ww.stopped(), (len(tl), ww.stopped())
m.put(last, "<Q", worker + 152)
tl = walker().tasks(debug)
assert len(tl) == 6, len(tl)

# 100,000 tasks: 1,000 read, all counted, the reads bounded by the list.
head = interp + 64
for i in range(100000):
    t = m.alloc(192)
    m.put(t + 8, "<Q", TASK)
    m.put(t + 136, "<Q", 0)
    link(head, t)
m.reads = 0
tl = walker().tasks(debug)
assert len(tl) == 1000 and tl.total == 100006, (len(tl), tl.total)
assert m.reads < 100000 + 1000 * 20, m.reads
assert "100,006 asyncio tasks (1,000 shown)" in w.format_tasks(tl, with_source=False)
# A small budget stops the walk, which says so.
ww = walker(max_reads=5000)
tl = ww.tasks(debug)
assert ww.stopped() and "budget" in ww.stopped(), ww.stopped()
# A coroutine's frame states: the layout's enum constants where it has
# them (made-up values), else those each minor is known to use.
fs = {"PyFrameState.FRAME_CREATED": 6, "PyFrameState.FRAME_SUSPENDED": 7,
      "PyFrameState.FRAME_SUSPENDED_YIELD_FROM": 8, "PyFrameState.FRAME_EXECUTING": 9}
assert w.frame_states((3, 99), fs) == ((7, 8), 9), w.frame_states((3, 99), fs)
assert w.frame_states((3, 12), {}) == ((-1,), 0)
assert w.frame_states((3, 13)) == ((-2, -1), 0)
print("ok")
`

// TestTasks runs tasksPy against the embedded walker.
func TestTasks(t *testing.T) {
	runWalkerScript(t, "tasks.py", tasksPy)
}
