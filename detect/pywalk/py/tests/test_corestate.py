"""A core's thread states: pyattach reads each thread's system call from
the core's registers and dump_threads derives the state from it by the
live rule (thread_state); a thread the core's registers do not tell of
has none."""

import pyattach_walk as w
from test_subinterp import subinterp_process, walker


def _states(kernel):
    p = subinterp_process()
    ww = walker(p)
    ths = ww.os_threads()
    entries, _ = w.dump_threads(ww, 0, [w.OSThread(100, 7, "runner"), w.OSThread(101, 8, "main")],
                                {7: ths[0], 8: ths[1]}, False, None, kernel=kernel)
    return [e["state"] for e in entries]


def test_core_states_from_registers():
    assert _states({100: (None, None), 101: (230, 1)}) == ["running", "idle"]


def test_core_without_registers_has_no_state():
    assert _states(None) == [None, None]
    assert _states({101: (202, None)}) == [None, "idle"]
    assert _states({100: "junk", 101: (1, 2, 3)}) == [None, None]


def test_core_futex_on_the_gil_is_waiting_for_it():
    info = w.ThreadInfo()
    info.holds_gil, info.gil_addr, info.gil_size = False, 0x1000, 0x80
    assert w.thread_state(info, (202, 0x1040)) == "waiting-for-gil"
    assert w.thread_state(info, (202, 0x2000)) == "idle"
    # arm64: the call's first argument is not in the core.
    assert w.thread_state(info, (98, None)) == "idle"
