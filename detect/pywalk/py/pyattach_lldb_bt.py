"""Python frames in lldb's own backtrace, through lldb 14's frame-format.

lldb cannot drop or add frames, but its frame-format may call a Python
function for each frame (${script.frame:FUNCTION}). install() makes the
frame-format call two:
- python_frame, first: for a _PyEval_EvalFrameDefault frame, the frame
  tersely (module`function) and under it the Python frames it runs
  (read by the walker, so stripped builds work too), innermost first;
  for a frame of the interpreter's calling machinery
  (pyattach_walk_native.HELPERS), the frame tersely; "" for the others;
- usual, then, in a scope around the rest of lldb's own format: it
  exists (module __getattr__) only while the frame being printed keeps
  lldb's look. A scope whose script function is missing prints nothing,
  so a terse frame prints its pc and python_frame's text only.
Eval loop frames are matched to the walker's groups of Python frames
(pyattach_walk_native.eval_groups) innermost first; one with no group
left keeps lldb's look. What a thread's frames are is worked out once
per stop (the process's stop id), as far as the frames printed.

"pyattach-bt-filter off" puts back the frame-format as it was;
"settings clear frame-format" gives lldb's default.

Where lldb has scripted frame providers (lldb 22+), install() also
registers pyattach_lldb_frames' provider in each target: the Python
frames are then frames of their own (selectable, with their file and
line, in lldb-dap too), and the frame-format keeps lldb's look for the
frames of those targets."""

import pyattach_walk as walk

# How lldb finds the two functions: pyattach_lldb is in its session.
_PREFIX = "pyattach_lldb.pyattach_lldb_bt."
PYTHON_HOOK = "{${script.frame:%spython_frame}}" % _PREFIX
USUAL_HOOK = "${script.frame:%susual}" % _PREFIX

# Python frames' lines, under their eval loop frame's.
INDENT = "        "

_state = {"usual": True}
# (process, stop id, thread id) -> _Plan of the last stop.
_plans = {}
# [target, provider id] of each target given pyattach_lldb_frames'
# provider.
_providers = []


def register(walker, thread_state, frames=None):
    """walker(target, process) gives a Walker with a fresh budget,
    thread_state(w, thread, process[, frame0]) a thread's state or None;
    frames is the module pyattach_lldb_frames, None where lldb lacks
    what it imports."""
    _state["walker"] = walker
    _state["thread_state"] = thread_state
    _state["frames"] = frames if frames is not None and frames.supported() else None


def with_python_frames(fmt):
    """fmt (a frame-format as lldb shows it: in double quotes, escaped)
    with the hooks put in after ${frame.pc}, or None when it has no
    ${frame.pc} or no ending newline, or has them already."""
    q = '"' if len(fmt) >= 2 and fmt[0] == fmt[-1] == '"' else ""
    body = fmt[1:-1] if q else fmt
    pc = "${frame.pc}"
    i = body.find(pc)
    if i < 0 or not body.endswith("\\n") or _PREFIX in body:
        return None
    j = i + len(pc)
    if body.startswith("${ansi.normal}", j):
        j += len("${ansi.normal}")
    return q + body[:j] + PYTHON_HOOK + _usual_scopes(body[j:-2]) + "\\n" + q


def _usual_scopes(rest):
    """rest (what follows the pc in a format) in scopes around USUAL_HOOK.
    Where the pc sits inside a scope of the format (lldb 20+'s default:
    "{${ansi.fg.cyan}${frame.pc}${ansi.normal} }..."), rest closes it:
    each part of rest between such closing braces gets its own scope,
    so that every scope stays balanced."""
    out, part, depth, k = "", "", 0, 0
    while k < len(rest):
        c = rest[k]
        if c == "\\" and k + 1 < len(rest):
            part += rest[k:k + 2]
            k += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                if part:
                    out += "{" + USUAL_HOOK + part + "}"
                out += c
                part = ""
                k += 1
                continue
            depth -= 1
        part += c
        k += 1
    if part:
        out += "{" + USUAL_HOOK + part + "}"
    return out


