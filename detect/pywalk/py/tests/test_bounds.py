"""What bounds a walk, over a fake 3.9 process: which frames of a deep
stack are kept and how the others are counted, loops in frame and
thread chains, and the one budget of reads and time of a whole walk."""

import pytest

import pyattach_walk as w
from fakes import FIELDS_39, FakeMemory

NAMES = ["f%d" % i for i in range(9)] + ["<module>"]


def walker(m, runtime=0, **budget):
    return w.Walker(m.read, runtime, w.Layout("3.9.18", "", FIELDS_39), budget=w.Budget(**budget))


@pytest.fixture
def deep():
    """A stack 10 deep: memory, thread state, frames."""
    m = FakeMemory()
    t, frames = m.tstate(NAMES)
    return m, t, frames


def test_deep_stack_keeps_innermost_and_outermost(deep):
    # 4 kept: the 2 innermost, the 2 outermost, 6 counted.
    m, t, _ = deep
    fl = walker(m).frames(t, 4)
    assert [f.name for f in fl] == ["f0", "f1", "f8", "<module>"], [f.name for f in fl]
    assert (fl.omitted, fl.gap, fl.partial) == (6, 2, False), (fl.omitted, fl.gap)
    assert [f.lineno for f in fl] == [11, 21, 91, 101], [f.lineno for f in fl]
    text = w.format_frames(fl, with_source=False)
    assert text.splitlines()[3] == "  ... 6 frames not shown ...", text
    assert text.splitlines()[-1] == '  File "/app.py", line 101, in <module>', text


def test_odd_limit_keeps_one_more_innermost(deep):
    m, t, _ = deep
    fl = walker(m).frames(t, 5)
    assert [f.name for f in fl] == ["f0", "f1", "f2", "f8", "<module>"] and fl.omitted == 5


@pytest.mark.parametrize("limit", range(1, 10))
def test_every_limit_keeps_innermost_and_outermost(deep, limit):
    # The outermost limit // 2 are kept in a ring as the chain is read:
    # in order, whichever frame the ring wrapped at.
    m, t, _ = deep
    fl = walker(m).frames(t, limit)
    inner, outer = limit - limit // 2, limit // 2
    want = NAMES[:inner] + NAMES[len(NAMES) - outer:]
    assert [f.name for f in fl] == want, (limit, [f.name for f in fl])
    assert (fl.omitted, fl.gap) == (len(NAMES) - limit, inner), (limit, fl.omitted, fl.gap)


@pytest.mark.parametrize("limit", [10, 11, 0])
def test_enough_room_or_no_limit_keeps_all(deep, limit):
    m, t, _ = deep
    fl = walker(m).frames(t, limit)
    assert len(fl) == 10 and fl.omitted == 0, (limit, len(fl), fl.omitted)
    assert "not shown" not in w.format_frames(fl, with_source=False)


def test_omitted_line():
    assert w.omitted_line(1) == "  ... 1 frame not shown ..."
    assert w.omitted_line(5906) == "  ... 5,906 frames not shown ..."


def test_walker_limit_applies_without_one_given(deep):
    m, t, _ = deep
    ww = walker(m)
    ww.max_frames = 2
    assert [f.name for f in ww.frames(t)] == ["f0", "<module>"]


def test_frame_chain_loop_ends_where_it_loops(deep):
    m, t, frames = deep
    m.put(frames[-1], 0, "<Q", frames[3])
    fl = walker(m).frames(t, 0)
    assert [f.name for f in fl] == NAMES and not fl.partial, (len(fl), fl.partial)


@pytest.fixture
def long_chain():
    """A chain of 3,000 frames: memory and thread state."""
    m = FakeMemory()
    t, _ = m.tstate(["g%d" % i for i in range(3000)])
    return m, t


def test_reads_budget_stops_walk_keeps_partial(long_chain):
    # The walk stops, says why, and what was read is kept, marked
    # partial; no read is made after the budget is spent.
    m, t = long_chain
    ww = walker(m, max_reads=2000)
    before = m.reads
    fl = ww.frames(t, 10)
    assert fl.partial and len(fl) == 10 and fl.omitted > 0, (fl.partial, len(fl), fl.omitted)
    assert None not in [f.lineno for f in fl], "lines of the frames read are known"
    assert m.reads - before == 2000, m.reads - before
    assert ww.stopped() == "budget of 2,000 memory reads used up", ww.stopped()
    assert w.format_frames(fl, with_source=False).splitlines()[-1] == w.NOT_READ_LINE
    fl = ww.frames(t)
    assert len(fl) == 0 and fl.partial
    assert m.reads - before == 2000, "a spent budget read on"
    # begin starts a new walk with a fresh budget of the same size.
    ww.begin()
    assert ww.stopped() is None and ww.budget.max_reads == 2000


def test_time_budget_stops_at_next_read(long_chain):
    m, t = long_chain
    ww = walker(m, timeout=1)
    ww.budget.start -= 2
    fl = ww.frames(t, 10)
    assert len(fl) == 0 and fl.partial and ww.stopped() == "time budget of 1s used up", ww.stopped()


def test_thread_listing_stops_at_half_budget():
    # 256 interpreters of 4,096 thread states each: listing them stops at
    # half the budget, which is left for the stacks.
    m = FakeMemory()
    runtime = m.alloc()
    prev = None
    for i in range(256):
        interp = m.alloc()
        if prev is None:
            m.put(runtime, 0, "<Q", interp)
        else:
            m.put(prev, 0, "<Q", interp)
        prev = interp
        last = None
        for j in range(4096 if i < 2 else 1):
            ts = m.alloc()
            m.put(ts, 8, "<Q", 1000 + j)
            if last is None:
                m.put(interp, 8, "<Q", ts)
            else:
                m.put(last, 0, "<Q", ts)
            last = ts
    ww = walker(m, runtime, max_reads=3000)
    ths = ww.threads()
    assert 700 < len(ths) < 800, len(ths)  # 2 reads a thread state
    assert ww.stopped().startswith("thread states not all listed: "), ww.stopped()
    assert ww.budget.exhausted is None
    assert ww.threads() is ths


def test_interpreter_and_thread_state_loops_end():
    m = FakeMemory()
    runtime = m.alloc()
    i1, i2 = m.alloc(), m.alloc()
    m.put(runtime, 0, "<Q", i1)
    m.put(i1, 0, "<Q", i2)
    m.put(i2, 0, "<Q", i1)
    ts = [m.alloc() for _ in range(3)]
    for a, b in zip(ts, ts[1:] + ts[:1]):
        m.put(a, 0, "<Q", b)
    m.put(i1, 8, "<Q", ts[0])
    m.put(i2, 8, "<Q", ts[1])
    ths = walker(m, runtime).threads()
    assert [th.tstate for th in ths] == ts + ts[1:] + ts[:1], ths
