"""Interpreters and their threads: the chains of PyInterpreterState and
PyThreadState from _PyRuntime, and how a debugger's thread (a kernel
tid, a pthread_t, a stack pointer) is matched to its thread state."""

import struct

from pyattach_walk_memory import BudgetExhausted, WalkError
from pyattach_walk_text import thousands


class Thread(object):
    __slots__ = ("tstate", "thread_id", "native_id", "interp")

    def __init__(self, tstate, thread_id, native_id, interp):
        self.tstate = tstate
        self.thread_id = thread_id
        self.native_id = native_id
        self.interp = interp


class Runtime(object):
    """The Walker's reads of interpreters and threads: through its
    memory (pyattach_walk_memory.Memory), from self.runtime (_PyRuntime's
    address) with self.L (the Layout); the thread states are kept in
    self._threads for one walk (Walker.begin resets them)."""

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
