"""The commands' arguments and the tid map, parsed once in the core
(pyattach_walk_commands) for gdb and lldb."""

import pytest

import pyattach_walk as walk
from pyattach_walk_runtime import Thread


def test_bt_args():
    assert walk.bt_args([]) == (False, None)
    assert walk.bt_args(["--max-frames", "10"]) == (False, 10)
    assert walk.bt_args(["--max-frames=0"]) == (False, 0)
    assert walk.bt_args(["all", "--max-frames", "3"], allow_all=True) == (True, 3)
    for bad in (["all"], ["--max-frames"], ["--max-frames", "x"], ["--max-frames=-1"], ["-n"]):
        with pytest.raises(walk.UsageError) as e:
            walk.bt_args(bad)
        assert str(e.value) == walk.BT_USAGE
    with pytest.raises(walk.UsageError) as e:
        walk.bt_args(["every"], allow_all=True)
    assert str(e.value) == walk.BT_ALL_USAGE


def test_tasks_args():
    assert walk.tasks_args([], 1000) == 1000
    assert walk.tasks_args(["--max-tasks", "5"], 1000) == 5
    assert walk.tasks_args(["--max-tasks", "0"], 1000) >= 1 << 62
    for bad in (["--max-tasks"], ["--max-tasks", "-1"], ["5"], ["--max-tasks", "5", "x"]):
        with pytest.raises(walk.UsageError) as e:
            walk.tasks_args(bad, 1000)
        assert str(e.value) == walk.TASKS_USAGE


def test_no_args():
    walk.no_args("  ", "py-exc")
    with pytest.raises(walk.UsageError) as e:
        walk.no_args("x", "py-exc")
    assert str(e.value) == "usage: py-exc (no arguments)"


def test_thread_numbers():
    a, b = Thread(0x10, 0x7000, 1, 0), Thread(0x20, 0x8000, 2, 0)
    oss = [walk.OSThread(101, 1, None, handle=3), walk.OSThread(102, 2, None, handle=4), walk.OSThread(103, 3, None, handle=5)]
    got = walk.thread_numbers(oss, {1: a, 2: b}, lambda ot: ot.handle)
    assert got == {0x10: 3, 0x20: 4}


class _Task(object):
    def __init__(self, running):
        self.running = running


class _Tasks(list):
    pass


def test_py_tasks_asks_numbers_only_when_a_task_runs(monkeypatch):
    import pyattach_walk_commands as commands

    seen = {}

    def fake_format(tl, files, source_line=None, tid_of=None):
        seen["tid_of"] = tid_of
        return "tasks\n"

    monkeypatch.setattr(commands, "format_tasks", fake_format)

    class W(object):
        def __init__(self, tl):
            self.tl = tl

        def tasks(self, debug, limit):
            assert (debug, limit) == (None, 7)
            return self.tl

    def boom():
        raise AssertionError("tid map asked")

    assert walk.py_tasks(W(_Tasks([_Task(None)])), None, 7, None, boom) == "tasks\n"
    assert seen["tid_of"] == {}
    assert walk.py_tasks(W(_Tasks([_Task(0x10)])), None, 7, None, lambda: {0x10: 2}) == "tasks\n"
    assert seen["tid_of"] == {0x10: 2}


def test_frame_command_moves():
    frames = [walk.Frame("/a.py", "f", "f", 1, 0, 0, True)]
    assert walk.frame_command(None, "py-up", [], 0) == (walk.NO_FRAME, None)
    assert walk.frame_command(None, "py-up", frames, 0) == ("Unable to find an older python frame\n", None)
    assert walk.frame_command(None, "py-down", frames, 0) == ("Unable to find a newer python frame\n", None)


class _LocalsWalker(object):
    """Just what py-locals asks of a walker: the version and each
    frame's locals (by name; "bad" cannot be read)."""

    def __init__(self, minor):
        self.L = type("L", (), {"minor": minor})()

    def locals(self, fr):
        if fr.name == "bad":
            raise walk.WalkError("unreadable")
        return [("n", repr(fr.name))]


def _chain(*names_entries):
    return [walk.Frame("/a.py", n, n, 1, 0, 0, e) for n, e in names_entries]


def test_py_locals_goes_on_to_the_eval_loops_entry_frame():
    # 3.11+: as CPython's, the selected frame then its callers run by the
    # same call of the C eval loop, each under "Locals for NAME".
    frames = _chain(("leaf", False), ("caller", True), ("outer", True))
    w = _LocalsWalker((3, 11))
    out, j = walk.frame_command(w, "py-locals", frames, 0)
    assert (out, j) == ("Locals for leaf\nn = 'leaf'\nLocals for caller\nn = 'caller'\n", None)
    assert walk.frame_command(w, "py-locals", frames, -1)[0] == out
    assert walk.frame_command(w, "py-locals", frames, 1)[0] == "Locals for caller\nn = 'caller'\n"
    assert walk.frame_command(w, "py-locals", frames, 2)[0] == "Locals for outer\nn = 'outer'\n"
    # A caller that cannot be read ends it with CPython's message.
    bad = _chain(("leaf", False), ("bad", True))
    assert walk.frame_command(w, "py-locals", bad, 0)[0] == (
        "Locals for leaf\nn = 'leaf'\nUnable to read information on python frame\n")
    with pytest.raises(walk.WalkError):
        walk.frame_command(w, "py-locals", bad, 1)
    # Before 3.11 CPython's prints the selected frame alone, no header.
    old = _LocalsWalker((3, 10))
    assert walk.frame_command(old, "py-locals", frames, 0)[0] == "n = 'leaf'\n"


def test_py_up_and_down_stop_on_builtin_lines():
    # f called through two built-in methods (sorted, list.sort) that g
    # called; f called id: as CPython's, py-up from id's C code selects f,
    # then each built-in line, then g; py-down back down to id's line.
    frames = _chain(("f", True), ("g", False), ("<module>", True))
    natives = {0: [(1, "<built-in method id>")], 1: [(12, "<built-in method sort>"), (16, "<built-in method sorted>")]}
    w = _LocalsWalker((3, 11))
    seen, i = [], -1
    while True:
        out, j = walk.frame_command(w, "py-up", frames, i, natives=natives)
        if j is None:
            assert out == "Unable to find an older python frame\n"
            break
        seen.append(j)
        i = j
    assert seen == [0, (1, 0), (1, 1), 1, 2]
    assert walk.frame_command(w, "py-up", frames, 0, natives=natives)[0] == "#12 <built-in method sort>\n"
    down, i = [], 2
    while True:
        out, j = walk.frame_command(w, "py-down", frames, i, natives=natives)
        if j is None:
            assert out == "Unable to find a newer python frame\n"
            break
        down.append(j)
        i = j
    assert down == [1, (1, 1), (1, 0), 0, (0, 0)]
    assert walk.frame_command(w, "py-down", frames, -1, natives=natives)[1] is None
    # py-locals on a built-in line reads the Python frame that called it.
    assert walk.frame_command(w, "py-locals", frames, (1, 0))[0].startswith("Locals for g\n")
    # Without natives (lldb) py-up and py-down move between Python frames.
    assert walk.move_selection(frames, 0, True) == (1, None)
    assert walk.move_selection([], 0, True, {}) == (None, "Unable to find an older python frame\n")
