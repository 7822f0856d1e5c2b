"""Interpreters and their threads: the chains of PyInterpreterState and
PyThreadState from _PyRuntime, and the lookups of a thread state by
kernel tid or pthread_t that pyattach_walk_match (which matches a
debugger's threads to thread states) uses."""

import struct

from pyattach_walk_frames import FrameList
from pyattach_walk_memory import BudgetExhausted, WalkError
from pyattach_walk_text import thousands

# A kernel tid as glibc's struct pthread holds it (pid_t), and how many
# bytes of struct pthread are searched for one (match_tids).
_TID = struct.Struct("<I")
PTHREAD_SPAN = 0x800


class Thread(object):
    """One thread state: its address, the OS thread's pthread_t
    (thread_id) and kernel tid (native_id, 3.8+), its interpreter's
    address; outer (set by Runtime.os_threads on the thread state an OS
    thread runs in now) the same OS thread's thread states in the
    interpreters it called from, innermost first."""
    __slots__ = ("tstate", "thread_id", "native_id", "interp", "outer")

    def __init__(self, tstate, thread_id, native_id, interp):
        self.tstate = tstate
        self.thread_id = thread_id
        self.native_id = native_id
        self.interp = interp
        self.outer = []


class Runtime(object):
    """Interpreters and their thread states, read through mem (a
    pyattach_walk_memory.Memory) from runtime (_PyRuntime's address)
    with layout (the Layout); thread_states (ThreadStateReader) names an
    interpreter's id, frame_reader (FrameReader) reads a thread state's
    frames. The thread states are kept for one walk (begin resets them);
    cuts and listing_cut say what could not be read (Walker.stopped).
    It is also what pyattach_walk_tasks reads threads and frames with:
    interpreters(), threads(), frames(), cuts."""

    def __init__(self, mem, layout, runtime, thread_states, frame_reader, max_frames):
        self.mem = mem
        self.L = layout
        self.runtime = runtime
        self.thread_states = thread_states
        self.frame_reader = frame_reader
        self.max_frames = max_frames
        self.cuts = []
        self.begin()

    def begin(self):
        """Starts a walk: thread states read again, nothing cut."""
        self._threads = None
        self._os_threads = None
        self.listing_cut = None
        self.cuts = []

    def frames(self, tstate, max_frames=None):
        """The Python frames of a thread, innermost first, as a FrameList
        (FrameReader.frames; max_frames: max_frames when None)."""
        return self.frame_reader.frames(tstate, self.max_frames if max_frames is None else max_frames, self.cuts)

    def interpreters(self):
        L = self.L
        interp = self.mem.ptrv(self.runtime + L.off("_PyRuntimeState.interpreters.head"))
        seen = set()
        while interp and interp not in seen:
            seen.add(interp)
            yield interp
            interp = self.mem.ptrv(interp + L.off("PyInterpreterState.next"))

    def threads(self):
        """Every interpreter's thread states, read once a walk. The
        chains are followed until they end or loop, or until half of the
        walk's budget is spent (listing_cut then says so): the rest is
        left for the stacks of the threads found. An interpreter or
        thread state that cannot be read ends its chain there, and the
        walk's cuts say so (Walker.stopped)."""
        if self._threads is not None:
            return self._threads
        L = self.L
        head = "PyInterpreterState.threads.head" if L.has("PyInterpreterState.threads.head") else "PyInterpreterState.tstate_head"
        out = []
        try:
            for interp in self.interpreters():
                seen = set()
                try:
                    t = self.mem.ptrv(interp + L.off(head))
                    while t and t not in seen:
                        if self.mem.budget.half_spent():
                            self.listing_cut = "thread states not all listed: %s listed with half the walk's budget (%s reads in %.1fs)" % (
                                thousands(len(out)), thousands(self.mem.budget.reads), self.mem.budget.elapsed())
                            self._threads = out
                            return out
                        seen.add(t)
                        tid = self.mem.u64(t + L.off("PyThreadState.thread_id"))
                        native = None
                        if L.has("PyThreadState.native_thread_id"):
                            native = self.mem.u64(t + L.off("PyThreadState.native_thread_id"))
                        out.append(Thread(t, tid, native, interp))
                        t = self.mem.ptrv(t + L.off("PyThreadState.next"))
                except BudgetExhausted:
                    raise
                except WalkError as e:
                    self.cuts.append("thread states of the interpreter at 0x%x not all listed: %s" % (interp, e))
        except BudgetExhausted:
            pass
        except WalkError as e:
            self.cuts.append("interpreters not all listed: %s" % e)
        self._threads = out
        return out

    def os_threads(self):
        """One thread state per OS thread: the one it runs in now, with
        its thread states in the interpreters it called from in outer,
        innermost first. An OS thread that runs code in a subinterpreter
        (concurrent.interpreters, _interpreters.exec) has a thread state
        there and keeps its own, suspended in the call. Thread states
        are the same OS thread's when their pthread_t and tid are (a
        thread state not bound to a thread, pthread_t 0, is its own)."""
        if self._os_threads is not None:
            return self._os_threads
        groups, order = {}, []
        for th in self.threads():
            key = (th.thread_id, th.native_id) if th.thread_id else ("unbound", th.tstate)
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(th)
        out = []
        for key in order:
            g = groups[key]
            if len(g) > 1:
                g = self.nesting(g)
            for th in g:
                th.outer = []
            g[0].outer = g[1:]
            out.append(g[0])
        self._os_threads = out
        return out

    def nesting(self, group):
        """One OS thread's thread states (in the interpreters' order, the
        newest interpreter first) in the order the thread entered them,
        the one it runs in now first. A call into another interpreter
        runs a new eval loop deeper on the same C stack, which grows
        down: the thread state whose innermost Python frame runs in the
        eval loop lowest on the stack (FrameReader.stack_anchor: 3.10+)
        runs now, the others are suspended in calls above it; thread
        states without Python frames go last. Before 3.10, and where the
        thread states cannot be read, the interpreters' order stays."""
        keyed = []
        for i, th in enumerate(group):
            try:
                a = self.frame_reader.stack_anchor(th.tstate)
            except WalkError:
                a = None
            keyed.append(((a is None, a or 0, i), th))
        keyed.sort(key=lambda kv: kv[0])
        return [th for _, th in keyed]

    def thread_frames(self, th, max_frames=None):
        """The Python frames OS thread th runs (a Thread from
        os_threads), innermost first, in one FrameList: those of its
        thread state, then those of each of th.outer; each Frame's interp
        is its interpreter's id. A WalkError reading th's own frames is
        raised. One reading an outer thread state's frames ends the list
        there: it is partial, its error says why, and so does the walk
        (cuts). The omitted frames of several thread
        states are counted together, where the first were left out."""
        groups = [th] + list(th.outer)
        out = FrameList()
        for i, g in enumerate(groups):
            iid = self.thread_states.interpreter_id(g.interp)
            try:
                fl = self.frames(g.tstate, max_frames)
            except BudgetExhausted:
                if i == 0:
                    raise
                out.partial = True
                break
            except WalkError as e:
                if i == 0:
                    raise
                out.partial = True
                out.error = "frames in interpreter %s not read: %s" % ("?" if iid is None else iid, e)
                self.cuts.append("thread state at 0x%x: %s" % (g.tstate, out.error))
                break
            if fl.omitted:
                if not out.omitted:
                    out.gap = len(out) + fl.gap
                out.omitted += fl.omitted
            for fr in fl:
                fr.interp = iid
                out.append(fr)
            if fl.partial:
                out.partial = True
                out.error = fl.error
                break
        return out

    def thread_for(self, native_id=None, pthread_id=None):
        """The thread state an OS thread runs in (os_threads), by kernel
        tid or pthread_t."""
        for th in self.os_threads():
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
        threads' tids are found is taken. Each tid maps to the thread
        state its thread runs in (os_threads)."""
        threads = self.os_threads()
        want = set(t for t in tids if t)
        if not want:
            return {}
        hits = {}
        for th in threads:
            if th.native_id:
                continue
            try:
                block = self.mem.read(th.thread_id, PTHREAD_SPAN)
            except WalkError:
                continue
            # Offsets into the bytes just read (each where a whole tid
            # fits), not into the target's memory.
            for off in range(0, len(block) - _TID.size + 1, _TID.size):
                v = _TID.unpack_from(block, off)[0]
                if v in want:
                    hits.setdefault(off, []).append((v, th))
        out = dict((th.native_id, th) for th in threads if th.native_id)
        if hits:
            best = sorted(hits, key=lambda o: (-len(hits[o]), o))[0]
            for v, th in hits[best]:
                out.setdefault(v, th)
        return out
