"""The direct reader's memory (pyattach_proc): reads served from whole
pages, the pages copied while the process is stopped, and --no-block's
check that nothing a thread's walk read changed meanwhile. A file
stands for the process's memory (/proc/PID/mem is read the same way,
with pread)."""

import os
import struct

import pytest

import pyattach_proc as proc
import pyattach_walk as w
from fakes import FIELDS_39
from test_subinterp import subinterp_process, walker

PAGE = proc.PAGE


@pytest.fixture
def mem(tmp_path):
    """A 4-page "memory" (page k filled with byte k+1) and its fd."""
    path = tmp_path / "mem"
    path.write_bytes(b"".join(bytes([k + 1]) * PAGE for k in range(4)))
    fd = os.open(str(path), os.O_RDWR)
    yield fd
    os.close(fd)


def test_reads_within_and_across_pages(mem):
    p = proc.Pages(mem)
    assert p.read(10, 4) == b"\x01" * 4
    assert p.read(PAGE - 2, 4) == b"\x01\x01\x02\x02"
    assert p.read(PAGE + 1, 2 * PAGE) == b"\x02" * (PAGE - 1) + b"\x03" * PAGE + b"\x04"
    assert sorted(p.pages) == [0, 1, 2, 3]


def test_each_page_read_once(mem):
    p = proc.Pages(mem)
    assert p.read(0, 1) == b"\x01"
    os.pwrite(mem, b"\xff", 0)
    # Served from the copy, not read again.
    assert p.read(0, 1) == b"\x01"


def test_unreadable_page(mem):
    p = proc.Pages(mem)
    # Beyond the file: as an unmapped page of a process.
    assert p.read(5 * PAGE, 8) == b""
    with pytest.raises(OSError):
        p.read(4 * PAGE - 4, 8)
    m = w.Memory(p.read)
    with pytest.raises(w.WalkError):
        m.read(5 * PAGE, 8)


def test_read_pages_runs_and_holes(mem):
    got = proc.read_pages(mem, [3, 0, 1, 5, 6])
    assert got[0] == b"\x01" * PAGE and got[1] == b"\x02" * PAGE and got[3] == b"\x04" * PAGE
    assert got[5] == b"" and got[6] == b""


def test_snapshot_served_and_misses_noted(mem):
    snap = proc.read_pages(mem, [0])
    os.pwrite(mem, b"\xff" * 8, 0)
    os.pwrite(mem, b"\xee" * 8, PAGE)
    p = proc.Pages(mem, snap)
    # The copy made "while stopped", not the memory as it is now.
    assert p.read(0, 8) == b"\x01" * 8
    assert not p.missed
    # A page the copy lacks is read from the process and noted.
    assert p.read(PAGE, 8) == b"\xee" * 8
    assert p.missed == {1}


def test_settled_only_when_what_was_read_holds(mem):
    p = proc.Pages(mem)
    p.record()
    p.read(100, 8)
    assert p.settled()

    p.record()
    p.read(100, 8)
    # A change on the same page, outside what was read.
    os.pwrite(mem, b"\x99", 200)
    assert p.settled()

    p.record()
    p.read(100, 8)
    os.pwrite(mem, b"\x99", 104)
    assert not p.settled()

    p.record()
    p.read(PAGE - 4, 8)
    # A change on the second page of a read across two.
    os.pwrite(mem, b"\x77", PAGE + 2)
    assert not p.settled()


def test_record_forgets_pages(mem):
    p = proc.Pages(mem)
    p.read(0, 1)
    os.pwrite(mem, b"\x42", 0)
    p.record()
    assert p.read(0, 1) == b"\x42"


