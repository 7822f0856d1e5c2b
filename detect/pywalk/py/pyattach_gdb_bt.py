"""Python frames in gdb's own backtrace: a frame filter that shows each
call of CPython's eval loop as the Python frames it runs.

A thread's C frames are kept as gdb unwinds them, except:
- each _PyEval_EvalFrameDefault frame becomes the Python frames it runs
  (function, file and line, read from memory by the walker, so stripped
  builds work too): the first shows the frame's level and address, the
  others are printed without them, under it;
- the interpreter's calling machinery (pyattach_walk.HELPERS) right
  before or after an eval loop frame is folded (elided) into the frame
  printed before it ("bt" shows it indented; "bt -hide" hides it).
The eval loop frames are matched to the walker's groups of Python frames
innermost first; an eval loop frame with no group left is kept as it is.

"set pyattach-bt-filter off", "disable frame-filter global
pyattach-python-frames" and "bt -no-filters" turn it off. "frame N" and
"info frame" are gdb's own, on the C frames.

gdb's MI front ends (VS Code's C/C++ extension, after
-enable-frame-filters) get the same frames in -stack-list-frames, and a
Python frame's locals in -stack-list-variables and -stack-list-locals
(their reprs, as py-locals prints them). gdb gives a frame's level only
to the first frame made from one C frame, and MI front ends need one for
every frame: with "set $pyattach_mi = 1" (the cppdbg configuration of
`pyattach init --vscode` sets it) each eval loop frame becomes its
innermost Python frame, with the other Python frames it runs listed as
its elided frames ("children"), and a Python frame's locals are named
$py_NAME, convenience variables holding their values (cpptools asks
gdb for each local's value by its name, as a C expression)."""

import re

import gdb
from gdb.FrameDecorator import FrameDecorator

import pyattach_walk as walk

FILTER_NAME = "pyattach-python-frames"

_state = {}


class _Setting(gdb.Parameter):
    """Whether bt shows Python frames in place of CPython's eval loop."""

    set_doc = "Set whether bt shows Python frames in place of CPython's eval loop."
    show_doc = "Show whether bt shows Python frames in place of CPython's eval loop."

    def __init__(self):
        super(_Setting, self).__init__("pyattach-bt-filter", gdb.COMMAND_STACK, gdb.PARAM_BOOLEAN)
        self.value = True

    def get_set_string(self):
        # Off: gdb prints its own frames, as with no filter at all.
        f = gdb.frame_filters.get(FILTER_NAME)
        if f is not None:
            f.enabled = bool(self.value)
        return ""

    def get_show_string(self, svalue):
        return "Python frames in bt: %s." % svalue


def register(walker, thread_state):
    """Registers the filter and its setting once. walker() gives a Walker
    with a fresh budget, thread_state(w) the selected thread's."""
    _state["walker"] = walker
    _state["thread_state"] = thread_state
    if "setting" in _state:
        return
    _state["setting"] = _Setting()
    PythonFrameFilter()
    gdb.pretty_printers.append(_printer)


class PythonFrameFilter(object):
    def __init__(self):
        self.name = FILTER_NAME
        self.priority = 100
        self.enabled = True
        gdb.frame_filters[self.name] = self

    def filter(self, frame_iter):
        # -stack-list-variables and -stack-list-locals start at the
        # selected frame: the eval loop frames above it have taken their
        # groups already.
        frames = iter(frame_iter)
        first = next(frames, None)
        if first is None:
            return iter(())
        return _merge(_chain(first, frames), _groups, _names_above(first), _mi())


def _chain(first, rest):
    yield first
    for dec in rest:
        yield dec


def _names_above(dec):
    """The functions of the frames newer than dec's, innermost first."""
    names = []
    try:
        stop = dec.inferior_frame()
        f = gdb.newest_frame()
        while f is not None and f != stop and len(names) < _MAX_ABOVE:
            names.append(f.name() or "")
            f = f.older()
    except (gdb.error, RuntimeError):
        return []
    return names


# How many frames above the selected one are looked at.
_MAX_ABOVE = 100000


def _mi():
    """Whether $pyattach_mi is set: the layout for gdb's MI front ends."""
    try:
        v = gdb.convenience_variable("pyattach_mi")
        return v is not None and int(v) != 0
    except (gdb.error, AttributeError, TypeError, ValueError):
        return False


def _groups():
    """The selected thread's Python frames split by eval loop call,
    innermost first; [] when the walker cannot read them."""
    try:
        w = _state["walker"]()
        t = _state["thread_state"](w)
        if t is None:
            return []
        return walk.eval_groups(w.thread_frames(t, max_frames=0))
    except (walk.WalkError, gdb.error):
        return []


def _name(dec):
    """The function of a frame as the symbol table or, stripped, the
    dynamic symbol table names it."""
    try:
        return dec.inferior_frame().name() or ""
    except (gdb.error, RuntimeError):
        return ""


def _merge(frames, groups, above=(), mi=False):
    """The frame decorators of frames with eval loop frames replaced
    (walk.StackMerger) and helpers folded; groups() is called at the
    first eval loop frame. above: the functions of the frames newer than
    the first of frames. mi: each eval loop frame becomes one frame, its
    innermost Python frame, with the others as its elided frames."""
    merger = walk.StackMerger(groups)
    for name in above:
        merger.frame(name)
    pending = []  # helper frames not yet placed
    held = None  # the last decorator made, not yet yielded
    held_eval = False
    for dec in frames:
        kind, pys = merger.frame(_name(dec))
        if kind == "helper":
            pending.append(dec)
            continue
        if pending:
            if held is not None and (held_eval or kind == "eval"):
                held.fold(pending)
            else:
                if held is not None:
                    yield held
                    held = None
                for p in pending:
                    yield p
            pending = []
        if held is not None:
            yield held
        held, held_eval = None, False
        if pys and mi:
            held, held_eval = PythonFrame(dec, pys[0], True, mi), True
            # The callers' locals keep their names: the $py_ variables
            # are the listed frame's.
            held.fold([PythonFrame(dec, fr, False) for fr in pys[1:]])
            continue
        if pys:
            for i, fr in enumerate(pys[:-1]):
                yield PythonFrame(dec, fr, i == 0)
            held, held_eval = PythonFrame(dec, pys[-1], len(pys) == 1), True
            continue
        held = Folding(dec)
    if pending and held is not None and held_eval:
        held.fold(pending)
        pending = []
    if held is not None:
        yield held
    for p in pending:
        yield p


