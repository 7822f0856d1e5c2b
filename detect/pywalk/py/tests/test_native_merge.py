"""merge_stack on literal frame lists: a 3.11-style thread whose two
eval loop calls run three Python frames (the inner call runs the
sorted() key callback, called through list_sort), older versions' entry
frames, and the mismatch that leaves the stack unmerged."""

import pyattach_walk as w


def fr(name, entry):
    return w.Frame("/app.py", name, name, 1, 0, 0, entry)


PY = [fr("key", True), fr("outer", False), fr("<module>", True)]
NATIVE = [{"function": "clock_nanosleep"}, {"function": "time_sleep.lto_priv.0"},
          {"function": "_PyEval_EvalFrameDefault"}, {"function": "_PyObject_VectorcallTstate"},
          {"function": "list_sort_impl"}, {"function": "_PyEval_EvalFrameDefault.cold"},
          {"function": "PyEval_EvalCode"}, {"function": "main"}]


def test_two_eval_loops_three_python_frames():
    stack, why = w.merge_stack(PY, NATIVE)
    assert why is None, why
    got = [(s["kind"], s["index"]) for s in stack]
    assert got == [("native", 0), ("native", 1), ("python", 0), ("native", 3), ("native", 4),
                   ("python", 1), ("python", 2), ("native", 6), ("native", 7)], got


def test_every_frame_an_entry_frame_before_3_11():
    old = [fr("inner", True), fr("<module>", True)]
    stack, why = w.merge_stack(old, [{"function": "_PyEval_EvalFrameDefault"}, {"function": None},
                                     {"function": "_PyEval_EvalFrameDefault"}])
    assert [(s["kind"], s["index"]) for s in stack] == [("python", 0), ("native", 1), ("python", 1)], stack


def test_mismatch_not_merged_says_why():
    # One eval loop frame, two groups.
    stack, why = w.merge_stack(PY, NATIVE[:3] + NATIVE[6:])
    assert stack is None
    assert why == "1 _PyEval_EvalFrameDefault frame but 2 groups of Python frames", why


def test_thread_without_python_keeps_c_frames():
    stack, why = w.merge_stack([], [{"function": "epoll_wait"}, {"function": None}])
    assert why is None and [s["kind"] for s in stack] == ["native", "native"], stack
