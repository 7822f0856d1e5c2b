"""Which C frames of a thread run which Python frames: the eval loop's
frames, the interpreter's own call machinery between them, and a
thread's Python frames split by the call of the eval loop that runs
them. Debugger-agnostic: the gdb frame filter (pyattach_gdb_bt) uses it.

Frames are told apart by function name, as the symbol table (or, in a
stripped build, the dynamic symbol table) names them: every name here
is looked up with its compiler suffix (".cold", ".constprop.0", ".isra.0",
".lto_priv.0") removed."""

# The eval loop: one C frame per call, running one Python frame (3.7-3.10)
# or several (3.11+: Python-to-Python calls stay in the same C frame).
# Exported (in .dynsym) in every CPython 3.7+, so stripped builds name it.
EVAL_LOOP = "_PyEval_EvalFrameDefault"

# The interpreter's own frames between a Python frame and what it calls
# (a C function, another eval loop), folded into the frame they follow.
# Conservative: the calling machinery of functions, methods and built-in
# functions only, never a function that does work of its own (list_sort,
# builtin_sorted, PyEval_EvalCode, run_mod ... stay). A function not in
# the list stays as it is.
HELPERS = frozenset([
    # Entering the eval loop.
    "_PyEval_EvalFrame", "PyEval_EvalFrameEx", "PyEval_EvalFrame",
    "_PyEval_Vector", "_PyEval_EvalCode", "_PyEval_EvalCodeWithName",
    "PyEval_EvalCodeEx",
    # Calling a Python function.
    "_PyFunction_Vectorcall", "_PyFunction_FastCallDict",
    "_PyFunction_FastCallKeywords", "function_code_fastcall",
    "function_call",
    # Generic calls.
    "PyObject_Vectorcall", "_PyObject_VectorcallTstate", "PyObject_VectorcallDict",
    "_PyObject_FastCallDictTstate", "_PyObject_FastCallDict", "_PyObject_FastCall",
    "_PyObject_FastCallKeywords", "_PyObject_Vectorcall",
    "PyObject_Call", "_PyObject_Call", "PyObject_CallObject", "_PyObject_MakeTpCall",
    "PyObject_CallOneArg", "_PyObject_CallNoArgs", "PyObject_CallNoArgs",
    "_PyObject_CallNoArg", "PyObject_VectorcallMethod", "_PyObject_CallMethod",
    "_PyObject_Call_Prepend", "_PyObject_CallFunctionVa", "PyVectorcall_Call",
    "_PyVectorcall_Call", "vectorcall_method", "vectorcall_unbound",
    "call_function", "do_call_core", "_PyCFunction_FastCallKeywords",
    "_PyMethodDef_RawFastCallKeywords", "_PyMethodDef_RawFastCallDict",
    "_PyCFunction_FastCallDict",
    # Bound methods, slots, built-in functions and methods.
    "method_vectorcall", "method_call", "slot_tp_call",
    "cfunction_vectorcall_O", "cfunction_vectorcall_NOARGS",
    "cfunction_vectorcall_FASTCALL", "cfunction_vectorcall_FASTCALL_KEYWORDS",
    "cfunction_vectorcall_FASTCALL_KEYWORDS_METHOD", "cfunction_call",
    "method_vectorcall_O", "method_vectorcall_NOARGS", "method_vectorcall_FASTCALL",
    "method_vectorcall_FASTCALL_KEYWORDS", "method_vectorcall_FASTCALL_KEYWORDS_METHOD",
    "method_vectorcall_VARARGS", "method_vectorcall_VARARGS_KEYWORDS",
])


def base_name(name):
    """A function's name without a compiler suffix (".cold", ".isra.0")."""
    if not name:
        return ""
    return name.split(".", 1)[0]


def is_eval_loop(name):
    """Whether a C frame of this function runs Python frames."""
    return base_name(name) == EVAL_LOOP


def is_helper(name):
    """Whether a C frame of this function is the interpreter's calling
    machinery (HELPERS)."""
    return base_name(name) in HELPERS