class Folding(FrameDecorator):
    """A frame with the helper frames that follow it folded in."""

    def __init__(self, base):
        super(Folding, self).__init__(base)
        self._base = base
        self._folded = []

    def function(self):
        f = self._base.function()
        if isinstance(f, str) and f:
            return f
        # No symbol: gdb's own bt prints "??".
        try:
            return self.inferior_frame().name() or "??"
        except (gdb.error, RuntimeError):
            return "??"

    def fold(self, decs):
        self._folded.extend(decs)

    def elided(self):
        inner = self._base.elided()
        if not self._folded:
            return inner
        return iter(list(inner or ()) + self._folded)


class PythonFrame(Folding):
    """One Python frame of an eval loop frame. The first of its frames
    shows the C frame's level and address; the others show neither."""

    def __init__(self, base, fr, first, mi=False):
        super(PythonFrame, self).__init__(base)
        self._fr = fr
        self._first = first
        self._mi = mi

    def function(self):
        return "[Python] " + walk.escape(self._fr.qualname or self._fr.name or "???")

    def filename(self):
        return walk.escape(self._fr.filename) if self._fr.filename else None

    def line(self):
        return self._fr.lineno

    def address(self):
        return self._base.address() if self._first else None

    def frame_args(self):
        return None

    def frame_locals(self):
        return _locals(self._fr, self._mi)

    def elided(self):
        if self._first:
            return super(PythonFrame, self).elided()
        return iter(self._folded) if self._folded else None


class Local(object):
    """A Python local as gdb's frame decorators give one: its name and
    its repr, escaped and bounded as py-locals prints them. The value is
    a token (_Texts) that pyattach's pretty-printer prints as the repr: gdb would print a string value as a C array (escaped once
    more, repeats folded, and no value at all in MI's --simple-values)."""

    def __init__(self, name, text):
        self._name = _Name(name)
        self._text = text
        self._value = None

    def symbol(self):
        return self._name

    def value(self):
        if self._value is None:
            self._value = _texts.add(self._text)
        return self._value


class _Name(str):
    """A local's name as symbol() gives it: a string for gdb's frame
    printing, with the print_name of a gdb.Symbol for gdb's DAP."""

    @property
    def print_name(self):
        return str(self)


class _Texts(object):
    """The reprs handed out as tokens, the last MAX_TEXTS of them (gdb
    prints a local's value right after it asks for it; gdb's DAP keeps
    values until the next stop). A token is a volatile long (C's, or the
    architecture's 64-bit integer where the current language has no
    long): a scalar, so that MI's --simple-values prints it, of a type
    rare enough that nothing else gdb prints has it."""

    MAX_TEXTS = 4096

    def __init__(self):
        self._texts = {}
        self._next = 1
        self._type = None
        self._type_name = None

    def _token_type(self):
        if self._type is None:
            try:
                t = gdb.lookup_type("long")
            except gdb.error:
                t = gdb.selected_inferior().architecture().integer_type(64)
            self._type = t.volatile()
            self._type_name = str(self._type)
        return self._type

    def add(self, text):
        t = self._token_type()
        key = self._next
        self._next += 1
        self._texts[key] = text
        self._texts.pop(key - self.MAX_TEXTS, None)
        return gdb.Value(key).cast(t)

    def get(self, val):
        """The repr of a token, None for any other value."""
        if self._type_name is None:
            return None
        try:
            if val.type.code != gdb.TYPE_CODE_INT or val.address is not None or str(val.type) != self._type_name:
                return None
            return self._texts.get(int(val))
        except (gdb.error, RuntimeError, ValueError):
            return None


_texts = _Texts()


class _Repr(object):
    def __init__(self, text):
        self._text = text

    def to_string(self):
        return self._text


def _printer(val):
    """pyattach's pretty-printer lookup: Local's tokens as their reprs."""
    text = _texts.get(val)
    return None if text is None else _Repr(text)


_printer.name = "pyattach-locals"
_printer.enabled = True


def _locals(fr, mi=False):
    """The locals of the walker's frame fr as Local values, None when
    the walker cannot read them. mi: each local whose name is an ASCII
    identifier is named $py_NAME, a convenience variable set to its
    value, so that an MI front end that makes a variable object of each
    name it lists (VS Code's C/C++ extension: -var-create - * NAME) gets
    the value."""
    try:
        pairs = _state["walker"]().locals(fr)
    except (walk.WalkError, gdb.error):
        return None
    out = []
    for n, v in pairs:
        if mi and _IDENTIFIER.match(n):
            loc = Local(MI_PREFIX + n, v)
            try:
                gdb.set_convenience_variable(MI_PREFIX[1:] + n, loc.value())
            except (AttributeError, gdb.error):
                loc = Local(walk.escape(n), v)
        else:
            loc = Local(walk.escape(n), v)
        out.append(loc)
    return out


# What names a local in MI's layout: $py_NAME.
MI_PREFIX = "$py_"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
