"""A fake 3.9 process where one OS thread (pthread_t 7) has a thread
state in a subinterpreter (id 1, the newest: first in the runtime's
list) and one in the main interpreter (id 0), suspended in its call into
the subinterpreter; a second thread (8) runs in the main interpreter
only. Its stack is the subinterpreter's frames, then the main
interpreter's, each labelled; when the main interpreter's frames cannot
be read, or an interpreter cannot be, the walk says so (partial, error,
Walker.stopped) instead of leaving them out."""

import collections

import pytest

import pyattach_walk as w
from fakes import FIELDS_39, UNMAPPED, FakeMemory

Process = collections.namedtuple("Process", "m runtime sub t_sub t_main t_other")

INTERP_ID = FIELDS_39["PyInterpreterState.id"]
FRAME = FIELDS_39["PyThreadState.frame"]


def subinterp_process():
    m = FakeMemory()
    runtime = m.alloc()
    sub, main = m.alloc(), m.alloc()
    m.put(runtime, 0, "<Q", sub)
    m.put(sub, 0, "<Q", main)
    m.put(sub, INTERP_ID, "<q", 1)
    m.put(main, INTERP_ID, "<q", 0)
    t_sub, _ = m.tstate(["sub_inner", "sub_outer"], 7)
    m.put(sub, 8, "<Q", t_sub)
    t_main, _ = m.tstate(["exec", "run_in_sub"], 7)
    t_other, _ = m.tstate(["<module>"], 8)
    m.put(main, 8, "<Q", t_other)
    m.put(t_other, 0, "<Q", t_main)
    return Process(m, runtime, sub, t_sub, t_main, t_other)


@pytest.fixture
def proc():
    return subinterp_process()


def walker(p):
    return w.Walker(p.m.read, p.runtime, w.Layout("3.9.18", "", FIELDS_39))


def test_os_threads_and_their_outer_thread_states(proc):
    ww = walker(proc)
    assert len(ww.threads()) == 3
    ths = ww.os_threads()
    assert [th.tstate for th in ths] == [proc.t_sub, proc.t_other], ths
    assert [o.tstate for o in ths[0].outer] == [proc.t_main] and ths[1].outer == []
    assert ww.thread_for(pthread_id=7) is ths[0]


def test_stack_is_subinterpreter_then_main_labelled(proc):
    ww = walker(proc)
    fl = ww.thread_frames(ww.os_threads()[0])
    assert [(f.name, f.interp) for f in fl] == [("sub_inner", 1), ("sub_outer", 1), ("exec", 0), ("run_in_sub", 0)], fl
    assert not fl.partial and fl.error is None and ww.stopped() is None
    assert fl[0].as_dict()["interpreter"] == 1
    text = w.format_frames(fl, with_source=False).splitlines()
    assert text[1] == "  In interpreter 1:" and text[4] == "  In interpreter 0:", text
    assert len(text) == 7, text


def test_one_interpreter_no_labels(proc):
    ww = walker(proc)
    assert "In interpreter" not in w.format_frames(ww.thread_frames(ww.os_threads()[1]), with_source=False)


def test_dump_threads_names_interpreters(proc):
    ww = walker(proc)
    ths = ww.os_threads()
    entries, why = w.dump_threads(ww, 0, [w.OSThread(100, 7, "runner"), w.OSThread(101, 8, "main")],
                                  {7: ths[0], 8: ths[1]}, False, None)
    assert entries[0]["interpreter"] == 1 and entries[1]["interpreter"] == 0, entries
    assert [f["interpreter"] for f in entries[0]["frames"]] == [1, 1, 0, 0], entries[0]
    assert why is None and not entries[0].get("partial"), (why, entries[0])


