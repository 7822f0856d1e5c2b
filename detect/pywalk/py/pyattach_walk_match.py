"""Which thread state each OS thread runs in: the one thread matcher of
the gdb, lldb and direct (/proc) adapters.

An adapter lists the process's OS threads as OSThread values (plain
data: ids, and where it can read them a thread pointer and a stack
pointer) and calls match_threads; nothing here asks a debugger, so it
runs on fake memory in a unit test. The order, each step only for the
threads the ones before left unmatched:

1. the thread id CPython recorded (native_thread_id, 3.8+; glibc's
   struct pthread for 3.7-3.10: Walker.match_tids);
2. the pthread_t (the debugger's thread handle, else the fs_base
   register): a core of a process in another PID namespace records the
   host's thread ids, CPython the namespace's;
3. the stack pointer (match_stacks): such a core when no register gives
   the thread pointer (lldb 14 has no fs_base);
4. a process with one OS thread and one Python thread: those two."""


class OSThread(object):
    """One OS thread as the adapter knows it: tid (the debugger's id, the
    host's kernel tid for a live process), native_tid (the id CPython
    recorded: in the process's own PID namespace), os_name (the name
    the target gave it, or None) and handle (the adapter's own object,
    passed back to its native-frames function). pthread (its pthread_t
    or thread pointer) and sp (its stack pointer) are values, None, or
    functions that return one: called only when the thread id did not
    match."""

    __slots__ = ("tid", "native_tid", "os_name", "handle", "pthread", "sp")

    def __init__(self, tid, native_tid, os_name, handle=None, pthread=None, sp=None):
        self.tid = tid
        self.native_tid = native_tid
        self.os_name = os_name
        self.handle = handle
        self.pthread = pthread
        self.sp = sp


def _value(v):
    return v() if callable(v) else v


def match_threads(w, threads):
    """Maps the native_tid of each of threads (OSThread values) that
    runs Python to its thread state (a Thread of w.os_threads), in the
    order the module's doc says; no thread state is given to two OS
    threads by steps 2 and 3."""
    states = w.match_tids([ot.native_tid for ot in threads])
    out = dict((ot.native_tid, states[ot.native_tid]) for ot in threads if ot.native_tid in states)
    taken = set(t.tstate for t in out.values())
    left = [ot for ot in threads if ot.native_tid not in out]
    for ot in left:
        p = _value(ot.pthread)
        if not p:
            continue
        t = w.thread_for(pthread_id=p)
        if t is not None and t.tstate not in taken:
            out[ot.native_tid] = t
            taken.add(t.tstate)
    left = [ot for ot in left if ot.native_tid not in out]
    sps = {}
    for ot in left:
        if ot.sp is not None:
            sp = _value(ot.sp)
            if sp:
                sps[ot.native_tid] = sp
    if sps:
        out.update(match_stacks(w, sps, taken))
    if not out:
        pys = w.os_threads()
        if len(pys) == 1 and len(threads) == 1:
            out[threads[0].native_tid] = pys[0]
    return out


def match_thread(w, threads, native_tid):
    """The thread state of the OS thread native_tid, or None: by its id
    when that matches, else among threads (all the process's OSThread
    values, or a function that lists them: the match of one may depend
    on the others)."""
    if native_tid:
        t = w.thread_for(native_id=native_tid)
        if t is not None:
            return t
    return match_threads(w, _value(threads)).get(native_tid)


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


def match_stacks(walker, sps, taken=()):
    """Maps debugger threads to thread states by stack pointer: sps maps
    a thread's key to its stack pointer. Each pthread-created thread
    matches the thread state whose pthread_t is the nearest above its
    stack pointer; a single thread left over on each side (the main
    thread) matches too. Thread states in taken (their addresses) are
    matched already."""
    threads = walker.os_threads()
    out = {}
    taken = set(taken)
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
