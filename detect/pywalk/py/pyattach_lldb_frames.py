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
    """One thread's frames at one stop: see the module's doc.

    lldb 22 asks a provider for a thread's frames holding that thread's
    frame list, and the provider's calls into lldb's API wait for the
    target's API mutex: when another of lldb's threads holds that mutex
    and waits for this frame list (a command listing frames while lldb's
    event thread prints a stop report, right after the provider is
    registered), the two would wait for each other (seen), and an index
    of lldb's own frames returned there makes lldb 22.1 abort
    ("Resource deadlock avoided", seen). So a provider calls lldb's API
    only while it holds the API mutex, taken with try_lock; when it
    cannot, it raises: that listing of the thread's frames stops there,
    and the next listing asks again (seen: one bt cut short right after
    the attach, the next one whole)."""

    @staticmethod
    def get_description():
        return "pyattach: the Python frames each _PyEval_EvalFrameDefault frame runs, in its place"

    def __init__(self, input_frames, args):
        # Not ScriptedFrameProvider.__init__: it calls lldb's API (see
        # the class's doc); the thread and its process are read later.
        self.input_frames = input_frames
        self.args = args
        self.thread = None
        self.process = None
        self._mutex = _mutex_of(args)
        # This provider's frames: an input frame's index, or a
        # PythonFrame.
        self._out = []
        # The next input frame to look at, and input frames given as
        # they are without the merger seeing them (see get_frame_at_index).
        self._next = 0
        self._unseen = []
        self._done = False
        self._merger = walk.StackMerger(self._groups)

    def get_frame_at_index(self, index):
        if index < len(self._out):
            return self._out[index]
        if self._done:
            return None
        m = self._mutex
        if m is None or not m.try_lock():
            # No frame now: lldb lists this thread's frames again later.
            raise RuntimeError("pyattach: the target's API is busy in another thread of lldb")
        try:
            if self.thread is None:
                self.thread = self.input_frames.GetThread()
                self.process = self.thread.GetProcess()
            while len(self._out) <= index and not self._done:
                self._more()
        except Exception:
            self._done = True
        finally:
            m.unlock()
        return self._out[index] if index < len(self._out) else None

    def _input(self, i):
        f = self.input_frames.GetFrameAtIndex(i)
        return f if f.IsValid() else None

    def _see(self, i):
        """What the merger makes of input frame i (which exists)."""
        try:
            f = self._input(i)
            return self._merger.frame(f.GetFunctionName() or "", bt.is_eval_loop_call(f, self._input(i + 1)))
        except Exception:
            return None, None

    def _more(self):
        """Looks at the next input frame."""
        while self._unseen:
            # Given as they are: the merger takes their Python frames.
            self._see(self._unseen.pop(0))
        i = self._next
        f = self._input(i)
        if f is None:
            self._done = True
            return
        self._next += 1
        kind, pys = self._see(i)
        if kind == "eval" and pys:
            for fr in pys:
                self._out.append(PythonFrame(self.thread, len(self._out), f, fr))
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
    file and line the walker read; its pc is the address of the frame
    the walker read (in no function: lldb would name the function of
    the eval loop's code), its module the eval loop frame's (lldb keeps
    the line of a frame with a module). Names from the target are
    escaped (lldb prints them as they are)."""

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


# The targets given a provider, by the number its arguments name.
_targets = {}


def _mutex_of(args):
    """The API mutex of the target args names (register), or None."""
    try:
        n = args.GetValueForKey("target").GetIntegerValue(0)
    except Exception:
        return None
    t = _targets.get(n)
    return t.GetAPIMutex() if t is not None else None


def register(target):
    """Registers PythonFrames for every thread of target; returns its id
    (0 when lldb refused it)."""
    n = len(_targets) + 1
    _targets[n] = target
    err = lldb.SBError()
    data = lldb.SBStructuredData()
    data.SetFromJSON('{"target": %d}' % n)
    pid = target.RegisterScriptedFrameProvider(CLASS, data, err)
    return pid if err.Success() else 0
