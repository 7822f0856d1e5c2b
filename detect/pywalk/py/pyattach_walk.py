"""pyattach's memory-only walker of Python stacks.

Shared by the gdb and lldb adapters: it is given a function that reads
the inferior's memory, the address of _PyRuntime, the Python version and
a table of struct offsets (generated from real builds' DWARF by pyattach),
and reads interpreters, threads, frames and code objects from memory
alone: no DWARF, no CPython headers, no code run in the inferior.
"""

import collections
import json
import os
import re
import stat
import struct
import time

__all__ = ["Walker", "Layout", "WalkError", "BudgetExhausted", "Budget", "load_tables", "format_frames", "process_files", "source_line", "escape"]


class WalkError(Exception):
    """Memory that should hold an interpreter structure could not be read."""


class BudgetExhausted(WalkError):
    """The walk's budget (memory reads, bytes read, wall time) is used up."""


def _version_tuple(version):
    parts = []
    for p in version.split(".")[:2]:
        digits = ""
        for c in p:
            if not c.isdigit():
                break
            digits += c
        parts.append(int(digits or 0))
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def load_tables(path=None):
    """The offset tables shipped beside this file, by key ("3.11", "3.11d")."""
    if path is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offsets.json")
    with open(path) as f:
        data = json.load(f)
    return dict((t["key"], t["fields"]) for t in data["tables"])


class Layout(object):
    """Offsets of one interpreter build."""

    def __init__(self, version, flags, fields):
        self.version = version
        self.minor = _version_tuple(version)
        self.flags = flags or ""
        self.f = fields

    @classmethod
    def for_version(cls, version, flags, tables, read=None, runtime=None):
        # 3.13+: the offsets the build itself wrote into memory, when
        # read(addr, size) and _PyRuntime's address are given.
        if read is not None and runtime and (not version or _version_tuple(version) >= (3, 13)):
            layout = debug_offsets_layout(read, runtime, flags)
            if layout is not None:
                # What _Py_DebugOffsets does not carry (locals, ints,
                # floats...) comes from this exact build kind's table.
                table = tables.get("%d.%d" % layout.minor + layout.flags)
                if table:
                    merged = dict(table)
                    merged.update(layout.f)
                    layout.f = merged
                return layout
        minor = "%d.%d" % _version_tuple(version)
        keep = "".join(c for c in (flags or "") if c in "td")
        for key in (minor + keep, minor + keep.replace("d", ""), minor):
            if key in tables:
                return cls(version, keep, tables[key])
        raise WalkError("no offsets for Python %s%s (known: %s)" % (minor, keep, ", ".join(sorted(tables))))

    def has(self, name):
        return name in self.f

    def off(self, name):
        try:
            return self.f[name]
        except KeyError:
            raise WalkError("Python %s: no offset for %s" % (self.version, name))

    def bits(self, name):
        return self.f[name + ":bit_offset"], self.f[name + ":bit_size"]


class Frame(object):
    __slots__ = ("filename", "name", "qualname", "lineno", "code", "addr", "entry")

    def __init__(self, filename, name, qualname, lineno, code, addr, entry=False):
        self.filename = filename
        self.name = name
        self.qualname = qualname
        self.lineno = lineno
        self.code = code
        self.addr = addr
        self.entry = entry

    def as_dict(self):
        return {"function": self.name, "file": self.filename, "line": self.lineno}


class Thread(object):
    __slots__ = ("tstate", "thread_id", "native_id", "interp")

    def __init__(self, tstate, thread_id, native_id, interp):
        self.tstate = tstate
        self.thread_id = thread_id
        self.native_id = native_id
        self.interp = interp


# _PyInterpreterFrame.owner values.
_OWNED_BY_GENERATOR = 1

# How many frames of one thread are kept by default: the innermost half
# and the outermost half, with the count of those between (see frames).
MAX_FRAMES = 4096
_MAX_STR = 1 << 16
# A code object's line table larger than this is not read (the line is
# then unknown): real ones are a few KiB.
_MAX_LINETABLE = 1 << 20

# One walk's budget (see Budget): a walk of a real process with dozens of
# threads and stacks thousands of frames deep uses a few tens of thousand
# reads and well under a second; a hostile target's chains of interpreters,
# threads or frames end here instead of running for hours.
MAX_READS = 500000
MAX_BYTES = 64 << 20
TIMEOUT = 20.0

_monotonic = getattr(time, "monotonic", time.time)


def thousands(n):
    """n with thousands separated by commas (5,906)."""
    return "{:,}".format(n)


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
            else:
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

    def half_spent(self):
        """Whether half of the reads, bytes or time is spent: listing
        thread states stops there, so that the stacks of the threads
        found can still be read."""
        return bool(self.max_reads and self.reads * 2 > self.max_reads or
                    self.max_bytes and self.bytes * 2 > self.max_bytes or
                    self.timeout and self.elapsed() * 2 > self.timeout)


class FrameList(list):
    """A thread's frames, innermost first, as Walker.frames keeps them:
    omitted frames were counted but not kept, between frames[gap - 1]
    and frames[gap]; partial is True when the chain was not read to its
    end (the walk's budget ran out)."""

    omitted = 0
    gap = 0
    partial = False

# The encoding of a compact str's characters by its kind (bytes a
# character).
_STR_ENCODINGS = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}


