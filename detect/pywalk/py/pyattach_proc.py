"""The direct reader of `pyattach dump`: the walker over a live process's
memory, read from /proc/PID/mem, with no debugger.

pyattach runs this module (through its script, pyattach_proc_main.py)
with a trusted system interpreter, isolated
(python3 -I -S: no environment, no user site, no current directory on
sys.path):

  python3 -I -S pyattach_proc_main.py

and once it is loaded (it says "ready" on stdout) sends its
configuration on stdin: "go" and CONFIG, one JSON object, on one line
(pyattach starts it while it resolves the target). CONFIG holds: pid,
runtime (_PyRuntime's address), version, flags, output (the file the
JSON goes to, see write_dump), source, locals, max_frames, max_reads,
timeout, block, native, and for asyncio tasks tasks, asyncio_debug (the
.AsyncioDebug section's address) and max_tasks. Nothing of the target runs here: its memory, /proc/PID/task
and the files of its source lines (read as the process's own user,
within its root) are only read.

Memory is read a page (4 KiB) at a time and every later read of that
page is served from the copy (Pages), so a walk makes one system call
per page rather than one per field.

With block (the default), the process is stopped only while the pages
its stacks live in are copied, not while they are walked:

 1. The walker walks the running process once (the pre-walk), to
    learn which pages the stacks, code objects and names live in.
 2. It asks pyattach to stop the process ("stop" on stdout; pyattach
    stops every thread and answers "stopped" on stdin), copies those
    pages, reads each thread's system call from /proc, and lets it go
    ("detach"; pyattach answers "resumed").
 3. It walks the copy: every stack it prints was in the process's
    memory at that one instant. When every byte the pre-walk read is
    the same in the copy (and every thread was in the same system call),
    the pre-walk's stacks are those of the copy and are given instead:
    a process that waits costs one walk. Otherwise each thread whose
    stack the pre-walk read from bytes all the same in the copy (its
    own reads, the thread states', and those of the code objects it
    used, however early they were read: _Log) keeps the pre-walk's
    stack, and only the others are walked again. A page the walk needs that was not
    copied (the stacks changed between the pre-walk and the stop) is
    read from the running process and noted; the stop is then made
    again with those pages too, at most STOPS times. Past that, the
    process is stopped for a whole walk, as a debugger does.

Without block (--no-block) the process is never stopped. Each thread's
stack is read, and then every page it was read from is read again: when
a byte the walk used has changed, the stack may never have existed as
read, and it is read again, at most TRIES times, until nothing it used
changed or two reads in a row give the same stack; a read whose frames
were cut short (a frame that reads as zeros: the stack moved) is never
kept. A thread whose stack never settles is marked ("unsettled") and its
frames are not given. The asyncio tasks (tasks) are read the same way,
as one.

Anything but "go" (or nothing) on stdin after "ready": it quits.
"""

import bisect
import errno
import mmap
import time
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyattach_walk as walk  # noqa: E402

# Pages are 4 KiB: the smallest unit a process's memory is mapped in.
PAGE_SHIFT = 12
PAGE = 1 << PAGE_SHIFT
# How many times the process may be stopped for one dump (block), and
# how many times a thread's stack is read before it is called unsettled
# (no block).
STOPS = 3
TRIES = 4
# The most pages one walk reads (256 MiB): each is copied while the
# process is stopped, so a target whose structures are spread over more
# ends the walk there, as the budget does.
MAX_PAGES = 1 << 16
# The most bytes one pread copies while the process is stopped.
_RUN = 256 * PAGE
# An unreadable page (unmapped, or beyond the process's reach).
_NONE = b""


def _pread(fd, n, count=1):
    """count pages from page n of fd, whole or as far as they read:
    short when a page cannot be read."""
    try:
        return os.pread(fd, count << PAGE_SHIFT, n << PAGE_SHIFT)
    except (IOError, OSError):
        return _NONE


def page_buffer(count):
    """Memory for count pages, every page of it already mapped in (so that
    copying into it while the process is stopped faults in none), or None
    where this Python cannot (no MAP_POPULATE or preadv)."""
    flag = getattr(mmap, "MAP_POPULATE", None)
    if flag is None or not hasattr(os, "preadv") or count == 0:
        return None
    try:
        return mmap.mmap(-1, count << PAGE_SHIFT, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | flag)
    except (IOError, OSError, ValueError):
        return None


