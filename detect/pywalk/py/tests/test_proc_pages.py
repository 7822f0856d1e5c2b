"""The direct reader's memory (pyattach_proc): reads served from whole
pages, the pages copied while the process is stopped, and --no-block's
check that nothing a thread's walk read changed meanwhile. A file
stands for the process's memory (/proc/PID/mem is read the same way,
with pread)."""

import os

import pytest

import pyattach_proc as proc
import pyattach_walk as w
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

    def never(read):
        calls.append(read())
        return None, 3

    entries, _ = w.dump_threads(ww, 0, threads, {7: ths[0], 8: ths[1]}, False, None, kernel={}, settle=never)
    assert [e.get("unsettled") for e in entries] == [3, 3]
    assert [e["frames"] for e in entries] == [[], []]
    assert len(calls) == 2

    def at_once(read):
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
