package pywalk

import "testing"

// fakeProcessPy is the start of the walker scripts over a fake process
// (a 3.9 layout: interpreters, thread states, heap frames, code objects,
// str and bytes): FIELDS, and FakeMemory, whose stack builders the
// scripts add.
const fakeProcessPy = `import struct
import pyattach_walk as w

FIELDS = {
    "_PyRuntimeState.interpreters.head": 0,
    "PyInterpreterState.next": 0, "PyInterpreterState.tstate_head": 8, "PyInterpreterState.id": 16,
    "PyThreadState.next": 0, "PyThreadState.thread_id": 8, "PyThreadState.frame": 16,
    "PyFrameObject.f_back": 0, "PyFrameObject.f_code": 8, "PyFrameObject.f_lasti": 16,
    "PyCodeObject.co_filename": 0, "PyCodeObject.co_name": 8,
    "PyCodeObject.co_firstlineno": 16, "PyCodeObject.co_lnotab": 24,
    "PyASCIIObject.length": 0, "PyASCIIObject.state": 8, "sizeof(PyASCIIObject)": 16,
    "PyASCIIObject.state.kind:bit_offset": 66, "PyASCIIObject.state.kind:bit_size": 3,
    "PyASCIIObject.state.compact:bit_offset": 69, "PyASCIIObject.state.compact:bit_size": 1,
    "PyASCIIObject.state.ascii:bit_offset": 70, "PyASCIIObject.state.ascii:bit_size": 1,
    "PyVarObject.ob_size": 0, "PyBytesObject.ob_sval": 8,
}


class FakeMemory(object):
    """Sparse memory: 64-byte blocks handed out in order; reads count;
    other addresses cannot be read."""

    def __init__(self):
        self.blocks = {}
        self.next = 0x10000
        self.reads = 0

    def alloc(self, data=b""):
        addr = self.next
        self.next += 64 * (1 + len(data) // 64)
        self.blocks[addr] = bytearray(data.ljust(64 * (1 + len(data) // 64), b"\0"))
        return addr

    def put(self, addr, off, fmt, v):
        struct.pack_into(fmt, self.blocks[addr], off, v)

    def read(self, addr, size):
        self.reads += 1
        if not 0x10000 <= addr < self.next:
            raise IOError("unmapped")
        base = addr - addr % 64
        while base not in self.blocks:
            base -= 64
        return bytes(self.blocks[base][addr - base:addr - base + size])

    def string(self, s):
        a = self.alloc(b"\0" * 16 + s.encode())
        self.put(a, 0, "<q", len(s))
        self.put(a, 8, "<I", (1 << 2) | (1 << 5) | (1 << 6))
        return a

    def code(self, name, first):
        lnotab = self.alloc(b"\0" * 8 + bytes([0, 1]))
        self.put(lnotab, 0, "<q", 2)
        c = self.alloc()
        self.put(c, 0, "<Q", self.string("/app.py"))
        self.put(c, 8, "<Q", self.string(name))
        self.put(c, 16, "<i", first)
        self.put(c, 24, "<Q", lnotab)
        return c
`