def read_pages(fd, numbers, buf=None):
    """{page number: bytes} for every page in numbers, read in runs of
    consecutive pages (one system call each); a page that cannot be read
    maps to an empty string. With buf (page_buffer(len(numbers))) the
    pages are read into it and given as views of it."""
    out = {}
    numbers = sorted(numbers)
    view = memoryview(buf) if buf is not None else None
    i = 0
    while i < len(numbers):
        j = i + 1
        while j < len(numbers) and numbers[j] == numbers[j - 1] + 1 and (j - i) * PAGE < _RUN:
            j += 1
        n, count = numbers[i], j - i
        if view is not None:
            part = view[i << PAGE_SHIFT:j << PAGE_SHIFT]
            try:
                got = os.preadv(fd, [part], n << PAGE_SHIFT)
            except (IOError, OSError):
                got = 0
            b = part[:got]
        else:
            b = _pread(fd, n, count)
        for k in range(count):
            page = b[k << PAGE_SHIFT:(k + 1) << PAGE_SHIFT]
            if len(page) == PAGE:
                out[n + k] = page
            else:
                # The run broke here: this page and the rest alone.
                for m in range(n + k, n + count):
                    got = _pread(fd, m)
                    out[m] = got if len(got) == PAGE else _NONE
                break
        i = j
    return out


class Pages(object):
    """A process's memory read through whole pages, each read once: from
    snapshot ({page: bytes}, the pages copied while it was stopped) when
    one is given, else (and for a page the snapshot lacks, noted in
    missed) from the running process through fd (/proc/PID/mem).

    record() starts keeping the (address, size) of every read, for
    settled()."""

    def __init__(self, fd, snapshot=None):
        self.fd = fd
        self.snapshot = snapshot
        self.pages = {}
        self.missed = set()
        self.ranges = None
        # The walk's Budget, told when MAX_PAGES are read.
        self.budget = None

    def _page(self, n):
        if len(self.pages) >= MAX_PAGES:
            why = "budget of %s pages (%d MiB) of memory used up" % (walk.thousands(MAX_PAGES), MAX_PAGES >> 8)
            if self.budget is not None:
                self.budget.exhaust(why)
            raise walk.BudgetExhausted(why)
        b = None
        if self.snapshot is not None:
            b = self.snapshot.get(n)
            if b is None:
                self.missed.add(n)
        if b is None:
            b = _pread(self.fd, n)
            if len(b) != PAGE:
                b = _NONE
        self.pages[n] = b
        return b

    def read(self, addr, size):
        if self.ranges is not None:
            self.ranges.append((addr, size))
        n = addr >> PAGE_SHIFT
        o = addr & (PAGE - 1)
        b = self.pages.get(n)
        if b is None:
            b = self._page(n)
        if o + size <= PAGE:
            return b[o:o + size]
        out = [b[o:]]
        got = PAGE - o
        while got < size and len(b) == PAGE:
            n += 1
            b = self.pages.get(n)
            if b is None:
                b = self._page(n)
            out.append(b[:size - got])
            got += len(out[-1])
        if got < size:
            raise OSError(errno.EIO, "cannot read %d bytes at 0x%x" % (size, addr))
        return b"".join(out)

    def record(self):
        """Forgets every page read (the next reads come from the process
        again) and starts keeping the reads made from now on."""
        self.pages = {}
        self.ranges = []

    def settled(self):
        """Whether every byte read since record() still holds what was
        read: the pages are read again and the reads compared."""
        return self.holds(read_pages(self.fd, list(self.pages)))

    def holds(self, fresh):
        """Whether every byte read since record() is the same in fresh
        ({page: bytes}, read later); ends the record."""
        changed = set(n for n, b in self.pages.items() if fresh.get(n) != b)
        ranges, self.ranges = self.ranges, None
        if not changed:
            return True
        if ranges is None:
            return False
        old = Pages(self.fd, self.pages)
        new = Pages(self.fd, fresh)
        for addr, size in ranges:
            first, last = addr >> PAGE_SHIFT, (addr + size - 1) >> PAGE_SHIFT
            if any(n in changed for n in range(first, last + 1)):
                try:
                    if old.read(addr, size) != new.read(addr, size):
                        return False
                except OSError:
                    return False
        return True


def _broken(got):
    """Whether a read of a thread (read_thread's tuple) found its frames
    cut short (an error: a frame that reads as zeros, a chain that
    breaks)."""
    return isinstance(got, tuple) and bool(got[3].get("error"))


