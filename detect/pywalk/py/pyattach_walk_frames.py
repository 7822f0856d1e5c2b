"""Python frames and code objects: a thread's chain of frames (frame
objects up to 3.10, _PyInterpreterFrame from 3.11), each frame's code
object, line number and local variables."""

import struct

from pyattach_read_code import MAX_LINETABLE
from pyattach_read_repr import value_repr
from pyattach_walk_memory import BudgetExhausted, WalkError


class Frame(object):
    """A Python frame; interp is its interpreter's id when the walker
    read it (Walker.thread_frames)."""
    __slots__ = ("filename", "name", "qualname", "lineno", "code", "addr", "entry", "interp")

    def __init__(self, filename, name, qualname, lineno, code, addr, entry=False):
        self.filename = filename
        self.name = name
        self.qualname = qualname
        self.lineno = lineno
        self.code = code
        self.addr = addr
        self.entry = entry
        self.interp = None

    def as_dict(self):
        d = {"function": self.name, "file": self.filename, "line": self.lineno}
        if self.interp is not None:
            d["interpreter"] = self.interp
        return d


# _PyInterpreterFrame.owner values.
_OWNED_BY_GENERATOR = 1

# Little-endian fields of bytes already read.
_U64 = struct.Struct("<Q").unpack_from
_I8 = struct.Struct("<b").unpack_from

# How many frames of one thread are kept by default: the innermost half
# and the outermost half, with the count of those between (see frames).
MAX_FRAMES = 4096
# A code object's line table larger than this is not read (the line is
# then unknown): real ones are a few KiB.
# A code object with more locals than this is not read.
_MAX_LOCALS = 1 << 16
# co_localspluskinds bits (3.11+).
_CO_FAST_HIDDEN = 0x10
_CO_FAST_LOCAL = 0x20


class StackCut(WalkError):
    """A thread's frame chain leads to memory that holds no frame."""


class FrameList(list):
    """A thread's frames, innermost first, as Walker.frames keeps them:
    omitted frames were counted but not kept, between frames[gap - 1]
    and frames[gap]; partial is True when the chain was not read to its
    end (the walk's budget ran out, or error says why)."""

    omitted = 0
    gap = 0
    partial = False
    error = None


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


def code_field(L):
    """The _PyInterpreterFrame field that points at the frame's code
    object (3.11+; f_executable from 3.13 on, tagged: executable_mask)."""
    return "_PyInterpreterFrame.f_code" if L.has("_PyInterpreterFrame.f_code") else "_PyInterpreterFrame.f_executable"


def stackref_mask(minor):
    """What keeps the object pointer of a _PyStackRef in localsplus: from
    3.14 on its low two bits are tags (Py_TAG_BITS; bit 0 marks a
    reference that owns no count, as None, True and other immortal or
    borrowed objects have, and the empty slot is that bit alone)."""
    if minor >= (3, 14):
        return ~3 & 0xFFFFFFFFFFFFFFFF
    return 0xFFFFFFFFFFFFFFFF


def stackref_int(minor, bits):
    """The int a 3.14+ _PyStackRef holds in itself (both tag bits set,
    Py_INT_TAG: the value shifted left by two), else None."""
    if minor < (3, 14) or bits & 3 != 3:
        return None
    if bits >= 1 << 63:
        bits -= 1 << 64
    return bits >> 2