def eval_groups(frames):
    """A thread's Python frames (innermost first, as Walker.frames reads
    them) split by the call of the eval loop that runs them: a list of
    lists, innermost call first, each innermost frame first. A group
    ends at a frame whose entry is set."""
    out = []
    cur = []
    for fr in frames:
        cur.append(fr)
        if fr.entry:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


# C frames that CPython's gdb extension shows in py-bt among the Python
# frames (as it names them): a thread waiting for the GIL, collecting
# garbage, and the calls of built-in functions and method-wrappers.
WAITING_FOR_GIL = "Waiting for the GIL"
COLLECTING = "Garbage-collecting"
_GIL_FRAMES = frozenset(["take_gil"])
_GC_FRAMES = frozenset(["collect", "gc_collect_main"])
_WRAPPER_CALL = "wrapper_call"


def native_kind(name):
    """What CPython's py-bt shows for a C frame of this function: "gil",
    "gc", "builtin" (a built-in function's call: cfunction_vectorcall_*,
    cfunction_call), "wrapper" (a method-wrapper's: wrapper_call), or
    None."""
    name = base_name(name)
    if name in _GIL_FRAMES:
        return "gil"
    if name in _GC_FRAMES:
        return "gc"
    if name.startswith("cfunction_vectorcall_") or name == "cfunction_call":
        return "builtin"
    if name == _WRAPPER_CALL:
        return "wrapper"
    return None


class StackMerger(object):
    """Matches a thread's C frames, given one at a time innermost first,
    to its Python frames: the one merger of gdb's bt (pyattach_gdb_bt),
    gdb's py-bt lines (pyattach_gdb_native), lldb's bt (pyattach_lldb_bt)
    and dump's merged stack (merge_stack). groups is a list of groups of
    Python frames (eval_groups), innermost first, or a function that
    returns one: called at the first eval loop frame only. The eval loop
    frames take the groups in order, innermost first."""

    def __init__(self, groups):
        self._groups = groups
        self._left = None
        # Eval loop frames with no group left.
        self.unmatched = 0

    def frame(self, name, eval_loop=None):
        """What the next C frame (of function name) is: ("eval", group)
        for an eval loop frame and the Python frames it runs, ("eval",
        None) for one with no group left, ("helper", None) for the
        interpreter's calling machinery (HELPERS), (None, None) for any
        other. eval_loop, when given, says whether the frame is an eval
        loop call (the debugger knows better than the name)."""
        if eval_loop is None:
            eval_loop = is_eval_loop(name)
        if eval_loop:
            if self._left is None:
                g = self._groups() if callable(self._groups) else self._groups
                self._left = list(g)
            if self._left:
                return "eval", self._left.pop(0)
            self.unmatched += 1
            return "eval", None
        if is_helper(name):
            return "helper", None
        return None, None

    def left(self):
        """How many groups no eval loop frame took (so far)."""
        if self._left is None:
            g = self._groups() if callable(self._groups) else self._groups
            self._left = list(g)
        return len(self._left)


def merge_stack(frames, native):
    """One stack of a thread, innermost first: its C frames (native: the
    debugger's frames innermost first, dicts with "function") with each
    eval loop frame replaced by the Python frames it runs (frames: the
    walker's Frame values innermost first, split as eval_groups splits
    them, the innermost group for the innermost eval loop frame). The
    interpreter's calling machinery (HELPERS) is kept as it is.
    Returns (stack, why): stack items are {"kind": "python", "index":
    j} (frames[j]) and {"kind": "native", "index": i} (native[i]); when
    the eval loop frames and the groups differ in number, stack is None
    and why says so in one line."""
    at = dict((id(fr), j) for j, fr in enumerate(frames))
    groups = eval_groups(frames)
    m = StackMerger(groups)
    stack = []
    for i, n in enumerate(native):
        kind, group = m.frame(n.get("function"))
        if group is not None:
            stack.extend({"kind": "python", "index": at[id(fr)]} for fr in group)
        elif kind != "eval":
            stack.append({"kind": "native", "index": i})
    left = m.left()
    if m.unmatched or left:
        evals = len(groups) - left + m.unmatched
        return None, "%d %s frame%s but %d group%s of Python frames" % (
            evals, EVAL_LOOP, "" if evals == 1 else "s", len(groups), "" if len(groups) == 1 else "s")
    return stack, None
