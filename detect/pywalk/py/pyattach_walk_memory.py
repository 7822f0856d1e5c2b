"""The walker's access to the inferior's memory: one read function,
charged to the walk's Budget, and the errors a walk raises."""

import struct
import time

from pyattach_walk_text import thousands


class WalkError(Exception):
    """Memory that should hold an interpreter structure could not be read."""


class BudgetExhausted(WalkError):
    """The walk's budget (memory reads, bytes read, wall time) is used up."""


# One walk's budget (see Budget): a walk of a real process with dozens of
# threads and stacks thousands of frames deep uses a few tens of thousand
# reads and well under a second; a hostile target's chains of interpreters,
# threads or frames end here instead of running for hours.
MAX_READS = 500000
MAX_BYTES = 64 << 20
TIMEOUT = 20.0

_monotonic = getattr(time, "monotonic", time.time)

# The clock is read at the first read and then once every this many reads
# plus one: a read costs microseconds, so the time budget is still kept to
# the millisecond.
_CLOCK_EVERY = 63


class Budget(object):
    """What one walk (a py-bt, a dump: every interpreter, thread, frame,
    code object and string it reads) may spend: memory reads, bytes read
    and seconds; 0 is no limit. Walker.read charges it; once spent, every
    later read raises BudgetExhausted, and exhausted says why."""

    def __init__(self, max_reads=MAX_READS, timeout=TIMEOUT, max_bytes=MAX_BYTES):
        self.max_reads = max_reads
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.reads = 0
        self.bytes = 0
        self.start = _monotonic()
        self.exhausted = None

    def elapsed(self):
        return _monotonic() - self.start

    def charge(self, size):
        """Counts one read of size bytes; raises BudgetExhausted when the
        budget is (or was already) used up."""
        if self.exhausted is None:
            self.reads += 1
            self.bytes += size
            if self.max_reads and self.reads > self.max_reads:
                self.exhausted = "budget of %s memory reads used up" % thousands(self.max_reads)
            elif self.max_bytes and self.bytes > self.max_bytes:
                self.exhausted = "budget of %s bytes read used up" % thousands(self.max_bytes)
            elif not (self.reads - 1) & _CLOCK_EVERY:
                self.check_time()
        if self.exhausted is not None:
            raise BudgetExhausted(self.exhausted)

    def check_time(self):
        """Raises BudgetExhausted once the walk's time is up."""
        self.time_up()
        if self.exhausted is not None:
            raise BudgetExhausted(self.exhausted)

    def time_up(self):
        """Whether the walk's time is up (exhausted then says so)."""
        if self.timeout and self.elapsed() > self.timeout:
            if self.exhausted is None:
                self.exhausted = "time budget of %gs used up" % self.timeout
            return True
        return False

    def exhaust(self, why):
        """Ends the walk: the budget is used up, for why; raises
        BudgetExhausted."""
        if self.exhausted is None:
            self.exhausted = why
        raise BudgetExhausted(self.exhausted)

    def half_spent(self):
        """Whether half of the reads, bytes or time is spent: listing
        thread states stops there, so that the stacks of the threads
        found can still be read."""
        return bool(self.max_reads and self.reads * 2 > self.max_reads or
                    self.max_bytes and self.bytes * 2 > self.max_bytes or
                    self.timeout and self.elapsed() * 2 > self.timeout)


class Memory(object):
    """Reads of the inferior's memory through read(addr, size) -> bytes
    (the debugger's reader), each charged to budget (a Budget; the
    walk's, which Walker.begin replaces). Every reader of the walker
    reads through one of these."""

    def __init__(self, read, budget=None):
        self._read = read
        self.budget = budget if budget is not None else Budget()
        # log: when a recorder keeps every read's (address, size) in a
        # list (pyattach_proc's Pages), that list; spans then gets the
        # [start, end) of log that built each value a reader keeps and
        # gives again without reading (a code object's names and line
        # table): a later use depends on those reads too.
        self.log = None
        self.spans = None

    def mark(self):
        """Where in log the reads that build a kept value start (None when
        reads are not logged); built(mark) once it is built."""
        return None if self.log is None else len(self.log)

    def built(self, mark):
        if mark is not None and self.log is not None:
            self.spans.append((mark, len(self.log)))

    def read(self, addr, size):
        if not addr:
            raise WalkError("read of NULL")
        self.budget.charge(size)
        try:
            b = self._read(addr, size)
        except BudgetExhausted:
            raise
        except Exception as e:
            raise WalkError("cannot read %d bytes at 0x%x: %s" % (size, addr, e))
        if b is None or len(b) != size:
            raise WalkError("cannot read %d bytes at 0x%x" % (size, addr))
        return bytes(b)

    def u64(self, addr):
        return struct.unpack("<Q", self.read(addr, 8))[0]

    def i64(self, addr):
        return struct.unpack("<q", self.read(addr, 8))[0]

    def u32(self, addr):
        return struct.unpack("<I", self.read(addr, 4))[0]

    def i32(self, addr):
        return struct.unpack("<i", self.read(addr, 4))[0]

    def ptrv(self, addr):
        return self.u64(addr)

    def cstring(self, addr, limit=256):
        """A NUL-terminated C string (a type's tp_name), read 32 bytes at
        a time, at most limit bytes."""
        out = b""
        while len(out) < limit:
            chunk = self.read(addr + len(out), _CSTRING_CHUNK)
            i = chunk.find(b"\0")
            if i >= 0:
                return (out + chunk[:i]).decode("utf-8", "replace")
            out += chunk
        return out.decode("utf-8", "replace")


class Block(object):
    """Reads from bytes already read (data, the memory at base), and
    from mem beyond them: the fields of a struct read at once."""

    def __init__(self, mem, base, data, ptr=8):
        self.mem = mem
        self.base = base
        self.data = data or b""
        self.size = ptr

    def ptr(self, a):
        o = a - self.base
        if 0 <= o and o + self.size <= len(self.data):
            return struct.unpack_from("<Q", self.data, o)[0]
        return self.mem.ptrv(a)

    def byte(self, a):
        o = a - self.base
        if 0 <= o < len(self.data):
            return bytearray(self.data[o:o + 1])[0]
        return bytearray(self.mem.read(a, 1))[0]


# How many bytes of a C string are read at once.
_CSTRING_CHUNK = 32
