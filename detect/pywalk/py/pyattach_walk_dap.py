"""pyattach-dap: the Python facts pyattach's DAP proxy (cmd/internal/dap)
asks the debugger for, one subcommand a request, each answered in one
line, "pyattach-dap: {JSON}" (line); any failure is {"error": "..."}.

  stack TID      the thread's C frames, each eval loop frame with the
                 Python frames it runs (StackMerger), and the exception
                 it handles
  locals FRAME   a Python frame's locals (a "frame" of stack)
  children ADDR  the items of a list, tuple, dict or set, the attributes
                 of an instance (a "ref" of locals, children, stack)
  threads        the Python threads, named as dump names them
  source HEX     a source file, read as the process would read it

Debugger-agnostic: the gdb command (pyattach_gdb_commands) and the lldb
one (pyattach_lldb) hand answer() the command's words and a target, an
object with:

  walker()              the process's Walker, with a fresh budget
  thread_state(w, tid)  the thread state the debugger's thread tid (its
                        DAP id) runs in, None when it runs no Python;
                        raises WalkError when there is no such thread
  native_frames(tid)    its C frames as the debugger unwinds them,
                        innermost first: [{"function": name or None,
                        "pc": int}]
  threads(w)            (OSThread values with their os_name, their
                        thread states by native_tid (match_threads),
                        a function giving an OSThread's DAP id)
  files()               the process's SourceFiles

Values are the reprs py-locals and dump --locals print (value_repr);
names, types and thread names are escaped (escape) as the terminal
prints them; "file" is co_filename as read: the proxy opens it."""

import itertools

from pyattach_read_repr import value_repr
from pyattach_read_types import BASE_EXC_SUBCLASS, HEAPTYPE
from pyattach_walk_commands import UsageError
from pyattach_walk_dump import stack_of
from pyattach_walk_frames import FrameList
from pyattach_walk_memory import BudgetExhausted, WalkError
from pyattach_walk_native import StackMerger, eval_groups
from pyattach_walk_source import MAX_SOURCE_BYTES, source_lines
from pyattach_walk_text import TRUNCATED, escape
from pyattach_walk_threads import known_thread_infos, thread_facts

PREFIX = "pyattach-dap: "
USAGE = "usage: pyattach-dap stack TID | locals FRAME | children ADDR | threads | source HEX"
# How many variables locals and children give at most ("more" counts
# the others), and how long a dict key's repr is as a name.
MAX_VARS = 100
MAX_NAME = 256
# How many C frames of a thread an adapter lists at most.
MAX_NATIVE = 4096

# What children lists of an object of each static type.
_KINDS = {"tuple": "seq", "list": "seq", "dict": "dict", "set": "set", "frozenset": "set"}


def line(obj):
    """The one line the command prints: PREFIX and obj as compact JSON."""
    # Imported here: json (and the re it imports) costs pyattach_proc,
    # which imports this module with the walker but never answers DAP,
    # ~13 ms to import.
    import json
    return PREFIX + json.dumps(obj, ensure_ascii=True, separators=(",", ":"))


def answer(words, target, errors=()):
    """The line answering the command's words (after "pyattach-dap"),
    asked of target (see the module's doc). A usage error, a WalkError,
    one of errors (the adapter's own) and anything else raised become
    {"error": "one line"}: the proxy reads one line, never a traceback."""
    try:
        out = _run(list(words), target)
    except UsageError as e:
        out = {"error": str(e)}
    except (WalkError,) + tuple(errors) as e:
        out = {"error": escape(str(e)) or type(e).__name__}
    except Exception as e:  # a bug of the walker's: still one line
        out = {"error": escape("pyattach-dap failed: %s: %s" % (type(e).__name__, e))}
    return line(out)


def _number(word):
    """A decimal address or thread id; raises UsageError."""
    if not word.isdigit() or int(word) >= 1 << 64:
        raise UsageError("pyattach-dap: not a decimal number: %s (%s)" % (escape(word), USAGE))
    return int(word)