class Walker(object):
    """Reads Python stacks through read(addr, size) -> bytes."""

    def __init__(self, read, runtime, layout, ptr_size=8, budget=None, max_frames=MAX_FRAMES):
        self._read = read
        self.runtime = runtime
        self.L = layout
        self.ptr = ptr_size
        self._codes = {}
        self.max_frames = max_frames
        self.begin(budget)

    def begin(self, budget=None, max_frames=None):
        """Starts a walk: a fresh budget (budget, else one with the same
        limits as the last), thread states read again."""
        if budget is None:
            old = getattr(self, "budget", None) or Budget()
            budget = Budget(old.max_reads, old.timeout, old.max_bytes)
        self.budget = budget
        if max_frames is not None:
            self.max_frames = max_frames
        self._threads = None
        self.listing_cut = None

    def stopped(self):
        """Why this walk's output is partial, or None when it is not."""
        reasons = [r for r in (self.listing_cut, self.budget.exhausted) if r]
        return "; ".join(reasons) or None

    # Memory.
    def read(self, addr, size):
        if not addr:
            raise WalkError("read of NULL")
        self.budget.charge(size)
        try:
            b = self._read(addr, size)
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

    # Interpreters and threads.
    def interpreters(self):
        L = self.L
        interp = self.ptrv(self.runtime + L.off("_PyRuntimeState.interpreters.head"))
        seen = set()
        while interp and interp not in seen:
            seen.add(interp)
            yield interp
            interp = self.ptrv(interp + L.off("PyInterpreterState.next"))

    def threads(self):
        """Every interpreter's thread states, read once a walk. The
        chains are followed until they end or loop, or until half of the
        walk's budget is spent (listing_cut then says so): the rest is
        left for the stacks of the threads found."""
        if self._threads is not None:
            return self._threads
        L = self.L
        head = "PyInterpreterState.threads.head" if L.has("PyInterpreterState.threads.head") else "PyInterpreterState.tstate_head"
        out = []
        try:
            for interp in self.interpreters():
                t = self.ptrv(interp + L.off(head))
                seen = set()
                while t and t not in seen:
                    if self.budget.half_spent():
                        self.listing_cut = "thread states not all listed: %s listed with half the walk's budget (%s reads in %.1fs)" % (
                            thousands(len(out)), thousands(self.budget.reads), self.budget.elapsed())
                        self._threads = out
                        return out
                    seen.add(t)
                    tid = self.u64(t + L.off("PyThreadState.thread_id"))
                    native = None
                    if L.has("PyThreadState.native_thread_id"):
                        native = self.u64(t + L.off("PyThreadState.native_thread_id"))
                    out.append(Thread(t, tid, native, interp))
                    t = self.ptrv(t + L.off("PyThreadState.next"))
        except BudgetExhausted:
            pass
        self._threads = out
        return out

    def thread_for(self, native_id=None, pthread_id=None):
        """The thread state of an OS thread, by kernel tid or pthread_t."""
        for th in self.threads():
            if native_id is not None and th.native_id and th.native_id == native_id:
                return th
            if pthread_id is not None and th.thread_id == pthread_id:
                return th
        return None

    def match_tids(self, tids):
        """Maps kernel thread ids to thread states for builds that record
        only the pthread_t (3.7-3.10): glibc's struct pthread, which the
        pthread_t points at, holds the thread's tid at one fixed offset
        (0x2d0 in glibc 2.36 on x86-64). The offset where the most
        threads' tids are found is taken."""
        threads = self.threads()
        want = set(t for t in tids if t)
        if not want:
            return {}
        hits = {}
        for th in threads:
            if th.native_id:
                continue
            try:
                block = self.read(th.thread_id, 0x800)
            except WalkError:
                continue
            for off in range(0, len(block) - 3, 4):
                v = struct.unpack_from("<I", block, off)[0]
                if v in want:
                    hits.setdefault(off, []).append((v, th))
        out = dict((th.native_id, th) for th in threads if th.native_id)
        if hits:
            best = sorted(hits, key=lambda o: (-len(hits[o]), o))[0]
            for v, th in hits[best]:
                out.setdefault(v, th)
        return out

    # Frames.
    def frames(self, tstate, max_frames=None):
        """The Python frames of a thread, innermost first, as a FrameList.
        The whole chain is followed (until it ends, loops or the budget
        runs out) and counted; of more than max_frames (the walker's
        max_frames when None; 0 keeps all) the innermost half and the
        outermost half are kept, the count of those between is omitted."""
        limit = self.max_frames if max_frames is None else max_frames
        if self.L.minor >= (3, 11):
            refs = self._frame_refs_311(tstate)
        else:
            refs = self._frame_refs_37(tstate)
        head, tail, total, partial = [], None, 0, False
        if limit:
            tail = collections.deque(maxlen=limit // 2)
        try:
            for ref in refs:
                total += 1
                if not limit or len(head) < limit - limit // 2:
                    head.append(ref)
                else:
                    tail.append(ref)
        except BudgetExhausted:
            partial = True
        out = FrameList()
        out.partial = partial
        out.gap = len(head)
        out.omitted = total - len(head) - len(tail or ())
        for ref in head + list(tail or ()):
            out.append(self._frame_of(ref))
        return out

    def _frame_of(self, ref):
        """The Frame of what _frame_refs_* yielded: its line is worked out
        here, for the frames kept only (lineno None once the walk's time
        is up)."""
        f, code, pos = ref
        c = self.code(code)
        line = None
        if self.budget.time_up():
            pass
        elif self.L.minor >= (3, 11):
            line = self._line_311(c, pos * 2)
        elif self.L.minor >= (3, 10):
            line = self._line_310(c, pos * 2 if pos >= 0 else -1)
        else:
            line = self._line_lnotab(c, pos)
        return Frame(c["filename"], c["name"], c["qualname"], line, code, f)

    def _frame_refs_37(self, tstate):
        """(frame, code object, f_lasti) of each frame, innermost first."""
        L = self.L
        f = self.ptrv(tstate + L.off("PyThreadState.frame"))
        seen = set()
        while f and f not in seen:
            seen.add(f)
            code = self.ptrv(f + L.off("PyFrameObject.f_code"))
            lasti = self.i32(f + L.off("PyFrameObject.f_lasti"))
            self.code(code)
            yield f, code, lasti
            f = self.ptrv(f + L.off("PyFrameObject.f_back"))

    def _first_frame_311(self, tstate):
        L = self.L
        if L.has("PyThreadState.current_frame"):
            return self.ptrv(tstate + L.off("PyThreadState.current_frame"))
        cframe = self.ptrv(tstate + L.off("PyThreadState.cframe"))
        if not cframe:
            return 0
        return self.ptrv(cframe + L.off("_PyCFrame.current_frame"))

    def _frame_refs_311(self, tstate):
        """(frame, code object, code unit index) of each Python frame,
        innermost first (3.11+)."""
        L = self.L
        f = self._first_frame_311(tstate)
        code_field = "_PyInterpreterFrame.f_code" if L.has("_PyInterpreterFrame.f_code") else "_PyInterpreterFrame.f_executable"
        instr_field = "_PyInterpreterFrame.prev_instr" if L.has("_PyInterpreterFrame.prev_instr") else "_PyInterpreterFrame.instr_ptr"
        skipped = frame_owner_skipped(L.minor)
        seen = set()
        while f and f not in seen:
            seen.add(f)
            owner = struct.unpack("<b", self.read(f + L.off("_PyInterpreterFrame.owner"), 1))[0]
            code = self.ptrv(f + L.off(code_field)) & executable_mask(L.minor)
            if skipped is not None and owner >= skipped or not code:
                f = self.ptrv(f + L.off("_PyInterpreterFrame.previous"))
                continue
            c = self.code(code)
            instr = self.ptrv(f + L.off(instr_field))
            index = (instr - self.bytecode_start(f, code, c)) // 2
            if owner != _OWNED_BY_GENERATOR and index < c["firsttraceable"]:
                # An incomplete frame: not yet started, skipped as CPython does.
                f = self.ptrv(f + L.off("_PyInterpreterFrame.previous"))
                continue
            yield f, code, index
            f = self.ptrv(f + L.off("_PyInterpreterFrame.previous"))

    # Code objects.
    def code(self, addr):
        c = self._codes.get(addr)
        if c is not None:
            return c
        L = self.L
        c = {
            "filename": self.string(self.ptrv(addr + L.off("PyCodeObject.co_filename"))),
            "name": self.string(self.ptrv(addr + L.off("PyCodeObject.co_name"))),
            "firstlineno": self.i32(addr + L.off("PyCodeObject.co_firstlineno")),
        }
        c["qualname"] = c["name"]
        if L.has("PyCodeObject.co_qualname"):
            c["qualname"] = self.string(self.ptrv(addr + L.off("PyCodeObject.co_qualname")))
        table = "PyCodeObject.co_linetable" if L.has("PyCodeObject.co_linetable") else "PyCodeObject.co_lnotab"
        c["linetable"] = self.bytes_obj(self.ptrv(addr + L.off(table)))
        if L.has("PyCodeObject.co_code_adaptive"):
            c["code_start"] = addr + L.off("PyCodeObject.co_code_adaptive")
            c["firsttraceable"] = 0
            if L.has("PyCodeObject._co_firsttraceable"):
                c["firsttraceable"] = self.i32(addr + L.off("PyCodeObject._co_firsttraceable"))
        self._codes[addr] = c
        return c

    def string(self, addr):
        """A str object's value ("<?>" when it cannot be decoded)."""
        L = self.L
        if not addr:
            return "<NULL>"
        try:
            length, kind, compact, ascii_ = self.str_state(addr)
            if not compact or length < 0 or length > _MAX_STR or kind not in (1, 2, 4):
                return "<?>"
            if ascii_:
                data = self.read(addr + L.off("sizeof(PyASCIIObject)"), length)
                return data.decode("ascii", "replace")
            data = self.read(addr + L.off("sizeof(PyCompactUnicodeObject)"), length * kind)
            return data.decode(_STR_ENCODINGS[kind], "replace")
        except WalkError:
            return "<?>"

    def str_state(self, addr):
        """(length, kind, compact, ascii) of the str object at addr: its
        length and the bits of its state that say how it is stored."""
        L = self.L
        length = self.i64(addr + L.off("PyASCIIObject.length"))
        word = self.u32(addr + L.off("PyASCIIObject.state"))
        base = L.off("PyASCIIObject.state") * 8

        def bit(name):
            off, size = L.bits("PyASCIIObject.state." + name)
            return (word >> (off - base)) & ((1 << size) - 1)

        return length, bit("kind"), bit("compact"), bit("ascii")

    def bytes_obj(self, addr):
        if not addr:
            return b""
        size = self.i64(addr + self.L.off("PyVarObject.ob_size"))
        if size <= 0 or size > _MAX_LINETABLE:
            return b""
        return self.read(addr + self.L.off("PyBytesObject.ob_sval"), size)

    # Line numbers.
    @staticmethod
    def _line_lnotab(c, lasti):
        """3.7-3.9: co_lnotab pairs of (bytecode offset, line) increments."""
        line = c["firstlineno"]
        tab = bytearray(c["linetable"])
        addr = 0
        for i in range(0, len(tab) - 1, 2):
            addr += tab[i]
            if addr > lasti:
                break
            inc = tab[i + 1]
            line += inc - 256 if inc >= 128 else inc
        return line

    @staticmethod
    def _line_310(c, addr):
        """3.10: co_linetable pairs of (bytes covered, line increment);
        -128 marks a range with no line."""
        if addr < 0:
            return c["firstlineno"]
        tab = bytearray(c["linetable"])
        line = c["firstlineno"]
        start = 0
        for i in range(0, len(tab) - 1, 2):
            sdelta, ldelta = tab[i], tab[i + 1]
            ldelta = ldelta - 256 if ldelta >= 128 else ldelta
            end = start + sdelta
            if ldelta != -128:
                line += ldelta
            if start <= addr < end:
                return None if ldelta == -128 else line
            start = end
        return line

    @staticmethod
    def _line_311(c, addr):
        """3.11+: the location table of PEP 657, one entry per run of code
        units: a first byte with bit 7 set, a code in bits 3-6 and the
        length minus one in bits 0-2, then the code's varints."""
        tab = bytearray(c["linetable"])
        line = c["firstlineno"]
        pos = 0
        start = 0
        n = len(tab)

        def varint(p):
            b = tab[p]
            p += 1
            val = b & 63
            shift = 0
            while b & 64 and p < n:
                b = tab[p]
                p += 1
                shift += 6
                val |= (b & 63) << shift
            return val, p

        def svarint(p):
            v, p = varint(p)
            return (-(v >> 1) if v & 1 else v >> 1), p

        while pos < n:
            first = tab[pos]
            pos += 1
            code = (first >> 3) & 15
            length = ((first & 7) + 1) * 2
            has_line = True
            if code == 15:
                has_line = False
            elif code == 14:
                delta, pos = svarint(pos)
                line += delta
                _, pos = varint(pos)
                _, pos = varint(pos)
                _, pos = varint(pos)
            elif code == 13:
                delta, pos = svarint(pos)
                line += delta
            elif code >= 10:
                line += code - 10
                pos += 2
            else:
                pos += 1
            end = start + length
            if start <= addr < end:
                return line if has_line else None
            start = end
        return None


# Strings from the target (names, file names, thread names, source
# lines) are printed through escape(), and its files are read through
# open_source(): the target chooses both.

# What escape() rewrites: backslash, C0 controls, DEL, C1 controls, the
# Arabic letter mark, LRM/RLM, the line and paragraph separators, the
# bidi embeddings/overrides and isolates, and lone surrogates. Keep in
# step with cmd/internal/textline.Escape (a test compares the two).
_UNSAFE = re.compile(u"[\\\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_CONTROLS = re.compile(_UNSAFE.pattern.replace(u"\\\\", u"", 1))
_NAMED_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_one(m):
    c = m.group(0)
    e = _NAMED_ESCAPES.get(c)
    if e is not None:
        return e
    if ord(c) < 0x100:
        return "\\x%02x" % ord(c)
    return "\\u%04x" % ord(c)


def escape(s):
    """s with what could drive a terminal or fake a line written as
    Python's repr writes it (\\n, \\x1b, \\u202e, and \\\\ for a
    backslash); None as "". Every string from the target goes through
    this before it is printed as text."""
    if s is None:
        return ""
    return _UNSAFE.sub(_escape_one, s)


def has_controls(s):
    """Whether s holds a character escape() rewrites, backslash aside."""
    return s is not None and _CONTROLS.search(s) is not None


# How much of a source file is read, and of a line printed.
MAX_SOURCE_BYTES = 4 << 20
MAX_SOURCE_LINE = 1024
_MAX_LINKS = 40
# uid, gid and groups that match no file's owner or group: only what
# anyone may read is read.
ANYONE = (-1, -1, ())


class SourceFiles(object):
    """Where and as whom the target's files are read: root is its root
    directory ("" or "/" for this one), cwd its working directory for
    relative names ("" for none: relative to root when root is not /),
    creds its (uid, gid, groups) for file permissions (uid 0 reads
    everything; ANYONE only what others may read)."""

    def __init__(self, root="", cwd="", creds=ANYONE):
        self.root = root or "/"
        self.cwd = cwd
        self.creds = creds


def process_creds(pid):
    """(fsuid, fsgid, groups) of a live process from /proc/PID/status,
    ANYONE when they cannot be read."""
    ids = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Uid", "Gid", "Groups"):
                    ids[key] = [int(x) for x in rest.split()]
        return ids["Uid"][3], ids["Gid"][3], tuple(ids.get("Groups", ()))
    except (IOError, OSError, KeyError, IndexError, ValueError):
        return ANYONE


def process_files(pid, live, root="", creds=None):
    """The SourceFiles of a process: a live one's own view through /proc
    (its root, cwd and credentials), else the root pyattach gave (a
    core's container root) and creds (the core's owner, ANYONE when not
    known)."""
    if live and pid and os.path.isdir("/proc/%d" % pid):
        return SourceFiles("/proc/%d/root" % pid, "/proc/%d/cwd" % pid, process_creds(pid))
    return SourceFiles(root, "", tuple(creds) if creds else ANYONE)


def may_access(st, creds, bit):
    """Whether creds may read (bit 4) or search (bit 1) the file of stat
    st, by its mode bits as the kernel checks them (ACLs not read)."""
    uid, gid, groups = creds
    if uid == 0:
        return True
    mode = st.st_mode
    if st.st_uid == uid:
        return bool(mode & (bit << 6))
    if st.st_gid == gid or st.st_gid in groups:
        return bool(mode & (bit << 3))
    return bool(mode & bit)


def open_source(filename, files):
    """A descriptor open for reading on the target's file filename, or
    None. The name is resolved one component at a time under files.root,
    as the kernel resolves it for the target: ".." and symbolic links
    (absolute ones from the root) never leave that root, every directory
    must be searchable and the file readable by files.creds, and only a
    regular file is opened (a FIFO, device or directory is not: it is
    looked at through O_PATH only, so nothing blocks and no device
    opens)."""
    if not filename or "\0" in filename or filename.startswith("<"):
        return None
    dirflags = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
    fds = []

    def track(fd):
        fds.append(fd)
        return fd

    try:
        root = track(os.open(files.root, dirflags))
        root_st = os.fstat(root)
        if os.path.isabs(filename):
            cur = root
        elif files.cwd:
            cur = track(os.open(files.cwd, dirflags))
        elif files.root == "/":
            cur = track(os.open(".", dirflags))
        else:
            cur = root
        parts = [p for p in filename.split("/") if p not in ("", ".")]
        links = 0
        st = os.fstat(cur)
        fd = cur
        while parts:
            name = parts.pop(0)
            if not stat.S_ISDIR(st.st_mode) or not may_access(st, files.creds, 1):
                return None
            if name == "..":
                if (st.st_dev, st.st_ino) != (root_st.st_dev, root_st.st_ino):
                    cur = track(os.open("..", dirflags, dir_fd=cur))
                    st = os.fstat(cur)
                fd = cur
                continue
            fd = track(os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=cur))
            fst = os.fstat(fd)
            if stat.S_ISLNK(fst.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    return None
                dest = os.readlink(name, dir_fd=cur)
                if dest.startswith("/"):
                    cur, st = root, root_st
                parts = [p for p in dest.split("/") if p not in ("", ".")] + parts
                fd = cur
                continue
            cur, st = fd, fst
        if not stat.S_ISREG(st.st_mode) or not may_access(st, files.creds, 4):
            return None
        # Reopened through the O_PATH descriptor: the same inode.
        f = os.open("/proc/self/fd/%d" % fd, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        fst = os.fstat(f)
        if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            os.close(f)
            return None
        return f
    except (IOError, OSError, ValueError):
        return None
    finally:
        for d in fds:
            os.close(d)


def source_lines(filename, files, last):
    """The first last lines of the target's file, decoded, without their
    line ends; fewer when the file is shorter or longer than
    MAX_SOURCE_BYTES; None when it cannot be read (see open_source)."""
    fd = open_source(filename, files)
    if fd is None:
        return None
    chunks, size, newlines = [], 0, 0
    try:
        while newlines < last and size < MAX_SOURCE_BYTES:
            chunk = os.read(fd, min(1 << 16, MAX_SOURCE_BYTES - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            newlines += chunk.count(b"\n")
    except (IOError, OSError):
        return None
    finally:
        os.close(fd)
    lines = b"".join(chunks).split(b"\n")
    if size >= MAX_SOURCE_BYTES and newlines < last:
        lines.pop()  # cut by the bound, not by the file's end
    elif lines and lines[-1] == b"":
        lines.pop()
    return [l.rstrip(b"\r").decode("utf-8", "replace") for l in lines[:last]]


def source_line(filename, lineno, files):
    """The stripped source line lineno of the target's file, cut at
    MAX_SOURCE_LINE characters, or None. Not escaped."""
    if lineno is None or lineno < 1:
        return None
    lines = source_lines(filename, files, lineno)
    if not lines or len(lines) < lineno:
        return None
    return bounded(lines[lineno - 1].strip(), MAX_SOURCE_LINE)


def omitted_line(n):
    """The line that stands for n frames not shown."""
    return "  ... %s frame%s not shown ..." % (thousands(n), "" if n == 1 else "s")


# The line after the frames of a stack not read to its end.
NOT_READ_LINE = "  ... stack not read further: the walk stopped ..."


def format_frames(frames, files=None, with_source=True):
    """Frames as CPython's py-bt prints them, the target's strings
    escaped, source lines read through files (a SourceFiles); a
    FrameList's omitted frames as one line where they were, a partial
    one's end marked."""
    files = files or SourceFiles()
    out = ["Traceback (most recent call first):"]
    omitted, gap = getattr(frames, "omitted", 0), getattr(frames, "gap", 0)
    for i, fr in enumerate(frames):
        if omitted and i == gap:
            out.append(omitted_line(omitted))
        line = "?" if fr.lineno is None else str(fr.lineno)
        out.append('  File "%s", line %s, in %s' % (escape(fr.filename), line, escape(fr.name)))
        if with_source:
            src = source_line(fr.filename, fr.lineno, files)
            if src:
                out.append("    " + escape(src))
    if omitted and gap >= len(frames):
        out.append(omitted_line(omitted))
    if getattr(frames, "partial", False):
        out.append(NOT_READ_LINE)
    return "\n".join(out) + "\n"


# py-locals, py-list, py-up and py-down.

# How CPython's py-locals and py-list bound what they print.
MAX_REPR = 1024
TRUNCATED = "...(truncated)"
_MAX_LOCALS = 1 << 16
# Ints longer than this many 30-bit digits (about 3600 decimal digits,
# below the str conversion limit of 3.11+) are shown as type and address.
_MAX_INT_DIGITS = 400
_PyLong_SHIFT = 30
_Py_TPFLAGS_HEAPTYPE = 1 << 9
# co_localspluskinds bits (3.11+).
_CO_FAST_HIDDEN = 0x10
_CO_FAST_LOCAL = 0x20


def bounded(text, limit=MAX_REPR):
    """text cut at limit characters and marked, as CPython's py-locals
    cuts a value's repr."""
    if len(text) > limit:
        return text[:limit] + TRUNCATED
    return text


def long_sign_ndigits(tag):
    """Sign (-1, 0, 1) and digit count of a 3.12+ int's long_value.lv_tag:
    bits 0-1 hold the sign (0 positive, 1 zero, 2 negative), bit 2 is
    reserved, the rest is the number of digits."""
    return 1 - (tag & 3), tag >> 3


def long_from_digits(sign, raw):
    """The value of an int from its 30-bit digits (little-endian uint32s,
    least significant digit first)."""
    n = len(raw) // 4
    v = 0
    for d in reversed(struct.unpack("<%dI" % n, raw[: n * 4])):
        v = (v << _PyLong_SHIFT) | (d & ((1 << _PyLong_SHIFT) - 1))
    return -v if sign < 0 else (0 if sign == 0 else v)


def _walker_cstring(self, addr, limit=256):
    """A NUL-terminated C string (a type's tp_name)."""
    out = b""
    while len(out) < limit:
        chunk = self.read(addr + len(out), 32)
        i = chunk.find(b"\0")
        if i >= 0:
            return (out + chunk[:i]).decode("utf-8", "replace")
        out += chunk
    return out.decode("utf-8", "replace")


def _walker_type_of(self, addr):
    """The name of an object's type and whether it is a static (built-in)
    type: a class a program defines may be called "int" too."""
    L = self.L
    tp = self.ptrv(addr + L.off("PyObject.ob_type"))
    name = _walker_cstring(self, self.ptrv(tp + L.off("PyTypeObject.tp_name")))
    flags = self.u64(tp + L.off("PyTypeObject.tp_flags"))
    return name, not flags & _Py_TPFLAGS_HEAPTYPE


def _walker_int_value(self, addr):
    """An int's value, None when it has more than _MAX_INT_DIGITS digits."""
    L = self.L
    if L.has("PyLongObject.long_value.lv_tag"):
        sign, n = long_sign_ndigits(self.u64(addr + L.off("PyLongObject.long_value.lv_tag")))
        digits = addr + L.off("PyLongObject.long_value.ob_digit")
    else:
        size = self.i64(addr + L.off("PyVarObject.ob_size"))
        sign, n = (size > 0) - (size < 0), abs(size)
        digits = addr + L.off("PyLongObject.ob_digit")
    if n > _MAX_INT_DIGITS:
        return None
    if n == 0:
        return 0
    return long_from_digits(sign, self.read(digits, 4 * n))


def _walker_str_prefix(self, addr, limit):
    """The first limit characters of a str and its length, or None."""
    L = self.L
    length, kind, compact, ascii_ = self.str_state(addr)
    if not compact or length < 0 or kind not in (1, 2, 4):
        return None
    n = min(length, limit)
    if ascii_:
        return self.read(addr + L.off("sizeof(PyASCIIObject)"), n).decode("ascii", "replace") if n else "", length
    data = self.read(addr + L.off("sizeof(PyCompactUnicodeObject)"), n * kind) if n else b""
    return data.decode(_STR_ENCODINGS[kind], "surrogatepass"), length


def _walker_value_repr(self, addr, limit=MAX_REPR):
    """repr() of the object at addr, for None, bool, int, float, str and
    bytes, bounded as CPython's py-locals bounds it; "<TYPE object at
    0xADDR>" for anything else."""
    L = self.L
    try:
        name, static = _walker_type_of(self, addr)
    except WalkError:
        return "<unreadable object at 0x%x>" % addr
    try:
        if static and name == "NoneType":
            return "None"
        if static and name == "bool":
            return "True" if _walker_int_value(self, addr) else "False"
        if static and name == "int":
            v = _walker_int_value(self, addr)
            if v is not None:
                return bounded(repr(v), limit)
        elif static and name == "float":
            return bounded(repr(struct.unpack("<d", self.read(addr + L.off("PyFloatObject.ob_fval"), 8))[0]), limit)
        elif static and name == "str":
            got = _walker_str_prefix(self, addr, limit + 1)
            if got is not None:
                return bounded(repr(got[0]), limit)
        elif static and name == "bytes":
            size = self.i64(addr + L.off("PyVarObject.ob_size"))
            if size >= 0:
                n = min(size, limit + 1)
                data = self.read(addr + L.off("PyBytesObject.ob_sval"), n) if n else b""
                return bounded(repr(data), limit)
    except WalkError:
        pass
    return "<%s object at 0x%x>" % (escape(name), addr)


def _walker_locals(self, fr):
    """A frame's local variables that hold a value, as (name, repr) in
    the code object's order. Like CPython's py-locals, only the code's
    own locals (arguments included): cell-only and free variables are
    not listed, and a local that is also a cell shows as its cell."""
    L = self.L
    out = []
    if L.minor >= (3, 11):
        n = self.i32(fr.code + L.off("PyCodeObject.co_nlocalsplus"))
        names = self.ptrv(fr.code + L.off("PyCodeObject.co_localsplusnames"))
        kinds = bytearray(self.bytes_obj(self.ptrv(fr.code + L.off("PyCodeObject.co_localspluskinds"))))
        base = fr.addr + L.off("_PyInterpreterFrame.localsplus")
    else:
        n = self.i32(fr.code + L.off("PyCodeObject.co_nlocals"))
        names = self.ptrv(fr.code + L.off("PyCodeObject.co_varnames"))
        kinds = None
        base = fr.addr + L.off("PyFrameObject.f_localsplus")
    if n < 0 or n > _MAX_LOCALS:
        raise WalkError("code object at 0x%x: %d locals" % (fr.code, n))
    n = min(n, self.i64(names + L.off("PyVarObject.ob_size")))
    for i in range(n):
        if kinds is not None and (i >= len(kinds) or not kinds[i] & _CO_FAST_LOCAL or kinds[i] & _CO_FAST_HIDDEN):
            continue
        v = self.ptrv(base + self.ptr * i)
        if not v:
            continue
        name = self.string(self.ptrv(names + L.off("PyTupleObject.ob_item") + self.ptr * i))
        out.append((name, _walker_value_repr(self, v)))
    return out


# Methods of Walker, defined outside its class body.
Walker.cstring = _walker_cstring
Walker.type_of = _walker_type_of
Walker.int_value = _walker_int_value
Walker.value_repr = _walker_value_repr
Walker.locals = _walker_locals


def format_locals(w, fr):
    """py-locals of one frame in CPython's format: "name = repr" lines,
    after a "Locals for NAME" line from 3.11 on (CPython's py-locals then
    goes on with the callers run by the same C eval loop; this prints the
    selected frame only)."""
    out = []
    if w.L.minor >= (3, 11):
        out.append("Locals for %s" % escape(fr.name))
    for name, value in w.locals(fr):
        out.append("%s = %s" % (escape(name), value))
    return "\n".join(out) + "\n"


def parse_list_args(args):
    """py-list's arguments: none, START (11 lines from START) or
    START, END (inclusive); (None, None) for none."""
    import re

    m = re.match(r"\s*(\d+)\s*,\s*(\d+)\s*$", args or "")
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.match(r"\s*(\d+)\s*$", args or "")
    if m:
        return int(m.group(1)), int(m.group(1)) + 10
    return None, None


def format_list(fr, args="", files=None):
    """py-list in CPython's format: the lines around the frame's current
    line (five either side, or START[, END]), each number right-aligned in
    four columns, the current one marked with ">"."""
    if fr.lineno is None:
        return "Unable to read python frame line number\n"
    start, end = parse_list_args(args)
    if start is None:
        start, end = fr.lineno - 5, fr.lineno + 5
    start = max(start, 1)
    lines = source_lines(fr.filename, files or SourceFiles(), end)
    if lines is None:
        return "Unable to open %s\n" % escape(fr.filename)
    out = []
    for n in range(start, min(end, len(lines)) + 1):
        mark = ">%d" % n if n == fr.lineno else str(n)
        out.append("%4s    %s\n" % (mark, escape(bounded(lines[n - 1], MAX_SOURCE_LINE))))
    return "".join(out)


def format_summary(w, index, fr, files=None):
    """What py-up and py-down print for the frame they select, as CPython
    does: "#INDEX Frame 0xADDR, for file F, line N, in NAME (locals)" and
    the source line. INDEX counts Python frames, innermost 0 (CPython's
    counts gdb's C frames)."""
    line = "?" if fr.lineno is None else str(fr.lineno)
    try:
        loc = ", ".join("%s=%s" % (escape(n), v) for n, v in w.locals(fr))
    except WalkError:
        loc = ""
    head = bounded("Frame 0x%x, for file %s, line %s, in %s (%s)" % (fr.addr, escape(fr.filename), line, escape(fr.name), loc))
    out = "#%d %s\n" % (index, head)
    src = source_line(fr.filename, fr.lineno, files or SourceFiles())
    if src:
        out += "    %s\n" % escape(src)
    return out


def move_selection(frames, index, up):
    """(new index, message) for py-up/py-down from the selected index:
    None and CPython's message when there is no frame that way."""
    if up:
        if index + 1 < len(frames):
            return index + 1, None
        return None, "Unable to find an older python frame\n"
    if index > 0:
        return index - 1, None
    return None, "Unable to find a newer python frame\n"


# _Py_DebugOffsets (3.13+): _PyRuntime starts with the offsets that
# out-of-process tools need, written by the build itself: the cookie
# "xdebugpy", PY_VERSION_HEX, then one uint64_t per member. Its members
# change between minor versions (not between patch releases), so their
# order is kept here with the minor version that added each;
# detect/pywalk's roots test checks each version's list against the DWARF
# of Debian's builds of that version.

DEBUG_COOKIE = b"xdebugpy"

# Every member of every version, in order, once: "name@3.14" is a member
# that the versions before 3.14 do not have. Members have only been added
# so far; one that a later version drops needs an upper bound here.
_DEBUG_OFFSETS_LAYOUT = (
    ("runtime_state", "size finalizing interpreters_head"),
    ("interpreter_state", "size id next threads_head threads_main@3.14 gc "
     "imports_modules sysdict builtins ceval_gil gil_runtime_state "
     "gil_runtime_state_enabled gil_runtime_state_locked gil_runtime_state_holder "
     "code_object_generation@3.14 tlbc_generation@3.14"),
    ("thread_state", "size prev next interp current_frame base_frame@3.15 "
     "last_profiled_frame@3.15 last_profiled_frame_seq@3.15 thread_id "
     "native_thread_id datastack_chunk status holds_gil@3.15 gil_requested@3.15 "
     "current_exception@3.15 exc_state@3.15"),
    ("err_stackitem", "exc_value@3.15"),
    ("interpreter_frame", "size previous executable instr_ptr localsplus owner "
     "stackpointer@3.14 tlbc_index@3.14"),
    ("code_object", "size filename name qualname linetable firstlineno argcount "
     "localsplusnames localspluskinds co_code_adaptive co_tlbc@3.14"),
    ("pyobject", "size ob_type"),
    ("type_object", "size tp_name tp_repr tp_flags tp_basicsize@3.15 "
     "tp_dictoffset@3.15"),
    ("heap_type_object", "size@3.15 ht_cached_keys@3.15"),
    ("tuple_object", "size ob_item ob_size"),
    ("list_object", "size ob_item ob_size"),
    ("set_object", "size@3.14 used@3.14 table@3.14 mask@3.14"),
    ("dict_object", "size ma_keys ma_values"),
    ("float_object", "size ob_fval"),
    ("long_object", "size lv_tag ob_digit"),
    ("bytes_object", "size ob_size ob_sval"),
    ("unicode_object", "size state length asciiobject_size "
     "compactunicodeobject_size@3.15"),
    ("gc", "size collecting frame@3.15 generation_stats_size@3.15 "
     "generation_stats@3.15"),
    ("gen_object", "size@3.14 gi_name@3.14 gi_iframe@3.14 gi_frame_state@3.14"),
    ("llist_node", "next@3.14 prev@3.14"),
    ("debugger_support", "eval_breaker@3.14 remote_debugger_support@3.14 "
     "remote_debugging_enabled@3.14 debugger_pending_call@3.14 "
     "debugger_script_path@3.14 debugger_script_path_size@3.14"),
)


def _debug_offsets_members(minor):
    """The members of _Py_DebugOffsets of a minor version (a tuple such as
    (3, 14)) in order, from _DEBUG_OFFSETS_LAYOUT."""
    members = ["version", "free_threaded"]
    for struct_name, names in _DEBUG_OFFSETS_LAYOUT:
        for name in names.split():
            name, _, since = name.partition("@")
            if not since or _version_tuple(since) <= minor:
                members.append("%s.%s" % (struct_name, name))
    return members


DEBUG_OFFSETS_MEMBERS = dict((v, _debug_offsets_members(v)) for v in ((3, 13), (3, 14), (3, 15)))

# Layout names (as in the offset tables) of the members the walker reads.
DEBUG_OFFSETS_FIELDS = {
    "runtime_state.interpreters_head": "_PyRuntimeState.interpreters.head",
    "interpreter_state.id": "PyInterpreterState.id",
    "interpreter_state.next": "PyInterpreterState.next",
    "interpreter_state.threads_head": "PyInterpreterState.threads.head",
    "thread_state.size": "sizeof(PyThreadState)",
    "thread_state.next": "PyThreadState.next",
    "thread_state.interp": "PyThreadState.interp",
    "thread_state.current_frame": "PyThreadState.current_frame",
    "thread_state.thread_id": "PyThreadState.thread_id",
    "thread_state.native_thread_id": "PyThreadState.native_thread_id",
    "interpreter_frame.size": "sizeof(_PyInterpreterFrame)",
    "interpreter_frame.previous": "_PyInterpreterFrame.previous",
    "interpreter_frame.executable": "_PyInterpreterFrame.f_executable",
    "interpreter_frame.instr_ptr": "_PyInterpreterFrame.instr_ptr",
    "interpreter_frame.localsplus": "_PyInterpreterFrame.localsplus",
    "interpreter_frame.owner": "_PyInterpreterFrame.owner",
    "interpreter_frame.stackpointer": "_PyInterpreterFrame.stackpointer",
    "interpreter_frame.tlbc_index": "_PyInterpreterFrame.tlbc_index",
    "code_object.filename": "PyCodeObject.co_filename",
    "code_object.name": "PyCodeObject.co_name",
    "code_object.qualname": "PyCodeObject.co_qualname",
    "code_object.linetable": "PyCodeObject.co_linetable",
    "code_object.firstlineno": "PyCodeObject.co_firstlineno",
    "code_object.argcount": "PyCodeObject.co_argcount",
    "code_object.localsplusnames": "PyCodeObject.co_localsplusnames",
    "code_object.localspluskinds": "PyCodeObject.co_localspluskinds",
    "code_object.co_code_adaptive": "PyCodeObject.co_code_adaptive",
    "code_object.co_tlbc": "PyCodeObject.co_tlbc",
    "pyobject.size": "sizeof(PyObject)",
    "pyobject.ob_type": "PyObject.ob_type",
    "type_object.tp_name": "PyTypeObject.tp_name",
    "type_object.tp_flags": "PyTypeObject.tp_flags",
    "tuple_object.ob_item": "PyTupleObject.ob_item",
    "tuple_object.ob_size": "PyVarObject.ob_size",
    "list_object.ob_item": "PyListObject.ob_item",
    "float_object.ob_fval": "PyFloatObject.ob_fval",
    "long_object.lv_tag": "PyLongObject.long_value.lv_tag",
    "long_object.ob_digit": "PyLongObject.long_value.ob_digit",
    "bytes_object.ob_sval": "PyBytesObject.ob_sval",
    "unicode_object.state": "PyASCIIObject.state",
    "unicode_object.length": "PyASCIIObject.length",
    "unicode_object.asciiobject_size": "sizeof(PyASCIIObject)",
    "unicode_object.compactunicodeobject_size": "sizeof(PyCompactUnicodeObject)",
}

# What _Py_DebugOffsets does not carry, checked against the DWARF by the
# same test: the bits of PyASCIIObject.state (from its first bit: interned
# is a 2-bit field, but a whole byte in free-threaded builds from 3.14 on,
# "t"; 3.13t keeps the bit field), how far _co_firsttraceable sits before
# co_code_adaptive, and how much the compact string header adds to
# PyASCIIObject (utf8_length and utf8).
DEBUG_OFFSETS_EXTRA = {
    "": {"state.kind": (2, 3), "state.compact": (5, 1), "state.ascii": (6, 1),
         "firsttraceable_before_code": 16, "compact_extra": 16},
    "t": {"state.kind": (8, 3), "state.compact": (11, 1), "state.ascii": (12, 1),
          "firsttraceable_before_code": 16, "compact_extra": 16},
}


def version_from_hex(v):
    """"3.13.5" from PY_VERSION_HEX."""
    return "%d.%d.%d" % (v >> 24, (v >> 16) & 0xFF, (v >> 8) & 0xFF)


def read_debug_offsets(read, runtime):
    """The _Py_DebugOffsets at _PyRuntime as (version, {member: value}),
    or None when it is not there: before 3.13, or a minor version whose
    members this file does not know."""
    try:
        head = bytes(read(runtime, 16))
    except Exception:
        return None
    if len(head) != 16 or head[:8] != DEBUG_COOKIE:
        return None
    hexv = struct.unpack("<Q", head[8:16])[0]
    members = DEBUG_OFFSETS_MEMBERS.get((hexv >> 24, (hexv >> 16) & 0xFF))
    if members is None:
        return None
    try:
        raw = bytes(read(runtime + 8, 8 * len(members)))
    except Exception:
        return None
    if len(raw) != 8 * len(members):
        return None
    values = struct.unpack("<%dQ" % len(members), raw)
    return version_from_hex(hexv), dict(zip(members, values))


def debug_offsets_layout(read, runtime, flags=""):
    """A Layout built from the _Py_DebugOffsets in the inferior's memory,
    or None when it has none (see read_debug_offsets)."""
    got = read_debug_offsets(read, runtime)
    if got is None:
        return None
    version, d = got
    keep = "".join(c for c in (flags or "") if c == "d")
    if d.get("free_threaded"):
        keep = "t" + keep
    extra = DEBUG_OFFSETS_EXTRA["t" if "t" in keep and _version_tuple(version) >= (3, 14) else ""]
    fields = {}
    for member, name in DEBUG_OFFSETS_FIELDS.items():
        if member in d:
            fields[name] = d[member]
    state_bit = fields["PyASCIIObject.state"] * 8
    for name in ("state.kind", "state.compact", "state.ascii"):
        bit, size = extra[name]
        fields["PyASCIIObject." + name + ":bit_offset"] = state_bit + bit
        fields["PyASCIIObject." + name + ":bit_size"] = size
    fields.setdefault("sizeof(PyCompactUnicodeObject)", fields["sizeof(PyASCIIObject)"] + extra["compact_extra"])
    fields["PyCodeObject._co_firsttraceable"] = fields["PyCodeObject.co_code_adaptive"] - extra["firsttraceable_before_code"]
    layout = Layout(version, keep, fields)
    layout.source = "_Py_DebugOffsets"
    return layout


# Frames from 3.12 on: frames whose owner is FRAME_OWNED_BY_CSTACK (3.12,
# 3.13: 3; 3.14: 4) or FRAME_OWNED_BY_INTERPRETER (3.14+: 3), the
# interpreter's own entry and base frames, hold no Python code. Checked
# against the DWARF of enum _frameowner by the roots test.
_FIRST_SKIPPED_OWNER = 3


def frame_owner_skipped(minor):
    """The first _PyInterpreterFrame.owner value that is not a Python
    function's frame (every higher one is not either), or None."""
    if minor >= (3, 12):
        return _FIRST_SKIPPED_OWNER
    return None


def executable_mask(minor):
    """What keeps the object pointer of _PyInterpreterFrame.f_executable:
    from 3.14 on a _PyStackRef whose low bits are tags (Py_TAG_BITS: 1 in
    3.14, 3 in 3.15); objects are at least 8-byte aligned."""
    if minor >= (3, 14):
        return ~7 & 0xFFFFFFFFFFFFFFFF
    return 0xFFFFFFFFFFFFFFFF


def _bytecode_start(self, frame, code, c):
    """Where the bytecode that frame runs starts: the code object's own
    co_code_adaptive, or in a free-threaded 3.14+ build the thread's copy
    (co_tlbc->entries[frame->tlbc_index]) when the frame runs one."""
    L = self.L
    start = c["code_start"]
    if "t" not in L.flags or not (L.has("PyCodeObject.co_tlbc") and L.has("_PyInterpreterFrame.tlbc_index")):
        return start
    try:
        index = self.i32(frame + L.off("_PyInterpreterFrame.tlbc_index"))
        if index <= 0:
            return start
        array = self.ptrv(code + L.off("PyCodeObject.co_tlbc"))
        # _PyCodeArray: Py_ssize_t size, then char *entries[size].
        if not array or index >= self.i64(array):
            return start
        entry = self.ptrv(array + 8 + 8 * index)
        return entry or start
    except WalkError:
        return start


Walker.bytecode_start = _bytecode_start


def namespace_tid(pid, tid):
    """A live thread's id in its own PID namespace (what CPython stored in
    native_thread_id), read from the NSpid line of /proc/PID/task/TID/status;
    tid itself when the thread shares the debugger's namespace or /proc
    does not say."""
    try:
        with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    ids = line.split()[1:]
                    if ids:
                        return int(ids[-1])
    except (IOError, OSError, ValueError):
        pass
    return tid


# A thread's stack and its struct pthread: glibc puts the struct pthread
# (which pthread_t points at) at the top of the mapping it allocates for a
# thread's stack, so a thread created by pthread_create runs with its
# stack pointer below its pthread_t, within the stack's size.
_MAX_THREAD_STACK = 1 << 30


def match_stacks(walker, sps):
    """Maps debugger threads to thread states by stack pointer, for a
    core of a process in another PID namespace when no register gives the
    thread pointer (lldb 14 has no fs_base): sps maps a debugger thread id
    to its stack pointer. Each pthread-created thread matches the thread
    state whose pthread_t is the nearest above its stack pointer; a single
    thread left over on each side (the main thread) matches too."""
    threads = walker.threads()
    out = {}
    taken = set()
    for tid, sp in sps.items():
        best = None
        for th in threads:
            d = th.thread_id - sp
            if 0 < d < _MAX_THREAD_STACK and (best is None or d < best[0]):
                best = (d, th)
        if best is not None and best[1].tstate not in taken:
            out[tid] = best[1]
            taken.add(best[1].tstate)
    left_tids = [tid for tid in sps if tid not in out]
    left = [th for th in threads if th.tstate not in taken]
    if len(left_tids) == 1 and len(left) == 1:
        out[left_tids[0]] = left[0]
    return out
