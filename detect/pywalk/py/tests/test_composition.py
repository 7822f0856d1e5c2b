"""The walk's parts are built from what they read with, not from the
Walker: Runtime (interpreters, thread states, a thread's frames) from
the memory, the Layout, _PyRuntime's address and the frame and thread
state readers; Tasks from the memory, the Layout, the Readers, the
FrameReader and anything that gives interpreters(), threads(),
frames() and cuts. Walker holds them and answers as before."""

import pyattach_walk as w
from fakes import FIELDS_39
from test_subinterp import subinterp_process
from test_tasks import FIELDS, tasks_of


def runtime_of(read, runtime, layout, max_frames=w.MAX_FRAMES):
    mem = w.Memory(read)
    mem.budget = w.Budget()
    readers = w.Readers(mem, layout, 8)
    states = w.ThreadStateReader(mem, layout, runtime, readers)
    frames = w.FrameReader(mem, layout, readers, 8)
    return mem, readers, frames, w.Runtime(mem, layout, runtime, states, frames, max_frames)


def test_walker_is_composed():
    assert w.Walker.__bases__ == (object,)
    assert not issubclass(w.Walker, (w.Runtime, w.Tasks))


def test_runtime_alone():
    p = subinterp_process()
    _, _, _, rt = runtime_of(p.m.read, p.runtime, w.Layout("3.9.18", "", FIELDS_39))
    ths = rt.os_threads()
    assert [th.tstate for th in ths] == [p.t_sub, p.t_other]
    assert rt.thread_for(pthread_id=7) is ths[0]
    fl = rt.thread_frames(ths[0])
    assert [(f.name, f.interp) for f in fl] == [("sub_inner", 1), ("sub_outer", 1), ("exec", 0), ("run_in_sub", 0)]
    assert rt.cuts == [] and rt.listing_cut is None


class Stacks(object):
    """Only what Tasks reads threads and frames with."""

    def __init__(self, rt):
        self._rt = rt
        self.cuts = []

    def interpreters(self):
        return self._rt.interpreters()

    def threads(self):
        return self._rt.threads()

    def frames(self, tstate, max_frames=None):
        return self._rt.frames(tstate, max_frames)


def test_tasks_alone_match_the_walkers():
    p = tasks_of()
    layout = w.Layout("3.14.99", "", dict(FIELDS))
    mem, readers, frames, rt = runtime_of(p.m.read, p.runtime, layout)
    tl = w.Tasks(mem, layout, readers, frames, Stacks(rt)).tasks(p.debug)
    want = p.walker().tasks(p.debug)
    assert tl.error is None and want.error is None
    assert [t.as_dict() for t in tl] == [t.as_dict() for t in want]
    assert tl.total == want.total == 5 and tl.cycles == want.cycles


def test_walker_face_reaches_its_parts():
    p = subinterp_process()
    ww = w.Walker(p.m.read, p.runtime, w.Layout("3.9.18", "", FIELDS_39))
    ww.max_frames = 1
    assert ww.runtime_reader.max_frames == 1
    assert ww.os_threads() is ww.runtime_reader.os_threads()
    ww.begin(max_frames=5)
    assert ww.runtime_reader._os_threads is None and ww.cuts == [] and ww.listing_cut is None
    assert ww.max_frames == 5