def test_no_block_thread_that_never_settles_is_marked():
    """dump_threads with settle: a thread whose reads never settle has
    "unsettled" and no frames; one that settles has its frames."""
    pr = subinterp_process()
    ww = walker(pr)
    ths = ww.os_threads()
    threads = [w.OSThread(100, 7, "runner"), w.OSThread(101, 8, "main")]
    calls = []

    def never(read, key):
        calls.append(read())
        return None, 3

    entries, _ = w.dump_threads(ww, 0, threads, {7: ths[0], 8: ths[1]}, False, None, kernel={}, settle=never)
    assert [e.get("unsettled") for e in entries] == [3, 3]
    assert [e["frames"] for e in entries] == [[], []]
    assert len(calls) == 2

    def at_once(read, key):
        return read(), None

    entries, _ = w.dump_threads(ww, 0, threads, {7: ths[0], 8: ths[1]}, False, None, kernel={}, settle=at_once)
    assert [e.get("unsettled") for e in entries] == [None, None]
    assert all(e["frames"] for e in entries)


def test_same():
    a = ([], [{"function": "f", "line": 1}], None, {})
    b = (["other FrameList"], [{"function": "f", "line": 1}], None, {})
    c = ([], [{"function": "f", "line": 2}], None, {})
    assert proc._same(a, b)
    assert not proc._same(a, c)
    # Two reads that both stopped at the same broken frame: not settled
    # by their likeness (a moving stack leaves such frames).
    cut = ([], [{"function": "f", "line": 1}], None, {"error": "frame at 0x10 reads as zeros", "partial": True})
    assert not proc._same(cut, cut)
    assert proc._broken(cut) and not proc._broken(a)


def test_pages_bounded(mem, monkeypatch):
    """A walk reads at most MAX_PAGES pages (each copied while the
    process is stopped): past them the budget is used up, and the
    memory's reader says so rather than "cannot read"."""
    monkeypatch.setattr(proc, "MAX_PAGES", 2)
    p = proc.Pages(mem)
    b = w.Budget()
    p.budget = b
    m = w.Memory(p.read, b)
    m.read(8, 8)
    m.read(PAGE, 8)
    with pytest.raises(w.BudgetExhausted):
        m.read(2 * PAGE, 8)
    assert "pages" in b.exhausted
    with pytest.raises(w.BudgetExhausted):
        m.read(8, 8)


def test_read_pages_into_buffer(mem):
    """Pages read into a page_buffer (as while the process is stopped)
    are those read without one, served the same by Pages."""
    want = proc.read_pages(mem, [3, 0, 1, 5, 6])
    buf = proc.page_buffer(5)
    assert buf is not None
    got = proc.read_pages(mem, [3, 0, 1, 5, 6], buf)
    assert sorted(got) == sorted(want)
    for n in want:
        assert bytes(got[n]) == want[n]
    p = proc.Pages(mem, got)
    assert p.read(PAGE - 2, 4) == b"\x01\x01\x02\x02"
    assert not p.missed
    q = proc.Pages(mem)
    q.record()
    q.read(PAGE - 2, 4)
    assert q.holds(got)


def _ptr(m, addr):
    return struct.unpack("<Q", m.read(addr, 8))[0]


class _Recorded(object):
    """Memory read through read(addr, size), each read's (address, size)
    kept in ranges, as Pages.record keeps them."""

    def __init__(self, read):
        self._read = read
        self.ranges = []

    def read(self, addr, size):
        self.ranges.append((addr, size))
        return self._read(addr, size)


def _as_pages(m):
    """FakeMemory m as {page: bytes}: the copy made while stopped."""
    out = {}
    for n in range(m.BASE >> proc.PAGE_SHIFT, ((m.next - 1) >> proc.PAGE_SHIFT) + 1):
        b = bytearray(PAGE)
        for a in range(max(n * PAGE, m.BASE), min((n + 1) * PAGE, m.next), m.BLOCK):
            b[a - n * PAGE:a - n * PAGE + m.BLOCK] = m.read(a, m.BLOCK)
        out[n] = bytes(b)
    return out


THREADS = [w.OSThread(100, 7, "runner"), w.OSThread(101, 8, "main")]


