"""Python frames as lldb's own frames, through lldb 22's scripted frame
providers (`target frame-provider register`).

Where the lldb in use has them (supported()), register(target) gives
every thread of the target a PythonFrames provider: lldb's frames of a
thread (bt, frame select, up/down, lldb-dap's stackTrace) are then its
C frames with each eval loop frame replaced by the Python frames it
runs, innermost first (several per eval loop frame on 3.11+), each a
frame of its own with its function, file and line. The interpreter's
calling machinery and every other C frame are lldb's own frames, as
lldb unwound them. Which eval loop frame runs which Python frames is
pyattach_walk_native.StackMerger's matching (as the frame-format of
pyattach_lldb_bt does for older lldb); an eval loop frame with no group
of Python frames left, or one whose Python frames cannot be read,
stays as it is.

This module imports lldb 22's plugin base classes: import it only where
supported() (pyattach_lldb_bt does)."""

import lldb
from lldb.plugins.scripted_frame_provider import ScriptedFrameProvider
from lldb.plugins.scripted_process import ScriptedFrame

import pyattach_lldb_bt as bt
import pyattach_walk as walk

# How lldb finds the provider: pyattach_lldb is in its session.
CLASS = "pyattach_lldb.pyattach_lldb_frames.PythonFrames"

# Providers being worked out now, on this thread of lldb's: a provider's
# walk must not ask lldb for another thread's frames while one is being
# worked out (that thread's provider would walk again, and ask back).
_busy = [0]


def supported():
    """Whether this lldb has scripted frame providers."""
    return hasattr(lldb.SBTarget, "RegisterScriptedFrameProvider") and hasattr(lldb, "SBFrameList")


class PythonFrames(ScriptedFrameProvider):
    """One thread's frames at one stop: see the module's doc."""

    @staticmethod
    def get_description():
        return "pyattach: the Python frames each _PyEval_EvalFrameDefault frame runs, in its place"

    def __init__(self, input_frames, args):
        super().__init__(input_frames, args)
        # What each of this provider's frames is: an input frame's index,
        # or (input index of its eval loop frame, walker Frame).
        self._out = []
        self._next = 0
        self._done = False
        self._merger = walk.StackMerger(self._groups)

    def get_frame_at_index(self, index):
        while len(self._out) <= index and not self._done:
            self._more()
        if index >= len(self._out):
            return None
        item = self._out[index]
        if isinstance(item, int):
            return item
        return PythonFrame(self.thread, index, self.input_frames.GetFrameAtIndex(item[0]), item[1])

    def _input(self, i):
        if self.input_frames is None:
            return None
        f = self.input_frames.GetFrameAtIndex(i)
        return f if f.IsValid() else None

    def _more(self):
        """Looks at the next input frame."""
        i = self._next
        f = self._input(i)
        if f is None:
            self._done = True
            return
        self._next += 1
        try:
            caller = self._input(i + 1)
            kind, pys = self._merger.frame(f.GetFunctionName() or "", bt.is_eval_loop_call(f, caller))
        except Exception:
            kind, pys = None, None
        if kind == "eval" and pys:
            self._out.extend((i, fr) for fr in pys)
        else:
            self._out.append(i)

    def _groups(self):
        """The thread's Python frames split by eval loop call (walk.eval_groups),
        [] when they cannot be read."""
        thread, process = self.thread, self.process
        if thread is None or process is None:
            return []
        own = thread.GetThreadID()
        outer = _busy[0] == 0

        def frame0(th):
            # This thread's registers from its input frames; another's
            # only from the outermost provider (see _busy).
            if th.GetThreadID() == own:
                return self._input(0)
            return th.GetFrameAtIndex(0) if outer else None

        _busy[0] += 1
        try:
            w = bt._state["walker"](process.GetTarget(), process)
            t = bt._state["thread_state"](w, thread, process, frame0)
            if t is not None:
                return walk.eval_groups(w.thread_frames(t, max_frames=0))
        except Exception:
            # walk.WalkError, or lldb's API failing: lldb's frames as they are.
            pass
        finally:
            _busy[0] -= 1
        return []


class PythonFrame(ScriptedFrame):
    """One Python frame in lldb's frames: the function (qualified name),
    file and line the walker read, at the pc of the eval loop frame
    that runs it. Names from the target are escaped (lldb prints them
    as they are)."""

    def __init__(self, thread, index, eval_frame, fr):
        # Not ScriptedFrame.__init__: it is for a scripted process's
        # threads; this frame has no registers of its own.
        self.thread = thread
        self.idx = index
        self.pc = fr.addr or lldb.LLDB_INVALID_ADDRESS
        self.name = walk.escape(fr.qualname or fr.name or "???")
        self.sym_ctx = lldb.SBSymbolContext()
        if eval_frame is not None:
            self.sym_ctx.SetModule(eval_frame.GetModule())
        if fr.filename:
            line = lldb.SBLineEntry()
            line.SetFileSpec(lldb.SBFileSpec(walk.escape(fr.filename), False))
            if fr.lineno:
                line.SetLine(fr.lineno)
            self.sym_ctx.SetLineEntry(line)

    def get_id(self):
        return self.idx

    def get_pc(self):
        return self.pc

    def get_symbol_context(self):
        return self.sym_ctx

    def get_function_name(self):
        return self.name

    def get_display_function_name(self):
        return self.name

    def is_inlined(self):
        return False

    def is_artificial(self):
        return False

    def is_hidden(self):
        return False

    def get_register_info(self):
        return None

    def get_register_context(self):
        return None

    def get_variables(self, filters):
        return None


def register(target):
    """Registers PythonFrames for every thread of target; returns its id
    (0 when lldb refused it)."""
    err = lldb.SBError()
    data = lldb.SBStructuredData()
    data.SetFromJSON("{}")
    pid = target.RegisterScriptedFrameProvider(CLASS, data, err)
    return pid if err.Success() else 0
