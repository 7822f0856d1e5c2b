"""The one merger of eval loop C frames with Python frames
(pyattach_walk_native.StackMerger), which gdb's bt, gdb's py-bt lines,
lldb's bt and dump's merge_stack share."""

import pyattach_walk as walk


def fr(name, entry):
    return walk.Frame("/app.py", name, name, 1, 0, 0, entry)


PY = [fr("key", True), fr("outer", False), fr("<module>", True)]
NATIVE = ["clock_nanosleep", "time_sleep.lto_priv.0", "_PyEval_EvalFrameDefault", "_PyObject_VectorcallTstate",
          "list_sort_impl", "_PyEval_EvalFrameDefault.cold", "PyEval_EvalCode", "main"]


def test_merger_kinds():
    calls = []

    def groups():
        calls.append(1)
        return walk.eval_groups(PY)

    m = walk.StackMerger(groups)
    got = [m.frame(n) for n in NATIVE[:2]]
    assert got == [(None, None), (None, None)]
    assert calls == []  # asked at the first eval loop frame only
    kind, g = m.frame(NATIVE[2])
    assert kind == "eval" and [f.name for f in g] == ["key"]
    assert m.frame(NATIVE[3]) == ("helper", None)
    assert m.frame(NATIVE[4]) == (None, None)
    kind, g = m.frame(NATIVE[5])
    assert [f.name for f in g] == ["outer", "<module>"]
    assert m.frame("_PyEval_EvalFrameDefault") == ("eval", None)
    assert m.unmatched == 1 and m.left() == 0
    assert calls == [1]


def test_merger_debugger_says_eval():
    m = walk.StackMerger([[PY[0]]])
    # An inlined frame of the eval loop's function is not a call of it.
    assert m.frame("_PyEval_EvalFrameDefault", eval_loop=False) == (None, None)
    assert m.frame("??", eval_loop=True) == ("eval", [PY[0]])


def test_merge_stack_counts():
    # More eval loop frames than groups, and fewer (test_native_merge.py
    # has the merged stack).
    native = [{"function": n} for n in NATIVE]
    stack, why = walk.merge_stack([], native[2:3])
    assert why == "1 _PyEval_EvalFrameDefault frame but 0 groups of Python frames"
    stack, why = walk.merge_stack(PY[:1], native[:2])
    assert why == "0 _PyEval_EvalFrameDefault frames but 1 group of Python frames"
