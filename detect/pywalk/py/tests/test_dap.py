"""pyattach-dap (pyattach_walk_dap), the walker's side of the DAP
protocol: stack's JSON (eval, helper and C frames, several Python
frames an eval loop frame, merged false with why), locals and children
of a made-up 3.12 process (bounds, refs, garbage addresses), escaping of
hostile names and values, and the one output line."""

import json

import pytest

import pyattach_walk as walk
from pyattach_read_types import HEAPTYPE
from test_readers import Fake

dap = walk.dap


def line_json(text):
    """The JSON of one pyattach-dap line, which must be the whole text."""
    assert "\n" not in text and text.startswith("pyattach-dap: "), text
    return json.loads(text[len("pyattach-dap: "):])


def strings(v):
    """Every string inside a JSON value, keys too."""
    if isinstance(v, dict):
        return [s for k, x in v.items() for s in [k] + strings(x)]
    if isinstance(v, list):
        return [s for x in v for s in strings(x)]
    return [v] if isinstance(v, str) else []


# A made-up instance layout: the fake type's tp_dictoffset (where its
# instances keep their __dict__ pointer), and the bytes of bytecode a
# fake code object holds.
DICTOFFSET = 16
CODE_UNITS = 16


# stack, over a walker that only gives frames and an exception.

def fr(name, entry, addr):
    return walk.Frame("/app.py", name, name, 10 + addr, 0, addr, entry)


class StubExceptions(object):
    def __init__(self, exc=0, described=None):
        self.exc = exc
        self.described = described

    def handled(self, tstate):
        return self.exc

    def describe(self, exc):
        return self.described


class StubWalker(object):
    def __init__(self, frames, exceptions=None):
        self.frames = frames
        self.exceptions = exceptions or StubExceptions()

    def thread_frames(self, t):
        return self.frames


class T(object):
    tstate = 0x5000


# innermost first: key runs in the inner eval loop call; outer and
# <module> in the outer one.
PY = walk.FrameList([fr("key", True, 1), fr("outer", False, 2), fr("<module>", True, 3)])
NATIVE = [{"function": "clock_nanosleep", "pc": 100}, {"function": "_PyEval_EvalFrameDefault", "pc": 101},
          {"function": "_PyObject_VectorcallTstate", "pc": 102}, {"function": "list_sort_impl", "pc": 103},
          {"function": "_PyEval_EvalFrameDefault.cold", "pc": 104}, {"function": None, "pc": 105}]


def test_stack_kinds_and_python_frames_per_eval_frame():
    d = dap.stack(StubWalker(PY), T(), NATIVE)
    assert d["merged"] is True and "why" not in d and d["exception"] is None, d
    assert [(n["pc"], n["kind"]) for n in d["native"]] == [
        (100, "c"), (101, "eval"), (102, "helper"), (103, "c"), (104, "eval"), (105, "c")]
    assert [[p["name"] for p in n["python"]] for n in d["native"]] == [[], ["key"], [], [], ["outer", "<module>"], []]
    assert d["native"][4]["python"][0] == {"name": "outer", "file": "/app.py", "line": 12, "frame": 2}


def test_stack_not_merged_says_why():
    # One eval loop frame for two groups of Python frames.
    d = dap.stack(StubWalker(PY), T(), NATIVE[:2])
    assert d["merged"] is False
    assert d["why"] == "1 _PyEval_EvalFrameDefault frame but 2 groups of Python frames", d
    partial = walk.FrameList(PY)
    partial.partial = True
    d = dap.stack(StubWalker(partial), T(), NATIVE)
    assert d["merged"] is False and d["why"] == "the Python stack was not read to its end", d


def test_stack_cut_before_the_eval_loop_lists_every_python_frame():
    # The debugger stopped unwinding at time_sleep: no eval loop frame.
    cut = [{"function": "clock_nanosleep", "pc": 100}, {"function": "time_sleep", "pc": 106}]
    d = dap.stack(StubWalker(PY), T(), cut)
    assert d["merged"] is False and [n["kind"] for n in d["native"]] == ["c", "c"], d
    assert [p["name"] for p in d["python"]] == ["key", "outer", "<module>"], d
    # With an eval loop frame that is not matched, nothing is listed
    # apart: the frames cannot be placed.
    d = dap.stack(StubWalker(PY), T(), NATIVE[:2])
    assert "python" not in d, d