class FrameReader(object):
    """Reads a thread's frames, code objects and locals through mem
    (pyattach_walk_memory.Memory; its budget is the walk's) with the
    Layout L, readers (pyattach_read_repr.Readers) for names and values,
    and the pointer size ptr."""

    def __init__(self, mem, layout, readers, ptr=8):
        self.mem = mem
        self.L = layout
        self.r = readers
        self.ptr = ptr

    # Frames.
    def frames(self, tstate, max_frames, cuts):
        """The Python frames of a thread, innermost first, as a FrameList.
        The whole chain is followed (until it ends, loops or the budget
        runs out) and counted; of more than max_frames (the walker's
        max_frames: 0 keeps all) the innermost half and the
        outermost half are kept, the count of those between is omitted.
        A chain that leads to memory holding no frame (StackCut) ends
        there: partial, with error saying why, added to cuts (the walk's
        list of what could not be read)."""
        limit = max_frames
        if self.L.minor >= (3, 11):
            refs = self._frame_refs_311(tstate)
        else:
            refs = self._frame_refs_37(tstate)
        head, tail, total, partial, error = [], [], 0, False, None
        # The outermost keep frames past head, in a ring: once it is full,
        # tail[wrapped] is the oldest (a list, not collections.deque:
        # importing collections costs the direct reader ~2 ms).
        keep = limit // 2 if limit else 0
        wrapped = 0
        try:
            for ref in refs:
                total += 1
                if not limit or len(head) < limit - keep:
                    head.append(ref)
                elif len(tail) < keep:
                    tail.append(ref)
                elif keep:
                    tail[wrapped] = ref
                    wrapped = (wrapped + 1) % keep
        except BudgetExhausted:
            partial = True
        except StackCut as e:
            partial, error = True, str(e)
            cuts.append("thread state at 0x%x: %s" % (tstate, e))
        out = FrameList()
        out.partial = partial
        out.error = error
        out.gap = len(head)
        out.omitted = total - len(head) - len(tail)
        budget = self.mem.budget
        late = False
        for k, ref in enumerate(head + tail[wrapped:] + tail[:wrapped]):
            # The clock is read once every 64 frames (a deep stack is
            # thousands).
            if not k & 63:
                late = budget.time_up()
            out.append(self._frame_of(ref, late))
        return out

    def _frame_of(self, ref, late=None):
        """The Frame of what _frame_refs_* yielded: its line is worked out
        here, for the frames kept only (lineno None once the walk's time
        is up: late, or asked of the budget when None)."""
        f, code, pos, entry = ref
        c = self.code(code)
        line = None
        if late is None:
            late = self.mem.budget.time_up()
        if not late:
            line = self.r.code.line(c, pos)
        return Frame(c["filename"], c["name"], c["qualname"], line, code, f, entry)

    def _frame_refs_37(self, tstate):
        """(frame, code object, f_lasti, entry) of each frame, innermost
        first: each frame has its own call of the eval loop (entry True)."""
        L = self.L
        f = self.mem.ptrv(tstate + L.off("PyThreadState.frame"))
        seen = set()
        while f and f not in seen:
            seen.add(f)
            code = self.mem.ptrv(f + L.off("PyFrameObject.f_code"))
            lasti = self.mem.i32(f + L.off("PyFrameObject.f_lasti"))
            self.code(code)
            yield f, code, lasti, True
            f = self.mem.ptrv(f + L.off("PyFrameObject.f_back"))

    def _first_frame_311(self, tstate):
        L = self.L
        if L.has("PyThreadState.current_frame"):
            return self.mem.ptrv(tstate + L.off("PyThreadState.current_frame"))
        cframe = self.mem.ptrv(tstate + L.off("PyThreadState.cframe"))
        if not cframe:
            return 0
        return self.mem.ptrv(cframe + L.off("_PyCFrame.current_frame"))

    def stack_anchor(self, tstate):
        """Where, on its OS thread's C stack, the eval loop running a
        thread state's innermost Python frame keeps its own state: the
        lower the address, the deeper the call. 3.12+: that loop's entry
        frame (entry_frame); 3.10, 3.11: tstate->cframe, which points at
        the running loop's _PyCFrame, a local of _PyEval_EvalFrameDefault,
        while the thread state has Python frames (else at root_cframe,
        inside the thread state). None for a thread state without Python
        frames, and before 3.10 (no pointer into the C stack)."""
        L = self.L
        if frame_owner_skipped(L.minor) is not None:
            return self.entry_frame(tstate)
        if not L.has("PyThreadState.cframe"):
            return None
        if L.minor >= (3, 11):
            top = self._first_frame_311(tstate)
        else:
            top = self.mem.ptrv(tstate + L.off("PyThreadState.frame"))
        if not top:
            return None
        return self.mem.ptrv(tstate + L.off("PyThreadState.cframe")) or None

    def entry_frame(self, tstate):
        """3.12+: the address of the frame, kept on the C stack, where the
        eval loop entered a thread's innermost Python frame (the first
        frame the interpreter owns after a Python frame in the chain);
        None when there is none."""
        L = self.L
        skipped = frame_owner_skipped(L.minor)
        owner_off = L.off("_PyInterpreterFrame.owner")
        f = self._first_frame_311(tstate)
        seen = set()
        python = False
        while f and f not in seen:
            seen.add(f)
            owner = struct.unpack("<b", self.mem.read(f + owner_off, 1))[0]
            if owner >= skipped:
                if python:
                    return f
            else:
                python = True
            f = self.mem.ptrv(f + L.off("_PyInterpreterFrame.previous"))
        return None

    def _frame_refs_311(self, tstate):
        """(frame, code object, code unit index, entry) of each Python
        frame, innermost first (3.11+). entry is True for the outermost
        frame that one call of the eval loop runs (3.11: is_entry; 3.12+:
        the next frame is the eval loop's own entry frame), and for the
        last frame of the chain."""
        L = self.L
        f = self._first_frame_311(tstate)
        code_at = L.off(code_field(L))
        instr_field = "_PyInterpreterFrame.prev_instr" if L.has("_PyInterpreterFrame.prev_instr") else "_PyInterpreterFrame.instr_ptr"
        skipped = frame_owner_skipped(L.minor)
        owner_off = L.off("_PyInterpreterFrame.owner")
        entry_off = L.off("_PyInterpreterFrame.is_entry") if L.has("_PyInterpreterFrame.is_entry") else None
        prev_off = L.off("_PyInterpreterFrame.previous")
        instr_off = L.off(instr_field)
        # The fields read of each frame (code, previous, the instruction,
        # owner, 3.11's is_entry) in one read of the frame's start.
        span = max(code_at, prev_off, instr_off, owner_off, entry_off or 0) + self.ptr
        mask = executable_mask(L.minor)
        # The bytecode a frame runs starts in its code object but in a
        # free-threaded build's thread copies (bytecode_start).
        own_bytecode = "t" not in L.flags
        read = self.mem.read
        seen = set()
        pending = None
        try:
            while f and f not in seen:
                seen.add(f)
                # Every field is inside the span read (Memory.read gives
                # all of it or raises).
                head = read(f, span)
                owner = _I8(head, owner_off)[0]
                is_entry = entry_off is not None and _I8(head, entry_off)[0] != 0
                code = _U64(head, code_at)[0] & mask
                previous = _U64(head, prev_off)[0]
                if skipped is not None and owner < skipped and not code and not previous:
                    # 3.12+ frames that hold no code are the interpreter's
                    # own: zeros are memory a core left out (glibc 2.42's
                    # guard pages keep gdb from dumping a thread's stack).
                    raise StackCut("frame at 0x%x reads as zeros: the frames it leads to are missing "
                                   "(a core without this thread's stack?)" % f)
                if skipped is not None and owner >= skipped or not code:
                    if pending is not None:
                        yield pending + (skipped is not None,)
                        pending = None
                    f = previous
                    continue
                c = self.code(code)
                instr = _U64(head, instr_off)[0]
                index = (instr - (c["code_start"] if own_bytecode else self.bytecode_start(f, code, c))) // 2
                if owner != _OWNED_BY_GENERATOR and index < c["firsttraceable"]:
                    # An incomplete frame: not yet started, skipped as CPython does.
                    if pending is not None and is_entry:
                        yield pending + (True,)
                        pending = None
                    f = previous
                    continue
                if pending is not None:
                    yield pending + (False,)
                    pending = None
                if is_entry:
                    yield f, code, index, True
                else:
                    pending = (f, code, index)
                f = previous
        except BudgetExhausted:
            if pending is not None:
                yield pending + (False,)
            raise
        except StackCut:
            # The missing frame was the eval loop's entry frame.
            if pending is not None:
                yield pending + (True,)
            raise
        if pending is not None:
            yield pending + (True,)

    def frame_at(self, addr):
        """The Frame at addr, a Frame.addr this walker gave (its line not
        read: None), to read its locals again; raises WalkError when addr
        holds no frame running a code object."""
        L = self.L
        if L.minor >= (3, 11):
            code = self.mem.ptrv(addr + L.off(code_field(L))) & executable_mask(L.minor)
        else:
            code = self.mem.ptrv(addr + L.off("PyFrameObject.f_code"))
        if not code or self.r.types.name_static(code) != ("code", True):
            raise WalkError("no Python frame at 0x%x" % addr)
        c = self.code(code)
        return Frame(c["filename"], c["name"], c["qualname"], None, code, addr)

    # Code objects (pyattach_read_code).
    def code(self, addr):
        """The code object at addr as CodeReader.read gives it (each read
        once a walker)."""
        return self.r.code.read(addr)

    def bytecode_start(self, frame, code, c):
        """Where the bytecode that frame runs starts: the code object's own
        co_code_adaptive, or in a free-threaded 3.14+ build the thread's copy
        (co_tlbc->entries[frame->tlbc_index]) when the frame runs one."""
        L = self.L
        start = c["code_start"]
        if "t" not in L.flags or not (L.has("PyCodeObject.co_tlbc") and L.has("_PyInterpreterFrame.tlbc_index")):
            return start
        try:
            index = self.mem.i32(frame + L.off("_PyInterpreterFrame.tlbc_index"))
            if index <= 0:
                return start
            array = self.mem.ptrv(code + L.off("PyCodeObject.co_tlbc"))
            # _PyCodeArray: Py_ssize_t size (a pointer's size), then
            # char *entries[size].
            if not array or index >= self.mem.i64(array):
                return start
            entry = self.mem.ptrv(array + self.ptr + self.ptr * index)
            return entry or start
        except WalkError:
            return start

    def locals(self, fr):
        """A frame's local variables that hold a value, as (name, repr) in
        the code object's order. Like CPython's py-locals, only the code's
        own locals (arguments included): cell-only and free variables are
        not listed, and a local that is also a cell shows as its cell."""
        return [(name, value_repr(self.r, v)) for name, v in self.local_values(fr)]

    def lookup_name(self, fr, name):
        """(scope, object address) of the variable name as the frame sees
        it, as CPython's py-print looks it up: its locals ("local"), then
        its globals ("global"), then its builtins ("builtin"); (None, 0)
        when none has it."""
        for n, v in self.local_values(fr):
            if n == name:
                return "local", v
        L = self.L
        prefix = "_PyInterpreterFrame" if L.minor >= (3, 11) else "PyFrameObject"
        for field, scope in (("f_globals", "global"), ("f_builtins", "builtin")):
            d = self.mem.ptrv(fr.addr + L.off(prefix + "." + field))
            if d:
                v = self.r.dicts.str_lookup(self.r.dicts.items(d), name, self.r.strs)
                if v:
                    return scope, v
        return None, 0

    def local_values(self, fr):
        """(name, object address) of each local of locals(), in order."""
        L = self.L
        out = []
        if L.minor >= (3, 11):
            n = self.mem.i32(fr.code + L.off("PyCodeObject.co_nlocalsplus"))
            names = self.mem.ptrv(fr.code + L.off("PyCodeObject.co_localsplusnames"))
            kinds = bytearray(self.r.bytes.value(self.mem.ptrv(fr.code + L.off("PyCodeObject.co_localspluskinds")), MAX_LINETABLE))
            base = fr.addr + L.off("_PyInterpreterFrame.localsplus")
        else:
            n = self.mem.i32(fr.code + L.off("PyCodeObject.co_nlocals"))
            names = self.mem.ptrv(fr.code + L.off("PyCodeObject.co_varnames"))
            kinds = None
            base = fr.addr + L.off("PyFrameObject.f_localsplus")
        if n < 0 or n > _MAX_LOCALS:
            raise WalkError("code object at 0x%x: %d locals" % (fr.code, n))
        n = min(n, self.mem.i64(names + L.off("PyVarObject.ob_size")))
        for i in range(n):
            if kinds is not None and (i >= len(kinds) or not kinds[i] & _CO_FAST_LOCAL or kinds[i] & _CO_FAST_HIDDEN):
                continue
            v = self.mem.ptrv(base + self.ptr * i)
            tagged = stackref_int(L.minor, v)
            if tagged is not None:
                name = self.r.strs.value(self.mem.ptrv(names + L.off("PyTupleObject.ob_item") + self.ptr * i))
                out.append((name, str(tagged)))
                continue
            v &= stackref_mask(L.minor)
            if not v:
                continue
            name = self.r.strs.value(self.mem.ptrv(names + L.off("PyTupleObject.ob_item") + self.ptr * i))
            out.append((name, v))
        return out