def _same(a, b):
    """Whether two reads of a thread (read_thread's tuple: its frames'
    dicts, exception and flags; never when either has a flag: an error,
    a partial stack, frames omitted) or of the tasks (as tasks_json
    gives them) gave the same."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        # A read cut short (a frame that reads as zeros, as a stack that
        # moves leaves it) counts only when nothing it read changed.
        if a[3] or b[3]:
            return False
        return a[1:] == b[1:]
    try:
        return walk.tasks_json(a) == walk.tasks_json(b)
    except walk.WalkError:
        return False


def _say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _ask(line, want):
    """Says line to pyattach and waits for its answer, want, and returns
    what follows it on the line."""
    _say(line)
    got = sys.stdin.readline().strip()
    word, _, rest = got.partition(" ")
    if word != want:
        raise walk.WalkError("pyattach answered %r to %r" % (got, line))
    return rest


def _views(text):
    """The threads' system calls pyattach read from their registers at
    the stop ("resumed" {TID: [number, argument]}), as kernel_view gives
    them, by thread id; None when it sent none."""
    if not text:
        return None
    out = {}
    for tid, v in walk.json_loads(text).items():
        out[int(tid)] = (v[0], v[1]) if isinstance(v, list) and len(v) == 2 else None
    return out


def os_threads(pid):
    """The process's OS threads from /proc/PID/task: the main thread first,
    then by id, each with its name (comm) and its id in the process's own
    PID namespace."""
    tids = []
    for name in os.listdir("/proc/%d/task" % pid):
        if name.isdigit():
            tids.append(int(name))
    tids.sort(key=lambda t: (t != pid, t))
    out = []
    for tid in tids:
        try:
            with open("/proc/%d/task/%d/comm" % (pid, tid), "rb") as f:
                comm = f.read()
            name = comm[:-1] if comm.endswith(b"\n") else comm
            name = name.decode("utf-8", "replace")
        except (IOError, OSError):
            name = None
        out.append(walk.OSThread(tid, walk.namespace_tid(pid, tid), name))
    return out


class _Log(object):
    """What the pre-walk read, so that the walk of the copy can take a
    thread's stack from it when nothing it was read from changed.

    ranges: every read (address, size), in order (the pre-walk's
    Pages.ranges); base: how many came before the first thread's stack
    (the layout, the thread states: every stack depends on them); spans:
    the [start, end) of ranges that built each code object the walker
    kept (a stack read later uses them without reading them); threads:
    {key: (what read_thread gave, start, end of its reads)}."""

    def __init__(self):
        self.ranges = None
        self.base = 0
        self.spans = []
        self.threads = {}
        self.w = None
        self.reused = 0
        self.unchanged = False

    def start(self, w, pages):
        self.w = w
        w.mem.log = pages.ranges
        w.mem.spans = self.spans

    def keep(self, read, key):
        """The pre-walk's settle: reads a thread once and keeps what it
        gave and where its reads are. A read that found its stack cut
        short, or stopped before its end (partial: the budget), is not
        kept: the copy's walk reads that thread again."""
        cuts = len(self.w.cuts)
        start = len(self.w.mem.log)
        got = read()
        if (key is not None and not got[3].get("error") and not got[3].get("partial") and
                len(self.w.cuts) == cuts):
            self.threads[key] = (got, start, len(self.w.mem.log))
        return got, None

    def reuse(self, old, fresh):
        """The copy's settle: a thread's stack from the pre-walk when
        every byte it depends on is the same in fresh ({page: bytes}, the
        copy) as in old (the pre-walk's pages), else read from the copy."""
        changed = set(n for n, b in old.items() if fresh.get(n) != b)
        bad = self._changed(old, fresh, changed)
        self.reused = 0
        # Every byte the pre-walk read is the same in fresh: a walk of
        # fresh would read the same and give the same.
        self.unchanged = bad == []
        if bad is None or bad and bad[0] < self.base:
            # Unknown, or the thread states themselves changed.
            return lambda read, key: (read(), None)
        # A stack read before the first kept code object that changed
        # was built up to its end does not use it.
        stale = min([b for a, b in self.spans if _any_in(bad, a, b)] or [float("inf")])

        def settle(read, key):
            kept = self.threads.get(key)
            if kept is None:
                return read(), None
            got, start, end = kept
            if end >= stale or _any_in(bad, start, end):
                return read(), None
            self.reused += 1
            return got, None
        return settle

    def _changed(self, old, fresh, changed):
        """The indexes in ranges of the reads whose bytes differ between
        old and fresh; None when they cannot be told."""
        if self.ranges is None:
            return None
        if not changed:
            return []
        out = []
        for i, (addr, size) in enumerate(self.ranges):
            first, last = addr >> PAGE_SHIFT, (addr + size - 1) >> PAGE_SHIFT
            if first in changed or last != first and any(n in changed for n in range(first + 1, last + 1)):
                was = _span(old, addr, size)
                if was is None or was != _span(fresh, addr, size):
                    out.append(i)
        return out