def test_stack_of_thread_without_python():
    d = dap.stack(StubWalker(None), None, [{"function": "epoll_wait", "pc": 1}])
    assert d == {"native": [{"pc": 1, "function": "epoll_wait", "kind": "c", "python": []}], "merged": True, "exception": None}, d
    d = dap.stack(StubWalker(None), None, NATIVE[:2])
    assert d["merged"] is False and d["native"][1] == {"pc": 101, "function": "_PyEval_EvalFrameDefault", "kind": "eval", "python": []}, d


def test_stack_escapes_names_not_files():
    hostile = "\x1b[2Jevil\nname\u202e"
    frames = walk.FrameList([walk.Frame("/tmp/a\nb.py", hostile, hostile, None, 0, 7, True)])
    exc = StubExceptions(0xE0, {"type": "Bad\x1bError", "message": "line1\nline2\x07", "frames": []})
    d = dap.stack(StubWalker(frames, exc), T(), NATIVE[:2])
    py = d["native"][1]["python"][0]
    assert py == {"name": "\\x1b[2Jevil\\nname\\u202e", "file": "/tmp/a\nb.py", "line": 0, "frame": 7}, py
    assert d["exception"] == {"type": "Bad\\x1bError", "value": "line1\\nline2\\x07", "ref": 0xE0}, d


# locals and children, on a made-up 3.12 process.

class Process(object):
    """Fake memory of a 3.12 process with one frame of leaf (locals
    given as (name, object address)), and its Walker."""

    def __init__(self, m=None):
        self.m = m or Fake("3.12.1")

    def walker(self):
        return walk.Walker(self.m.read, 0, self.m.L)

    def tuple(self, items):
        m = self.m
        t = m.obj(m.static("tuple"), m.f["PyTupleObject.ob_item"] + 8 * len(items) + 8)
        m.field(t, "PyVarObject.ob_size", "q", len(items))
        for i, v in enumerate(items):
            m.put(t + m.f["PyTupleObject.ob_item"] + 8 * i, "Q", v)
        return t

    def list(self, items):
        m = self.m
        block = m.alloc(8 * len(items) + 8)
        for i, v in enumerate(items):
            m.put(block + 8 * i, "Q", v)
        lst = m.obj(m.static("list"))
        m.field(lst, "PyVarObject.ob_size", "q", len(items))
        m.field(lst, "PyListObject.ob_item", "Q", block)
        return lst

    def frame(self, local_vars, qualname="leaf"):
        """A _PyInterpreterFrame running a code object whose locals are
        local_vars, in order."""
        m = self.m
        n = len(local_vars)
        code = m.obj(m.static("code"), m.f["PyCodeObject.co_code_adaptive"] + CODE_UNITS)
        m.field(code, "PyCodeObject.co_filename", "Q", m.str("/app.py"))
        m.field(code, "PyCodeObject.co_name", "Q", m.str(qualname))
        m.field(code, "PyCodeObject.co_qualname", "Q", m.str(qualname))
        m.field(code, "PyCodeObject.co_nlocalsplus", "i", n)
        m.field(code, "PyCodeObject.co_localsplusnames", "Q", self.tuple([m.str(k) for k, _ in local_vars]))
        kinds = m.obj(m.static("bytes"), m.f["PyBytesObject.ob_sval"] + n + 1)
        m.field(kinds, "PyVarObject.ob_size", "q", n)
        m.put(kinds + m.f["PyBytesObject.ob_sval"], "%ds" % n, b"\x20" * n)  # CO_FAST_LOCAL
        m.field(code, "PyCodeObject.co_localspluskinds", "Q", kinds)
        f = m.alloc(m.f["_PyInterpreterFrame.localsplus"] + 8 * n)
        m.field(f, "_PyInterpreterFrame.f_code", "Q", code)
        for i, (_, v) in enumerate(local_vars):
            m.put(f + m.f["_PyInterpreterFrame.localsplus"] + 8 * i, "Q", v)
        return f


