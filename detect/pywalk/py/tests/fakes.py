"""Fakes shared by the walker's unit tests: a made-up 3.9 layout of
interpreters, thread states, heap frames, code objects, str and bytes
(FIELDS_39), and FakeMemory, sparse memory the walker reads through
read(addr, size)."""

import struct

FIELDS_39 = {
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

# An address FakeMemory cannot read.
UNMAPPED = 0x7fff0000


class FakeMemory(object):
    """Sparse memory: 64-byte blocks handed out in order; reads count;
    other addresses cannot be read. string and code build objects of
    FIELDS_39."""

    # The size of a block: memory is handed out in multiples of it, from
    # BASE on.
    BLOCK = 64
    BASE = 0x10000

    def __init__(self):
        self.blocks = {}
        self.next = self.BASE
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
        if not self.BASE <= addr < self.next:
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

    def tstate(self, names, thread_id=0):
        """A thread state (of thread_id) running names, innermost first;
        returns it and its frames (f_lasti 2, line 10, 20, ... of the
        code objects)."""
        frames = [self.alloc() for _ in names]
        for i, (f, name) in enumerate(zip(frames, names)):
            self.put(f, 0, "<Q", frames[i + 1] if i + 1 < len(frames) else 0)
            self.put(f, 8, "<Q", self.code(name, 10 * (i + 1)))
            self.put(f, 16, "<i", 2)
        t = self.alloc()
        self.put(t, 8, "<Q", thread_id)
        self.put(t, 16, "<Q", frames[0] if frames else 0)
        return t, frames
