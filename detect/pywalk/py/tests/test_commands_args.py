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