@pytest.fixture
def proc():
    p = Process()
    m = p.m
    widget = m.typ("Widget", HEAPTYPE, dictoffset=DICTOFFSET)
    w = m.obj(widget)
    m.put(w + DICTOFFSET, "Q", m.dict([(m.str("name"), m.str("gizmo")), (m.str("size"), m.int(12))]))
    p.big = p.list([m.int(i) for i in range(150)])
    p.table = m.dict([(m.str("k"), m.int(1)), (m.str("n"), p.list([m.int(5)]))])
    p.widget = w
    p.leaf = p.frame([("items", p.big), ("table", p.table), ("w", w), ("s", m.str("x" * 5000)),
                      ("empty", p.list([])), ("pair", p.tuple([m.int(1), m.int(2)])), ("st", m.set([m.int(3)]))])
    return p


def test_locals_values_types_refs(proc):
    d = dap.frame_locals(proc.walker(), proc.leaf)
    got = [(v["name"], v["type"], v["ref"] != 0) for v in d["vars"]]
    assert got == [("items", "list", True), ("table", "dict", True), ("w", "Widget", True), ("s", "str", False),
                   ("empty", "list", False), ("pair", "tuple", True), ("st", "set", True)], got
    assert d["more"] == 0
    by = dict((v["name"], v) for v in d["vars"])
    assert by["items"]["ref"] == proc.big and by["items"]["value"] == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...]"
    assert by["w"]["value"] == "<Widget(name='gizmo', size=12) at 0x%x>" % proc.widget
    # A long string is cut as py-locals cuts it.
    assert by["s"]["value"] == walk.bounded(repr("x" * 5000)), len(by["s"]["value"])


def test_children_bounded_named_and_counted(proc):
    w = proc.walker()
    d = dap.children(w, proc.big)
    assert [v["name"] for v in d["vars"]] == ["[%d]" % i for i in range(dap.MAX_VARS)] and d["more"] == 50
    assert d["vars"][99] == {"name": "[99]", "value": "99", "type": "int", "ref": 0}
    d = dap.children(w, proc.table)
    assert [(v["name"], v["value"], v["ref"] != 0) for v in d["vars"]] == [("'k'", "1", False), ("'n'", "[5]", True)]
    d = dap.children(w, proc.widget)
    assert [(v["name"], v["value"]) for v in d["vars"]] == [("name", "'gizmo'"), ("size", "12")] and d["more"] == 0
    # Not a container: no children.
    assert dap.children(w, proc.m.int(5)) == {"vars": [], "more": 0}


def test_many_locals_bounded():
    p = Process()
    d = dap.frame_locals(p.walker(), p.frame([("v%d" % i, p.m.int(i)) for i in range(120)]))
    assert len(d["vars"]) == dap.MAX_VARS and d["more"] == 20 and d["vars"][-1]["name"] == "v99"


def test_garbage_addresses_give_errors_or_fewer_vars(proc):
    m = proc.m

    def ask(*words):
        return line_json(dap.answer(words, Target(proc.walker())))

    for words in (("locals", "4"), ("locals", str(0xDEAD0000)), ("children", "8"), ("children", str(1 << 63))):
        assert list(ask(*words)) == ["error"], words
    # An object that is no code object where a frame's code should be.
    f = m.alloc(256)
    m.field(f, "_PyInterpreterFrame.f_code", "Q", m.int(3))
    assert ask("locals", str(f)) == {"error": "no Python frame at 0x%x" % f}
    # A code object claiming a million locals.
    code = m.obj(m.static("code"), m.f["PyCodeObject.co_code_adaptive"] + CODE_UNITS)
    m.field(code, "PyCodeObject.co_nlocalsplus", "i", 1 << 20)
    m.field(f, "_PyInterpreterFrame.f_code", "Q", code)
    assert list(ask("locals", str(f))) == ["error"]
    # A list whose size lies and whose item points nowhere.
    lst = proc.list([0xBAD00])
    m.field(lst, "PyVarObject.ob_size", "q", 1 << 40)
    assert list(ask("children", str(lst))) == ["error"]
    m.field(lst, "PyVarObject.ob_size", "q", 1)
    assert ask("children", str(lst)) == {"vars": [{"name": "[0]", "value": "<unreadable at 0xbad00>", "type": "",
                                                   "ref": 0}], "more": 0}