def _any_in(sorted_indexes, start, end):
    """Whether any of sorted_indexes is in [start, end)."""
    i = bisect.bisect_left(sorted_indexes, start)
    return i < len(sorted_indexes) and sorted_indexes[i] < end


def _span(pages, addr, size):
    """The size bytes at addr from pages ({page: bytes}), or None when a
    page is missing or short."""
    out = []
    while size > 0:
        b = pages.get(addr >> PAGE_SHIFT)
        o = addr & (PAGE - 1)
        k = min(size, PAGE - o)
        if b is None or len(b) != PAGE:
            return None
        out.append(b[o:o + k])
        addr += k
        size -= k
    return b"".join(out)


class _Reader(object):
    """One dump of a live process (see the module's doc)."""

    def __init__(self, cfg, tables):
        self.cfg = cfg
        self.pid = cfg["pid"]
        self.tables = tables
        self.fd = os.open("/proc/%d/mem" % self.pid, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        self.threads = None
        self.stops = 0
        self.copied = 0
        self.spent = []
        self.native = None
        self.copy_time = 0.0
        self.reused = 0
        self.start = time.monotonic()

    def budget(self):
        """A walk's Budget: the reads of the configuration, and what is
        left of its time (every walk of one dump shares it)."""
        timeout = self.cfg["timeout"]
        if timeout:
            timeout = max(timeout - (time.monotonic() - self.start), 1e-3)
        b = walk.Budget(max_reads=self.cfg["max_reads"], timeout=timeout)
        self.spent.append(b)
        return b

    def cost(self):
        """What the dump cost beyond its last walk's reads."""
        return {"stops": self.stops, "pages": self.copied, "walks": len(self.spent),
                "copy_seconds": self.copy_time, "reused": self.reused,
                "seconds": time.monotonic() - self.start}

    def walk(self, pages, budget, kernel=None, source=False, settle=None, detach=None, native=None, log=None):
        """dump_threads over pages: kernel the threads' system calls read
        while the process was stopped (None: read from /proc as it runs);
        native the C stacks pyattach unwound at that stop
        ({tid: frames}), or None. log, a _Log, gets what the walk read
        (pages must be recording: record())."""
        cfg = self.cfg
        pages.budget = budget
        w = walk.open_walker(pages.read, cfg["runtime"], cfg["version"], cfg.get("flags", ""), self.tables,
                             budget=budget, max_frames=cfg["max_frames"])
        if log is not None:
            log.start(w, pages)
        states = walk.match_threads(w, self.threads)
        if log is not None:
            log.base = len(pages.ranges)
        tasks = None
        if cfg.get("tasks"):
            tasks = {"debug": cfg.get("asyncio_debug") or None, "limit": cfg.get("max_tasks") or 0}
        files = walk.process_files(self.pid, True) if source else None
        return walk.dump_threads(w, self.pid, self.threads, states, kernel is None, files, source=source,
                                 with_locals=cfg["locals"], tasks=tasks, kernel=kernel, settle=settle,
                                 detach=detach, native=None if native is None else (
                                     lambda ot: native.get(str(ot.tid), [])))

    def stopped_copy(self, numbers):
        """The pages numbers and each thread's system call, read while
        pyattach holds the process stopped."""
        self.native = None
        buf = page_buffer(len(numbers))
        _ask("stop", "stopped")
        self.stops += 1
        t0 = time.monotonic()
        resumed = ""
        try:
            snap = read_pages(self.fd, numbers, buf)
        finally:
            t1 = time.monotonic()
            resumed = _ask("detach", "resumed")
        self.copy_time += t1 - t0
        # Each thread's system call, which pyattach read from its
        # registers while it was stopped.
        kernel = _views(resumed)
        if kernel is None:
            kernel = {}
        else:
            kernel = dict((ot.tid, kernel.get(ot.tid)) for ot in self.threads)
        self.read_native()
        self.copied += len(snap)
        return snap, kernel

    def read_native(self):
        """With native, the C stacks pyattach unwound from its copy of the
        threads' registers and stacks at the last stop: asked for with
        "native", it answers "native {TID: frames}" on one line."""
        if not self.cfg.get("native"):
            return
        _say("native")
        line = sys.stdin.readline()
        if not line.startswith("native "):
            raise walk.WalkError("pyattach sent no C stacks")
        self.native = walk.json_loads(line[len("native "):])

    def kernel_views(self):
        """Each thread's system call, from /proc."""
        return dict((ot.tid, walk.kernel_view(self.pid, ot.tid)) for ot in self.threads)

    def blocking(self):
        # 1. The pre-walk, of the running process.
        pre = Pages(self.fd)
        pre.record()
        views = self.kernel_views()
        log = _Log()
        try:
            first = self.walk(pre, self.budget(), kernel=views, settle=log.keep, log=log)
        except walk.WalkError:
            first = None
        log.ranges = pre.ranges
        want = set(pre.pages)
        while self.stops < STOPS:
            # 2. The copy, 3. its walk.
            snap, kernel = self.stopped_copy(want)
            settle = log.reuse(pre.pages, snap)
            # (Not with native, whose C stacks come from the copy, nor with
            # the tasks' text, whose source lines a walk reads as it writes
            # it.)
            if (first is not None and not first[1] and kernel == views and not self.cfg.get("native") and
                    not (self.cfg.get("tasks") and self.cfg["source"]) and log.unchanged):
                # Every byte the pre-walk read was the same in the copy (and
                # every thread in the same system call): a walk of the copy
                # would read the same and give the same.
                if self.cfg["source"]:
                    walk.add_sources(first[0], walk.process_files(self.pid, True))
                return first
            first = None
            pages = Pages(self.fd, snap)
            # A thread whose stack the pre-walk read from bytes that are
            # the same in the copy has that stack in the copy too.
            got = self.walk(pages, self.budget(), kernel=kernel, source=self.cfg["source"], native=self.native,
                            settle=settle)
            self.reused += log.reused
            if not pages.missed:
                return got
            want |= set(pages.pages)
        # The stacks kept changing: the process stays stopped for a walk.
        _ask("stop", "stopped")
        self.stops += 1
        held = [True]

        def detach():
            if held:
                held.pop()
                _ask("detach", "resumed")
        try:
            kernel = self.kernel_views()
            self.read_native()
            pages = Pages(self.fd)
            got = self.walk(pages, self.budget(), kernel=kernel, source=self.cfg["source"], detach=detach,
                            native=self.native)
        finally:
            detach()
        self.copied += len(pages.pages)
        return got

    def nonblocking(self):
        pages = Pages(self.fd)

        def settle(read, key):
            last = None
            for _ in range(TRIES):
                pages.record()
                got = read()
                if _broken(got):
                    # A stack that moves as it is read leaves frames that
                    # read as zeros, chains that end early: read again.
                    pages.ranges = None
                    continue
                # Settled: nothing read changed meanwhile, or this read
                # gave what the one before it did.
                if pages.settled() or last is not None and _same(got, last):
                    return got, None
                last = got
            return None, TRIES

        return self.walk(pages, self.budget(), source=self.cfg["source"], settle=settle)

    def run(self):
        self.threads = os_threads(self.pid)
        if self.cfg.get("block", True):
            return self.blocking()
        return self.nonblocking()


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: python3 -I -S pyattach_proc_main.py (the configuration comes on stdin)\n")
        return 2
    tables = walk.load_tables()
    _say("ready")
    word, _, rest = sys.stdin.readline().strip().partition(" ")
    if word != "go":
        return 1
    cfg = walk.json_loads(rest)
    r = _Reader(cfg, tables)
    walk.write_dump(cfg["output"], lambda: r.spent[-1] if r.spent else r.budget(), r.run,
                    errors=(OSError, IOError), extra=r.cost)
    return 0


def run(argv):
    """main(argv), then the process ends at once: the output is written
    and closed, and the interpreter's teardown (every frame's dict freed
    one by one) would only keep pyattach waiting."""
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run(sys.argv)