def _format(debugger):
    vals = debugger.GetInternalVariableValue("frame-format", debugger.GetInstanceName())
    if vals is None or vals.GetSize() != 1:
        return None
    return vals.GetStringAtIndex(0)


def _provided(target):
    """The entry of _providers for target, or None."""
    for p in _providers:
        if p[0] == target:
            return p
    return None


def _add_providers(debugger):
    """Registers pyattach_lldb_frames' provider in each of debugger's
    targets that has none (lldb 22+); True when every target has it
    (and there is one)."""
    frames = _state.get("frames")
    if frames is None:
        return False
    ok = True
    for i in range(debugger.GetNumTargets()):
        target = debugger.GetTargetAtIndex(i)
        if not target.IsValid() or _provided(target) is not None:
            continue
        pid = frames.register(target)
        if pid:
            _providers.append([target, pid])
        else:
            ok = False
    return ok and bool(_providers)


def _remove_providers(debugger):
    for target, pid in list(_providers):
        if target.IsValid():
            target.RemoveScriptedFrameProvider(pid)
    del _providers[:]


def install(debugger):
    """Puts the frame provider in each of debugger's targets where lldb
    has them (True when each has it), else the hooks in its
    frame-format (True when it has them). Not both: lldb 22 prints stop
    reports from its event thread while a command runs, and a hook
    reading frames there waits for the command's thread, which waits
    for that frame list (seen). Nothing after "pyattach-bt-filter off",
    until "on" (pyattach's DAP proxy turns them off before the script
    that runs once the target exists)."""
    if _state.get("off"):
        return False
    if _state.get("frames") is not None:
        return _add_providers(debugger)
    fmt = _format(debugger)
    if fmt is None:
        return False
    if _PREFIX in fmt:
        return True
    new = with_python_frames(fmt)
    if new is None:
        return False
    _state["saved"] = fmt
    debugger.SetInternalVariable("frame-format", new, debugger.GetInstanceName())
    return _PREFIX in (_format(debugger) or "")


def uninstall(debugger):
    """Puts back the frame-format install() found and removes the frame
    providers it registered."""
    _remove_providers(debugger)
    fmt = _format(debugger)
    if fmt is None or _PREFIX not in fmt:
        return
    saved = _state.get("saved")
    if saved is not None:
        debugger.SetInternalVariable("frame-format", saved, debugger.GetInstanceName())
    else:
        debugger.HandleCommand("settings clear frame-format")


def command(debugger, args):
    """pyattach-bt-filter [on|off]: the message to print, or raises
    ValueError with the usage."""
    a = args.strip()
    if a == "on":
        _state["off"] = False
        if not install(debugger) and not _providers:
            if _state.get("frames") is not None:
                return "pyattach: no target has the frame provider (create the target first); bt shows no Python frames"
            return "pyattach: this frame-format has no ${frame.pc}; bt shows no Python frames"
    elif a == "off":
        _state["off"] = True
        uninstall(debugger)
    elif a:
        raise ValueError("usage: pyattach-bt-filter [on|off]")
    if _providers:
        return "Python frames in bt: on, as frames of their own (lldb's frame provider)."
    on = _PREFIX in (_format(debugger) or "")
    return "Python frames in bt: %s." % ("on" if on else "off")


def __getattr__(name):
    # usual exists while the frame being printed keeps lldb's look.
    if name == "usual" and _state["usual"]:
        return _usual
    raise AttributeError(name)


def _usual(frame, internal_dict):
    return ""


