package pywalk

import "testing"

// mergePy checks merge_stack on literal frame lists: a 3.11-style
// thread whose two eval loop calls run three Python frames (the inner
// call runs the sorted() key callback, called through list_sort), and
// the mismatch that leaves the stack unmerged.
const mergePy = `import pyattach_walk as w

def fr(name, entry):
    return w.Frame("/app.py", name, name, 1, 0, 0, entry)

py = [fr("key", True), fr("outer", False), fr("<module>", True)]
native = [{"function": "clock_nanosleep"}, {"function": "time_sleep.lto_priv.0"},
          {"function": "_PyEval_EvalFrameDefault"}, {"function": "_PyObject_VectorcallTstate"},
          {"function": "list_sort_impl"}, {"function": "_PyEval_EvalFrameDefault.cold"},
          {"function": "PyEval_EvalCode"}, {"function": "main"}]
stack, why = w.merge_stack(py, native)
assert why is None, why
got = [(s["kind"], s["index"]) for s in stack]
assert got == [("native", 0), ("native", 1), ("python", 0), ("native", 3), ("native", 4),
               ("python", 1), ("python", 2), ("native", 6), ("native", 7)], got

# 3.10 and older: every Python frame is an entry frame.
old = [fr("inner", True), fr("<module>", True)]
stack, why = w.merge_stack(old, [{"function": "_PyEval_EvalFrameDefault"}, {"function": None},
                                 {"function": "_PyEval_EvalFrameDefault"}])
assert [(s["kind"], s["index"]) for s in stack] == [("python", 0), ("native", 1), ("python", 1)], stack

# One eval loop frame, two groups: not merged, and why.
stack, why = w.merge_stack(py, native[:3] + native[6:])
assert stack is None
assert why == "1 _PyEval_EvalFrameDefault frame but 2 groups of Python frames", why

# A thread that runs no Python: its C frames as they are.
stack, why = w.merge_stack([], [{"function": "epoll_wait"}, {"function": None}])
assert why is None and [s["kind"] for s in stack] == ["native", "native"], stack
print("ok")
`

// TestMergeStack runs mergePy against the embedded walker.
func TestMergeStack(t *testing.T) {
	runWalkerScript(t, "merge.py", mergePy)
}
