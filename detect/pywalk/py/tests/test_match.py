"""The thread matcher (pyattach_walk_match): thread id, then pthread_t,
then stack pointer, then a lone thread; on a fake walker."""

import pyattach_walk as walk
from pyattach_walk_runtime import Thread


class FakeWalker(object):
    """os_threads, thread_for and match_tids as Walker answers them."""

    def __init__(self, threads, tid_hits=None):
        self._threads = threads
        self.tid_hits = tid_hits or {}

    def os_threads(self):
        return self._threads

    def thread_for(self, native_id=None, pthread_id=None):
        for th in self._threads:
            if native_id is not None and th.native_id and th.native_id == native_id:
                return th
            if pthread_id is not None and th.thread_id == pthread_id:
                return th
        return None

    def match_tids(self, tids):
        out = dict((th.native_id, th) for th in self._threads if th.native_id)
        out.update((t, th) for t, th in self.tid_hits.items() if t in tids)
        return out


def state(addr, pthread, native):
    return Thread(addr, pthread, native, 0x1000)


def test_by_thread_id():
    a, b = state(0x10, 0x7000, 101), state(0x20, 0x8000, 102)
    w = FakeWalker([a, b])
    oss = [walk.OSThread(101, 101, "main"), walk.OSThread(102, 102, "w"), walk.OSThread(103, 103, "c")]
    assert walk.match_threads(w, oss) == {101: a, 102: b}


def test_legacy_tids_from_match_tids():
    a = state(0x10, 0x7000, 0)
    w = FakeWalker([a], tid_hits={55: a})
    assert walk.match_threads(w, [walk.OSThread(55, 55, None)]) == {55: a}


def test_pthread_when_ids_differ():
    # A core of a process in another PID namespace: host ids, CPython's
    # namespace ids; the pthread_t is read only for the unmatched, once.
    a, b = state(0x10, 0x7000, 1), state(0x20, 0x8000, 2)
    w = FakeWalker([a, b])
    asked = []

    def pthread(v):
        def f():
            asked.append(v)
            return v
        return f

    oss = [walk.OSThread(901, 901, None, pthread=pthread(0x8000)),
           walk.OSThread(902, 902, None, pthread=pthread(0x7000)),
           walk.OSThread(903, 903, None, pthread=pthread(0x7000))]
    got = walk.match_threads(w, oss)
    assert got == {901: b, 902: a}, got
    assert asked == [0x8000, 0x7000, 0x7000]


def test_pthread_not_asked_when_id_matches():
    a = state(0x10, 0x7000, 1)

    def boom():
        raise AssertionError("pthread read for a matched thread")

    w = FakeWalker([a])
    assert walk.match_threads(w, [walk.OSThread(1, 1, None, pthread=boom)]) == {1: a}
    assert walk.match_thread(w, lambda: [walk.OSThread(1, 1, None, pthread=boom)], 1) is a


def test_zero_pthread_is_no_match():
    unbound = state(0x30, 0, 0)
    other = state(0x40, 0x9000, 0)
    w = FakeWalker([unbound, other])
    oss = [walk.OSThread(5, 5, None, pthread=0), walk.OSThread(6, 6, None, pthread=0)]
    assert walk.match_threads(w, oss) == {}


def test_stack_pointer_last():
    # No ids, no thread pointer (lldb 14 on such a core): a thread's stack
    # lies below its pthread_t; the one thread left on each side is the
    # main thread.
    main = state(0x10, 0x7f0000001000, 1)
    worker = state(0x20, 0x7f0000900000, 2)
    w = FakeWalker([main, worker])
    oss = [walk.OSThread(900, 900, None, sp=0x7ffff000),
           walk.OSThread(901, 901, None, sp=lambda: 0x7f00008ff000)]
    assert walk.match_threads(w, oss) == {901: worker, 900: main}


def test_stack_pointer_skips_taken():
    a = state(0x10, 0x7f0000900000, 1)
    b = state(0x20, 0x7f0000100000, 2)
    w = FakeWalker([a, b])
    # 900 matched a by its pthread_t; 901's stack is below a's too, but a is taken.
    oss = [walk.OSThread(900, 900, None, pthread=0x7f0000900000),
           walk.OSThread(901, 901, None, sp=0x7f00008ff000)]
    assert walk.match_threads(w, oss) == {900: a, 901: b}


def test_lone_thread():
    a = state(0x10, 0x7000, 0)
    w = FakeWalker([a])
    assert walk.match_threads(w, [walk.OSThread(3, 3, None)]) == {3: a}
    # Two OS threads: no guess.
    assert walk.match_threads(w, [walk.OSThread(3, 3, None), walk.OSThread(4, 4, None)]) == {}


def test_match_thread_one():
    a, b = state(0x10, 0x7000, 0), state(0x20, 0x8000, 0)
    w = FakeWalker([a, b])
    oss = [walk.OSThread(3, 3, None, pthread=0x8000), walk.OSThread(4, 4, None, pthread=0x7000)]
    assert walk.match_thread(w, oss, 4) is a
    assert walk.match_thread(w, oss, 5) is None