def _run(argv, target):
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    if cmd == "threads" and not args:
        w = target.walker()
        return threads(w, *target.threads(w))
    if cmd == "source" and len(args) == 1:
        return source(args[0], target.files())
    if cmd not in ("stack", "locals", "children") or len(args) != 1:
        raise UsageError(USAGE)
    n = _number(args[0])
    w = target.walker()
    if cmd == "stack":
        return stack(w, target.thread_state(w, n), target.native_frames(n))
    if cmd == "locals":
        return frame_locals(w, n)
    return children(w, n)


# stack

def stack(w, t, native):
    """stack's answer for a thread: t its thread state (None: it runs no
    Python), native its C frames innermost first. Each eval loop frame
    gets the Python frames it runs, as StackMerger matches them; merged
    is False, with why, where dump's merged stack says so (stack_of).
    Each C frame keeps its function's name as the debugger gives it
    (not escaped, never shown: the proxy lines frames up by it where
    the adapter gives no instructionPointerReference, as lldb-vscode
    14 does). Where no C frame is an eval loop frame (the debugger
    stopped unwinding before it) and the thread runs Python, "python"
    lists all its Python frames, innermost first: they come after every
    C frame listed."""
    frames = FrameList()
    if t is not None:
        try:
            frames = w.thread_frames(t)
        except BudgetExhausted:
            frames.partial = True
        except WalkError as e:
            frames.error = str(e)
    m = StackMerger(eval_groups(frames))
    out = []
    for n in native:
        kind, group = m.frame(n.get("function"))
        out.append({"pc": n["pc"], "function": n.get("function"), "kind": kind or "c",
                    "python": [python_frame(fr) for fr in group or ()]})
    entry = {"native": native, "partial": frames.partial, "frames_omitted": frames.omitted, "error": frames.error}
    why = stack_of(entry, frames)[1]
    d = {"native": out, "merged": why is None, "exception": exception(w, t)}
    if why is not None:
        d["why"] = escape(why)
        if frames and not any(n["kind"] == "eval" for n in out):
            # The debugger stopped unwinding before the eval loop (lldb
            # 19 on LTO-split functions): the Python frames are all
            # older than the C frames it found.
            d["python"] = [python_frame(fr) for fr in frames]
    return d


def python_frame(fr):
    """A Python frame of stack: "frame" is its address, for locals."""
    return {"name": escape(fr.qualname or fr.name), "file": fr.filename, "line": fr.lineno or 0, "frame": fr.addr}


def exception(w, t):
    """The exception thread state t handles as stack gives it (its type,
    its message as py-exc prints it, its address for children), or None."""
    if t is None:
        return None
    try:
        exc = w.exceptions.handled(t.tstate)
        if not exc:
            return None
        d = w.exceptions.describe(exc)
    except WalkError:
        return None
    return {"type": escape(d["type"]), "value": escape(d["message"]), "ref": exc}


# locals and children

def frame_locals(w, addr):
    """locals' answer: the locals of the Python frame at addr, as
    py-locals lists them (Walker.local_values), at most MAX_VARS."""
    pairs = w.local_values(w.frame_reader.frame_at(addr))
    return _vars(w, [(escape(n), v) for n, v in pairs[:MAX_VARS]], len(pairs))


def children(w, addr):
    """children's answer: the first MAX_VARS items of the list, tuple,
    dict, set or frozenset at addr, or attributes of the instance there
    ("args" first for an exception); none for any other object."""
    named, total = _children(w, addr, MAX_VARS)
    return _vars(w, named, total)


def _vars(w, named, total):
    return {"vars": [variable(w, name, v) for name, v in named], "more": max(total - len(named), 0)}