def test_unreadable_main_frames_end_stack_and_say_why(proc):
    proc.m.put(proc.t_main, FRAME, "<Q", UNMAPPED)
    ww = walker(proc)
    fl = ww.thread_frames(ww.os_threads()[0])
    assert [f.name for f in fl] == ["sub_inner", "sub_outer"] and fl.partial, fl
    assert fl.error.startswith("frames in interpreter 0 not read: cannot read 8 bytes at 0x7fff"), fl.error
    assert "frames in interpreter 0 not read" in ww.stopped(), ww.stopped()
    last = w.format_frames(fl, with_source=False).splitlines()[-1]
    assert last.startswith("  ... stack not read further: frames in interpreter 0 not read: "), last
    ww.begin()
    entries, why = w.dump_threads(ww, 0, [w.OSThread(100, 7, "runner")], {7: ww.os_threads()[0]}, False, None)
    assert entries[0]["partial"] and entries[0]["error"].startswith("frames in interpreter 0 not read"), entries[0]
    assert why and "frames in interpreter 0 not read" in why, why


def test_unreadable_interpreter_cuts_list(proc):
    # The threads listed before it are kept, and the walk says the list
    # is cut.
    proc.m.put(proc.sub, 0, "<Q", UNMAPPED)
    ww = walker(proc)
    assert [th.tstate for th in ww.threads()] == [proc.t_sub]
    assert "interpreters not all listed: cannot read" in ww.stopped(), ww.stopped()
    entries, why = w.dump_threads(ww, 0, [w.OSThread(100, 7, "runner")], {7: ww.os_threads()[0]}, False, None)
    assert why and "interpreters not all listed" in why, why


def test_thread_named_by_the_interpreter_that_started_it(proc):
    # The subinterpreter imported threading on thread 7: its _active
    # lists that thread as its "MainThread"; the main interpreter, which
    # started it, as "runner".
    ww = walker(proc)
    th = ww.os_threads()[0]
    infos = {}
    for tstate, iid, name in ((proc.t_sub, 1, "MainThread"), (proc.t_main, 0, "runner")):
        infos[tstate] = w.ThreadInfo()
        infos[tstate].interpreter, infos[tstate].name = iid, name
    f = w.thread_facts(ww, 100, "python3", th, infos, None)
    assert f["name"] == "runner" and f["interpreter"] == 1, f
    infos[proc.t_main].name = None
    assert w.thread_facts(ww, 100, "python3", th, infos, None)["name"] == "MainThread"


# 3.10's thread states point at the running eval loop's CFrame, on the C
# stack (FrameReader.stack_anchor).
FIELDS_310 = dict(FIELDS_39, **{"PyThreadState.cframe": 24, "PyThreadState.root_cframe": 32})
CFRAME = FIELDS_310["PyThreadState.cframe"]


def test_cframe_orders_thread_states_310(proc):
    # Thread 7 was started in the subinterpreter and called into the
    # main interpreter: the main interpreter's eval loop runs deeper (a
    # lower CFrame) although the subinterpreter is the newest.
    proc.m.put(proc.t_sub, CFRAME, "<Q", 0x7ffc0000f000)
    proc.m.put(proc.t_main, CFRAME, "<Q", 0x7ffc0000a000)
    ww = w.Walker(proc.m.read, proc.runtime, w.Layout("3.10.13", "", FIELDS_310))
    ths = ww.os_threads()
    assert [th.tstate for th in ths] == [proc.t_main, proc.t_other], ths
    assert [o.tstate for o in ths[0].outer] == [proc.t_sub]
    # 3.9 has no CFrame: the interpreters' order stays.
    assert walker(proc).os_threads()[0].tstate == proc.t_sub


def test_thread_state_without_frames_goes_last_310(proc):
    # A thread state left in the subinterpreter with no Python frames
    # (the one its creation made, 3.10-3.12) points at its root CFrame.
    proc.m.put(proc.t_sub, FRAME, "<Q", 0)
    proc.m.put(proc.t_sub, CFRAME, "<Q", proc.t_sub + FIELDS_310["PyThreadState.root_cframe"])
    proc.m.put(proc.t_main, CFRAME, "<Q", 0x7ffc0000f000)
    ww = w.Walker(proc.m.read, proc.runtime, w.Layout("3.10.13", "", FIELDS_310))
    th = ww.os_threads()[0]
    assert th.tstate == proc.t_main and [o.tstate for o in th.outer] == [proc.t_sub], th