// boundsPy drives the walker over a fake process's memory (a 3.9
// layout: thread states, heap frames, code objects, str and bytes) and
// checks what bounds a walk: which frames of a deep stack are kept and
// how the others are counted, loops in frame and thread chains, and the
// one budget of reads and time of a whole walk.
const boundsPy = fakeProcessPy + `

class Memory(FakeMemory):
    """FakeMemory and the stacks of the bounds tests."""

    def stack(self, names):
        """A thread state running names, innermost first; returns it and
        the frames."""
        frames = [self.alloc() for _ in names]
        for i, (f, name) in enumerate(zip(frames, names)):
            self.put(f, 0, "<Q", frames[i + 1] if i + 1 < len(frames) else 0)
            self.put(f, 8, "<Q", self.code(name, 10 * (i + 1)))
            self.put(f, 16, "<i", 2)
        t = self.alloc()
        self.put(t, 16, "<Q", frames[0] if frames else 0)
        return t, frames


def walker(m, runtime=0, **budget):
    return w.Walker(m.read, runtime, w.Layout("3.9.18", "", FIELDS), budget=w.Budget(**budget))


# A stack 10 deep, 4 kept: the 2 innermost, the 2 outermost, 6 counted.
m = Memory()
names = ["f%d" % i for i in range(9)] + ["<module>"]
t, frames = m.stack(names)
fl = walker(m).frames(t, 4)
assert [f.name for f in fl] == ["f0", "f1", "f8", "<module>"], [f.name for f in fl]
assert (fl.omitted, fl.gap, fl.partial) == (6, 2, False), (fl.omitted, fl.gap)
assert [f.lineno for f in fl] == [11, 21, 91, 101], [f.lineno for f in fl]
text = w.format_frames(fl, with_source=False)
assert text.splitlines()[3] == "  ... 6 frames not shown ...", text
assert text.splitlines()[-1] == '  File "/app.py", line 101, in <module>', text
# An odd limit keeps one more of the innermost; enough room keeps all;
# 0 keeps all.
fl = walker(m).frames(t, 5)
assert [f.name for f in fl] == ["f0", "f1", "f2", "f8", "<module>"] and fl.omitted == 5
for n in (10, 11, 0):
    fl = walker(m).frames(t, n)
    assert len(fl) == 10 and fl.omitted == 0, (n, len(fl), fl.omitted)
    assert "not shown" not in w.format_frames(fl, with_source=False)
assert w.omitted_line(1) == "  ... 1 frame not shown ..."
assert w.omitted_line(5906) == "  ... 5,906 frames not shown ..."
# The walker's own limit applies when frames is given none.
ww = walker(m)
ww.max_frames = 2
assert [f.name for f in ww.frames(t)] == ["f0", "<module>"]

# A frame chain that loops ends where it loops.
m.put(frames[-1], 0, "<Q", frames[3])
fl = walker(m).frames(t, 0)
assert [f.name for f in fl] == names and not fl.partial, (len(fl), fl.partial)

# A chain longer than the budget: the walk stops, says why, and what was
# read is kept, marked partial; no read is made after the budget is spent.
m = Memory()
t, frames = m.stack(["g%d" % i for i in range(3000)])
ww = walker(m, max_reads=2000)
before = m.reads
fl = ww.frames(t, 10)
assert fl.partial and len(fl) == 10 and fl.omitted > 0, (fl.partial, len(fl), fl.omitted)
assert None not in [f.lineno for f in fl], "lines of the frames read are known"
assert m.reads - before == 2000, m.reads - before
assert ww.stopped() == "budget of 2,000 memory reads used up", ww.stopped()
assert w.format_frames(fl, with_source=False).splitlines()[-1] == w.NOT_READ_LINE
fl = ww.frames(t)
assert len(fl) == 0 and fl.partial
assert m.reads - before == 2000, "a spent budget read on"
# begin starts a new walk with a fresh budget of the same size.
ww.begin()
assert ww.stopped() is None and ww.budget.max_reads == 2000
# The time budget: a walk past its deadline stops at its next read.
ww = walker(m, timeout=1)
ww.budget.start -= 2
fl = ww.frames(t, 10)
assert len(fl) == 0 and fl.partial and ww.stopped() == "time budget of 1s used up", ww.stopped()

# 256 interpreters of 4,096 thread states each: listing them stops at
# half the budget, which is left for the stacks.
m = Memory()
runtime = m.alloc()
prev = None
tstates = 0
for i in range(256):
    interp = m.alloc()
    if prev is None:
        m.put(runtime, 0, "<Q", interp)
    else:
        m.put(prev, 0, "<Q", interp)
    prev = interp
    last = None
    for j in range(4096 if i < 2 else 1):
        ts = m.alloc()
        m.put(ts, 8, "<Q", 1000 + j)
        if last is None:
            m.put(interp, 8, "<Q", ts)
        else:
            m.put(last, 0, "<Q", ts)
        last = ts
ww = walker(m, runtime, max_reads=3000)
ths = ww.threads()
assert 700 < len(ths) < 800, len(ths)  # 2 reads a thread state
assert ww.stopped().startswith("thread states not all listed: "), ww.stopped()
assert ww.budget.exhausted is None
assert ww.threads() is ths

# Interpreter and thread state chains that loop end where they loop.
m = Memory()
runtime = m.alloc()
i1, i2 = m.alloc(), m.alloc()
m.put(runtime, 0, "<Q", i1)
m.put(i1, 0, "<Q", i2)
m.put(i2, 0, "<Q", i1)
ts = [m.alloc() for _ in range(3)]
for a, b in zip(ts, ts[1:] + ts[:1]):
    m.put(a, 0, "<Q", b)
m.put(i1, 8, "<Q", ts[0])
m.put(i2, 8, "<Q", ts[1])
ths = walker(m, runtime).threads()
assert [th.tstate for th in ths] == ts + ts[1:] + ts[:1], ths
print("ok")
`

// TestWalkBounds runs boundsPy against the embedded walker.
func TestWalkBounds(t *testing.T) {
	runWalkerScript(t, "bounds.py", boundsPy)
}