def variable(w, name, v):
    """A VAR: name (escaped), the repr, type name and ref (v where
    children lists something, else 0) of the object at v; v is the text
    of an int a 3.14+ frame holds in the slot itself."""
    if not isinstance(v, int):
        return {"name": name, "value": v, "type": "int", "ref": 0}
    try:
        tname = w.readers.types.name_of(v)
    except BudgetExhausted:
        raise
    except WalkError:
        return {"name": name, "value": "<unreadable at 0x%x>" % v, "type": "", "ref": 0}
    try:
        ref = v if _children(w, v, 0)[1] > 0 else 0
    except BudgetExhausted:
        raise
    except WalkError:
        ref = 0
    return {"name": name, "value": value_repr(w.readers, v), "type": escape(tname), "ref": ref}


def _children(w, addr, most):
    """(the first most children of the object at addr as (name, value
    address), how many it has)."""
    r = w.readers
    tp, name, flags = r.types.of(addr)
    if flags & (HEAPTYPE | BASE_EXC_SUBCLASS):
        return _attributes(w, addr, tp, flags, most)
    kind = _KINDS.get(name)
    if kind == "seq":
        n = r.seqs.size(addr)
        if n < 0:
            raise WalkError("%s at 0x%x: size %d" % (name, addr, n))
        return [("[%d]" % i, v) for i, v in enumerate(r.seqs.items(addr, name, min(n, most)))], n
    if kind == "dict":
        pairs = r.dicts.first_items(addr, most)[0] if most else []
        return [(value_repr(r, k, MAX_NAME), v) for k, v in pairs], r.dicts.size(addr)
    if kind == "set":
        used, slots, table = r.sets.table(addr)
        keys = itertools.islice(r.sets.table_keys(used, slots, table), most)
        return [("[%d]" % i, k) for i, k in enumerate(keys)], used
    return [], 0


def _attributes(w, addr, tp, flags, most):
    """An instance's children: an exception's args, then the attributes
    of its __dict__ (InstanceReader.items) and __slots__."""
    r = w.readers
    out = []
    if flags & BASE_EXC_SUBCLASS and w.L.has("PyBaseExceptionObject.args"):
        args = w.ptrv(addr + w.L.off("PyBaseExceptionObject.args"))
        if args:
            out.append(("args", args))
    attrs = r.instances.items(addr)
    slots = r.instances.slots(addr, tp) or []
    total = len(out) + len(attrs) + len(slots)
    out = out[:most]
    out += [(_attribute_name(w, k), v) for k, v in attrs[:most - len(out)]]
    out += [(escape(w.cstring(n)), v) for n, v in slots[:most - len(out)]]
    return out, total


def _attribute_name(w, k):
    """An attribute's name (a str key of the instance's dict), escaped."""
    r = w.readers
    tname, static = r.types.name_static(k)
    got = r.strs.prefix(k, MAX_NAME) if tname == "str" and static else None
    if got is None:
        return value_repr(r, k, MAX_NAME)
    return escape(got[0] + TRUNCATED if got[1] > MAX_NAME else got[0])


# threads and source

def threads(w, oss, states, number):
    """threads' answer: each of oss (OSThread values, with os_name) that
    runs Python (states: its thread state by native_tid), in order, with
    its DAP id number(ot) and the name dump gives it (thread_facts)."""
    infos = known_thread_infos(w)
    out = []
    for ot in oss:
        t = states.get(ot.native_tid)
        if t is not None:
            name = thread_facts(w, ot.tid, ot.os_name, t, infos, None)["name"]
            out.append({"id": number(ot), "name": escape(name)})
    return {"threads": out}


def source(hexname, files):
    """source's answer: the file named by hexname (its UTF-8 bytes in
    hex), read as the process would (source_lines: open_source, at most
    MAX_SOURCE_BYTES), or an error."""
    try:
        name = bytes.fromhex(hexname).decode("utf-8")
    except ValueError:
        raise UsageError("pyattach-dap: not a file name in hex: %s (%s)" % (escape(hexname), USAGE))
    lines = source_lines(name, files, MAX_SOURCE_BYTES)
    if lines is None:
        return {"error": "cannot read %s as the process would" % escape(name)}
    return {"text": "".join(l + "\n" for l in lines)}