def _dump(pr, read, settle=None, log=None, max_frames=w.MAX_FRAMES):
    """dump_threads of the fake process's two threads read through read,
    as the direct reader's walk does: log (a _Log) told where the reads
    before the first thread end."""
    rec = _Recorded(read)
    ww = w.Walker(rec.read, pr.runtime, w.Layout("3.9.18", "", FIELDS_39), max_frames=max_frames)
    if log is not None:
        log.start(ww, rec)
    ths = ww.os_threads()
    states = {7: ths[0], 8: ths[1]}
    if log is not None:
        log.base = len(rec.ranges)
    entries, _ = w.dump_threads(ww, 0, THREADS, states, False, None, kernel={}, settle=settle)
    if log is not None:
        log.ranges = rec.ranges
    return entries


def _reuse(pr, change, max_frames=w.MAX_FRAMES):
    """The walk of the copy after change(pr) (made between the pre-walk
    and the stop), each thread's stack taken from the pre-walk where the
    log allows: (its entries, how many stacks were taken, the entries a
    plain walk of the changed memory gives)."""
    log = proc._Log()
    _dump(pr, pr.m.read, log.keep, log, max_frames)
    old = _as_pages(pr.m)
    change(pr)
    fresh = _as_pages(pr.m)
    got = _dump(pr, lambda a, n: proc._span(fresh, a, n), log.reuse(old, fresh), max_frames=max_frames)
    return got, log.reused, _dump(pr, pr.m.read, max_frames=max_frames)


def test_copy_walk_takes_unchanged_stacks_from_the_pre_walk():
    """A thread whose stack changed between the pre-walk and the stop is
    walked again in the copy; the other's stack is the pre-walk's, and
    the whole is what a walk of the copy gives."""
    pr = subinterp_process()
    frame = _ptr(pr.m, pr.t_other + FIELDS_39["PyThreadState.frame"])

    def moved(pr):
        pr.m.put(frame, FIELDS_39["PyFrameObject.f_lasti"], "<i", -1)

    got, reused, want = _reuse(pr, moved)
    assert got == want
    assert reused == 1
    lines = [[f["line"] for f in e["frames"]] for e in got]
    assert lines != [[f["line"] for f in e["frames"]] for e in _dump(subinterp_process(), subinterp_process().m.read)]

    # Nothing changed: both stacks are the pre-walk's, a stack with
    # frames left out (deeper than max_frames) too.
    got, reused, want = _reuse(subinterp_process(), lambda pr: None)
    assert got == want and reused == 2
    got, reused, want = _reuse(subinterp_process(), lambda pr: None, max_frames=1)
    assert any(e.get("frames_omitted") for e in got)
    assert got == want and reused == 2


def test_copy_walk_rereads_a_stack_whose_cached_code_changed():
    """A code object the walker read for one thread and kept serves a
    later thread without a read: when it changes, that later thread is
    walked again too, though none of its own reads changed."""
    pr = subinterp_process()
    f_code = FIELDS_39["PyFrameObject.f_code"]
    inner = _ptr(pr.m, pr.t_sub + FIELDS_39["PyThreadState.frame"])
    shared = _ptr(pr.m, inner + f_code)
    other = _ptr(pr.m, pr.t_other + FIELDS_39["PyThreadState.frame"])
    pr.m.put(other, f_code, "<Q", shared)
    name = _ptr(pr.m, shared + FIELDS_39["PyCodeObject.co_name"])

    def renamed(pr):
        pr.m.put(name, FIELDS_39["sizeof(PyASCIIObject)"], "<4s", b"new_")

    got, reused, want = _reuse(pr, renamed)
    assert reused == 0
    assert got == want
    assert [e["frames"][0]["function"] for e in got][1].startswith("new_")


def test_frame_runs():
    """A run of equal frames is written once with the count of its
    copies; frames that differ in anything (locals too) are kept apart,
    and the walk's own dicts are left as they were."""
    a = {"function": "down", "file": "/app.py", "line": 9}
    b = {"function": "down", "file": "/app.py", "line": 9, "locals": [["n", "3"]]}
    frames = [a, dict(a), dict(a), b, dict(a)]
    got = w.frame_runs(frames)
    assert got == [dict(a, repeat=2), b, a]
    assert "repeat" not in frames[0]
    assert w.frame_runs([a]) == [a]