def test_hostile_names_and_values_escaped():
    p = Process()
    m = p.m
    evil = "\x1b]0;pwned\x07\nfake: line\u202e"
    cls = m.typ("Evil\x1b[31m\n", HEAPTYPE, dictoffset=DICTOFFSET)
    obj = m.obj(cls)
    m.put(obj + DICTOFFSET, "Q", m.dict([(m.str(evil), m.str(evil))]))
    f = p.frame([(evil, obj), ("d", m.dict([(m.str(evil), m.int(1))]))])
    w = p.walker()
    d = dap.frame_locals(w, f)
    assert d["vars"][0]["name"] == walk.escape(evil) and d["vars"][0]["type"] == "Evil\\x1b[31m\\n", d
    kids = dap.children(w, obj)
    assert kids["vars"][0]["name"] == walk.escape(evil) and kids["vars"][0]["value"] == repr(evil), kids
    keys = dap.children(w, d["vars"][1]["ref"])
    for out in (d, kids, keys):
        assert not any(walk.has_controls(s) for s in strings(out)), out


# The command: words in, one line out.

class Target(object):
    """A target as the adapters give it (see pyattach_walk_dap)."""

    def __init__(self, w=None, fail=None):
        self.w = w
        self.fail = fail

    def walker(self):
        if self.fail:
            raise self.fail
        return self.w

    def thread_state(self, w, tid):
        raise walk.WalkError("no thread %d" % tid)

    def native_frames(self, tid):
        return []

    def threads(self, w):
        oss = [walk.OSThread(11, 11, "py\x1bmain"), walk.OSThread(12, 12, "no python"), walk.OSThread(13, 13, None)]
        return oss, {11: T(), 13: T()}, lambda ot: ot.tid * 100

    def files(self):
        return walk.SourceFiles(creds=(0, 0, ()))


class ThreadsWalker(object):
    def thread_infos(self):
        return {}

    def free_threaded(self):
        return False


def test_threads_python_only_escaped():
    d = line_json(dap.answer(["threads"], Target(ThreadsWalker())))
    assert d == {"threads": [{"id": 1100, "name": "py\\x1bmain"}, {"id": 1300, "name": ""}]}, d


def test_source(tmp_path):
    p = tmp_path / "app\u00e9.py"
    p.write_bytes(b"one\r\ntwo\n\xff\n")
    d = line_json(dap.answer(["source", str(p).encode("utf-8").hex()], Target()))
    assert d == {"text": "one\ntwo\n\ufffd\n"}, d
    d = line_json(dap.answer(["source", (str(tmp_path) + "/missing\n.py").encode().hex()], Target()))
    assert d == {"error": "cannot read %s/missing\\n.py as the process would" % tmp_path}, d


@pytest.mark.parametrize("words", [[], ["stack"], ["stack", "1", "2"], ["stack", "-1"], ["locals", "0x10"],
                                   ["children", "1e3"], ["threads", "x"], ["source", "zz"], ["frobnicate", "1"],
                                   ["locals", str(1 << 64)]])
def test_usage_errors_are_one_json_line(words):
    d = line_json(dap.answer(words, Target(fail=AssertionError("asked"))))
    assert list(d) == ["error"] and "usage: pyattach-dap" in d["error"], d


def test_failures_are_one_json_line():
    assert line_json(dap.answer(["stack", "5"], Target(ThreadsWalker()))) == {"error": "no thread 5"}
    assert line_json(dap.answer(["threads"], Target(fail=walk.WalkError("bad\nread")))) == {"error": "bad\\nread"}

    class AdapterError(Exception):
        pass

    got = dap.answer(["threads"], Target(fail=AdapterError("gdb says\x1b")), errors=(AdapterError,))
    assert line_json(got) == {"error": "gdb says\\x1b"}
    got = line_json(dap.answer(["threads"], Target(fail=KeyError("oops"))))
    assert got == {"error": "pyattach-dap failed: KeyError: 'oops'"}, got


def test_line_is_compact_ascii_json():
    assert dap.line({"a": [1, "\u00e9\n"]}) == 'pyattach-dap: {"a":[1,"\\u00e9\\n"]}'