def python_frame(frame, internal_dict):
    """What the frame-format prints after a frame's pc: see the module's
    doc. Never raises (lldb would print the traceback)."""
    _state["usual"] = True
    try:
        if _providers and _provided(frame.GetThread().GetProcess().GetTarget()) is not None:
            # The frame provider shows the Python frames.
            return ""
        kind, pys = _plan(frame).kind(frame.GetFrameID())
    except Exception:
        return ""
    if kind is None:
        return ""
    _state["usual"] = False
    out = " " + _terse(frame, kind)
    for fr in pys:
        line = "" if fr.lineno is None else ":%d" % fr.lineno
        out += "\n%s[Python] %s () at %s%s" % (
            INDENT, walk.escape(fr.qualname or fr.name or "???"), walk.escape(fr.filename or "???"), line)
    return out


def _terse(frame, kind):
    """module`function of a frame, escaped (names come from the target):
    an eval loop frame's concrete function, else the frame's own
    (inlined or not)."""
    mod = frame.GetModule().GetFileSpec().GetFilename() or "???"
    if kind == "eval":
        return "%s`%s" % (walk.escape(mod), walk.escape(_concrete_name(frame) or "???"))
    out = "%s`%s" % (walk.escape(mod), walk.escape(frame.GetFunctionName() or "???"))
    if frame.IsInlined():
        out += " [inlined]"
    return out


def _concrete_name(frame):
    """The name of the function whose code frame runs (the one functions
    inlined at its pc are inlined into): from the debug information, else
    the symbol table (the dynamic one of a stripped build)."""
    fn = frame.GetFunction()
    if fn.IsValid() and fn.GetName():
        return fn.GetName()
    sym = frame.GetSymbol()
    return sym.GetName() if sym.IsValid() else None


def is_eval_loop_call(frame, caller):
    """Whether frame is a call of the eval loop: its concrete function is
    the eval loop and it is the last of that call's frames (lldb lists
    the functions inlined at a pc as frames of their own, with the same
    CFA, before the function they are inlined into; and it sometimes
    leaves out the concrete frame after them)."""
    if not walk.is_eval_loop(_concrete_name(frame)):
        return False
    return not caller.IsValid() or caller.GetCFA() != frame.GetCFA()


def _plan(frame):
    """The thread's _Plan at this stop. Raises LookupError while lldb's
    API cannot read the thread (in a stop report, lldb still holds the
    process's run lock: frames then keep lldb's look)."""
    thread = frame.GetThread()
    process = thread.GetProcess()
    if thread.GetNumFrames() == 0:
        raise LookupError("the thread's frames cannot be read now")
    key = (process.GetUniqueID(), process.GetProcessID(), process.GetStopID(), thread.GetThreadID())
    p = _plans.get(key)
    if p is None:
        if not any(k[:3] == key[:3] for k in _plans):
            _plans.clear()
        p = _plans[key] = _Plan(thread, process)
    return p


class _Plan(object):
    """What each frame of one thread at one stop is: (None, None) for a
    frame that keeps lldb's look, ("helper", None) for the interpreter's
    calling machinery, ("eval", Python frames) for an eval loop frame
    matched to its Python frames (walk.StackMerger). Frames are looked
    at innermost first, as far as asked."""

    def __init__(self, thread, process):
        self.thread = thread
        self.process = process
        self.kinds = {}
        self.next = 0
        self.merger = walk.StackMerger(self._groups)

    def kind(self, index):
        while self.next <= index:
            i = self.next
            self.next += 1
            f = self.thread.GetFrameAtIndex(i)
            kind, pys = self.merger.frame(f.GetFunctionName() or "", is_eval_loop_call(f, self.thread.GetFrameAtIndex(i + 1)))
            if kind == "helper" or pys:
                self.kinds[i] = (kind, pys or [])
        return self.kinds.get(index, (None, None))

    def _groups(self):
        try:
            w = _state["walker"](self.process.GetTarget(), self.process)
            t = _state["thread_state"](w, self.thread, self.process)
            if t is not None:
                return walk.eval_groups(w.thread_frames(t, max_frames=0))
        except walk.WalkError:
            pass
        return []
