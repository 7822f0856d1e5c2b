"""asyncio tasks: every Task of the interpreters the walker reads, each
task's coroutine stack (the task's coroutine, then what it awaits, down
the chain), the task or future it waits on, the tasks that await it, and
the cycles of that graph.

3.14 on: the _asyncio module writes _Py_AsyncioModuleDebugOffsets into
its own section (.AsyncioDebug, in the _asyncio extension module or in
the executable when the module is built in): where a Task keeps its
name, coroutine, awaited_by and its node in the task lists, and where
each thread state and interpreter keeps the head of its list. The
adapter finds the section's address (the debugger's sections, or
pyattach from the ELF file) and passes it to tasks().

Before 3.14 the list comes from pyattach_walk_tasks_legacy
(legacy_task_addrs) and the offsets from the tables, under the same
layout names."""

import struct

from pyattach_walk_frames import FrameList, executable_mask, stackref_mask
from pyattach_walk_memory import Block, BudgetExhausted, WalkError
from pyattach_walk_tasks_legacy import legacy_task_addrs
from pyattach_walk_text import escape, thousands

# How many tasks one walk reports by default (the rest are counted).
MAX_TASKS = 1000
# How many tasks a list is followed for, at most (a bigger count is
# reported as "at least").
MAX_LISTED = 1000000
# How deep a coroutine chain (one coroutine awaiting the next) is read.
MAX_CHAIN = 64

# _Py_AsyncioModuleDebugOffsets: 13 uint64_t, in this order (3.14, 3.15).
ASYNCIO_DEBUG_MEMBERS = (
    "asyncio_task_object.size", "asyncio_task_object.task_name", "asyncio_task_object.task_awaited_by",
    "asyncio_task_object.task_is_task", "asyncio_task_object.task_awaited_by_is_set",
    "asyncio_task_object.task_coro", "asyncio_task_object.task_node",
    "asyncio_interpreter_state.size", "asyncio_interpreter_state.asyncio_tasks_head",
    "asyncio_thread_state.size", "asyncio_thread_state.asyncio_running_loop",
    "asyncio_thread_state.asyncio_running_task", "asyncio_thread_state.asyncio_tasks_head",
)

# Layout names of the members, shared with the tables of 3.11-3.13.
ASYNCIO_DEBUG_FIELDS = {
    "asyncio_task_object.task_name": "TaskObj.task_name",
    "asyncio_task_object.task_awaited_by": "FutureObj.fut_awaited_by",
    "asyncio_task_object.task_is_task": "FutureObj.fut_is_task",
    "asyncio_task_object.task_awaited_by_is_set": "FutureObj.fut_awaited_by_is_set",
    "asyncio_task_object.task_coro": "TaskObj.task_coro",
    "asyncio_task_object.task_node": "TaskObj.task_node",
    "asyncio_interpreter_state.asyncio_tasks_head": "PyInterpreterState.asyncio_tasks_head",
    "asyncio_thread_state.asyncio_running_task": "_PyThreadStateImpl.asyncio_running_task",
    "asyncio_thread_state.asyncio_tasks_head": "_PyThreadStateImpl.asyncio_tasks_head",
}

# What the section does not carry, the same in 3.14 and 3.15 (checked
# against the DWARF of Debian's builds): fut_state (an int) follows
# fut_awaited_by, task_fut_waiter comes right before task_coro.
ASYNCIO_DERIVED = {
    "FutureObj.fut_state": ("FutureObj.fut_awaited_by", 8),
    "TaskObj.task_fut_waiter": ("TaskObj.task_coro", -8),
}



def frame_states(minor, fields=None):
    """(suspended states, executing state) of _PyInterpreterFrame's
    owner generator (PyGenObject.gi_frame_state) in a minor version:
    the layout's enum constants (fields, its "PyFrameState.FRAME_*"
    keys) where it has them, else the values each minor is known to
    use."""
    fields = fields or {}
    if "PyFrameState.FRAME_EXECUTING" in fields and "PyFrameState.FRAME_SUSPENDED" in fields:
        suspended = tuple(sorted(v for k, v in fields.items() if k.startswith("PyFrameState.FRAME_SUSPENDED")))
        return suspended, fields["PyFrameState.FRAME_EXECUTING"]
    if minor >= (3, 15):
        return (1, 2, 3), 4
    if minor >= (3, 13):
        return (-2, -1), 0
    return (-1,), 0


def asyncio_debug_fields(read, addr):
    """Layout fields from the _Py_AsyncioModuleDebugOffsets at addr, or
    None when the memory there does not look like it (a TaskObj's size
    that no build has, offsets outside it)."""
    try:
        raw = bytes(read(addr, 8 * len(ASYNCIO_DEBUG_MEMBERS)))
    except Exception:
        return None
    if len(raw) != 8 * len(ASYNCIO_DEBUG_MEMBERS):
        return None
    d = dict(zip(ASYNCIO_DEBUG_MEMBERS, struct.unpack("<%dQ" % len(ASYNCIO_DEBUG_MEMBERS), raw)))
    size = d["asyncio_task_object.size"]
    if not 32 <= size <= 4096:
        return None
    for m in ("task_name", "task_awaited_by", "task_is_task", "task_awaited_by_is_set", "task_coro", "task_node"):
        if not 16 <= d["asyncio_task_object." + m] < size:
            return None
    for m, limit in (("asyncio_interpreter_state.asyncio_tasks_head", "asyncio_interpreter_state.size"),
                     ("asyncio_thread_state.asyncio_running_task", "asyncio_thread_state.size"),
                     ("asyncio_thread_state.asyncio_tasks_head", "asyncio_thread_state.size")):
        if not d[m] < d[limit] < 1 << 24:
            return None
    fields = dict((name, d[m]) for m, name in ASYNCIO_DEBUG_FIELDS.items())
    for name, (base, delta) in ASYNCIO_DERIVED.items():
        fields[name] = fields[base] + delta
    return fields


class Task(object):
    """One asyncio task: its address (id), name, state, coroutine frames
    (innermost first, a FrameList), what it waits on (awaiting: an
    address, awaiting_type the waiter's type name) and the tasks that
    await it (awaited_by), the thread running it (running_tid) and
    error when part of it could not be read."""

    __slots__ = ("id", "name", "state", "frames", "awaiting", "awaiting_type", "awaited_by", "running", "error")

    def __init__(self, addr):
        self.id = addr
        self.name = None
        self.state = None
        self.frames = FrameList()
        self.awaiting = None
        self.awaiting_type = None
        self.awaited_by = []
        self.running = None
        self.error = None

    def as_dict(self, tid_of=None):
        d = {"id": self.id, "name": self.name, "state": self.state,
             "frames": [{"function": f.name, "file": f.filename, "line": f.lineno} for f in self.frames],
             "awaiting": self.awaiting, "awaited_by": list(self.awaited_by)}
        if self.awaiting is not None and self.awaiting_type:
            d["awaiting_type"] = self.awaiting_type
        if self.running is not None:
            d["running_in_thread"] = thread_id(self.running, tid_of)
        if self.error:
            d["error"] = self.error
        return d


def thread_id(th, tid_of=None):
    """How a thread state's thread is named: the debugger's id of its OS
    thread (tid_of maps thread state addresses to it), else the id
    CPython recorded."""
    if tid_of and th.tstate in tid_of:
        return tid_of[th.tstate]
    return th.native_id or th.thread_id


class TaskList(list):
    """The tasks read, in list order: total is how many were found (more
    than len when capped), error why none could be listed, cycles the
    await cycles (lists of task ids)."""

    total = 0
    error = None
    cycles = ()


class Tasks(object):
    """Reads asyncio tasks (see the module's doc) through mem (a
    pyattach_walk_memory.Memory) with layout (the Layout, to which
    asyncio_layout adds the offsets of 3.14+), readers (Readers: tasks,
    futures, code), frame_reader (FrameReader: a generator's frame as a
    Frame) and ptr_size; stacks gives the threads and their frames:
    interpreters(), threads(), frames(tstate, max_frames) and cuts (a
    pyattach_walk_runtime.Runtime)."""

    def __init__(self, mem, layout, readers, frame_reader, stacks, ptr_size=8):
        self.mem = mem
        self.L = layout
        self.readers = readers
        self.frame_reader = frame_reader
        self.stacks = stacks
        self.ptr = ptr_size

    def interpreters(self):
        """The interpreters' addresses (stacks.interpreters), for
        legacy_task_addrs."""
        return self.stacks.interpreters()

    def asyncio_layout(self, debug_addr):
        """Adds the asyncio offsets to self.L: from the
        _Py_AsyncioModuleDebugOffsets at debug_addr (3.14+). Returns
        None, or why the tasks cannot be found."""
        L = self.L
        if L.minor < (3, 14):
            return None
        if not debug_addr:
            return ("Python %s: the _asyncio module's debug offsets (section .AsyncioDebug) were not found: "
                    "asyncio is not imported, or its module is not loaded" % L.version)
        fields = asyncio_debug_fields(lambda a, n: self.mem.read(a, n), debug_addr)
        if fields is None:
            return "Python %s: no asyncio debug offsets at 0x%x" % (L.version, debug_addr)
        L.f.update(fields)
        return None

    def task_addrs(self, limit, debug_addr=None):
        """(addresses of at most limit tasks, how many there are, error)."""
        L = self.L
        if L.minor < (3, 14):
            return legacy_task_addrs(self, limit)
        why = self.asyncio_layout(debug_addr)
        if why:
            return [], 0, why
        node_off = L.off("TaskObj.task_node")
        next_off = L.off("llist_node.next") if L.has("llist_node.next") else 0
        heads = []
        for interp in self.stacks.interpreters():
            heads.append(interp + L.off("PyInterpreterState.asyncio_tasks_head"))
        for th in self.stacks.threads():
            heads.append(th.tstate + L.off("_PyThreadStateImpl.asyncio_tasks_head"))
        out, seen, total = [], set(), 0
        for head in heads:
            try:
                node = self.mem.ptrv(head + next_off)
                n = 0
                while node and node != head and n < MAX_LISTED:
                    n += 1
                    # The node is read before its task is taken: a
                    # pointer into unreadable memory ends the list.
                    nxt = self.mem.ptrv(node + next_off)
                    task = node - node_off
                    if task in seen or task <= 0:
                        break
                    seen.add(task)
                    total += 1
                    if len(out) < limit:
                        out.append(task)
                    node = nxt
            except BudgetExhausted:
                raise
            except WalkError as e:
                self.stacks.cuts.append("task list at 0x%x not read to its end: %s" % (head, e))
        return out, total, None

    def tasks(self, debug_addr=None, limit=MAX_TASKS):
        """Every task (at most limit, total the count) as a TaskList of
        Task values, their await edges and cycles."""
        out = TaskList()
        try:
            addrs, total, error = self.task_addrs(limit, debug_addr)
        except BudgetExhausted:
            addrs, total, error = [], 0, None
        except WalkError as e:
            addrs, total, error = [], 0, "tasks not listed: %s" % e
        out.total, out.error = total, error
        running = self._running_tasks()
        for a in addrs:
            if self.mem.budget.exhausted:
                break
            t = Task(a)
            try:
                self._read_task(t, running)
            except BudgetExhausted:
                t.error = "not read: the walk stopped"
            except WalkError as e:
                t.error = str(e)
            out.append(t)
        # awaited_by is what the interpreter records; the edges a task's
        # own fut_waiter shows are added where it is a task.
        by_id = dict((t.id, t) for t in out)
        for t in out:
            if t.awaiting in by_id and t.id not in by_id[t.awaiting].awaited_by:
                by_id[t.awaiting].awaited_by.append(t.id)
        out.cycles = find_cycles(out)
        return out

    def _running_tasks(self):
        """{task address: Thread} of the tasks thread states run now
        (3.14+). Before 3.14 no thread state names its task: the
        RunningByFrame returned finds the thread of a task whose
        coroutine is executing by its frame, on that thread's stack."""
        out = {}
        L = self.L
        if not L.has("_PyThreadStateImpl.asyncio_running_task"):
            return RunningByFrame(self.stacks)
        for th in self.stacks.threads():
            try:
                t = self.mem.ptrv(th.tstate + L.off("_PyThreadStateImpl.asyncio_running_task"))
            except WalkError:
                continue
            if t:
                out[t] = th
        return out

    def _read_task(self, t, running):
        tasks = self.readers.tasks
        f = tasks.read(t.id)
        t.name = tasks.name(f.name)
        t.state = f.state
        th = running.get(t.id)
        t.frames = self.coro_frames(f.coro, th, getattr(running, "thread_of_frame", None))
        t.running = th or t.frames.thread
        if f.waiter:
            t.awaiting = f.waiter
            try:
                t.awaiting_type = tasks.type_of(f.waiter)[0]
            except WalkError:
                pass
        t.awaited_by = self.readers.futures.awaiters(t.id, f.block)

    def task_type(self, addr):
        """(type name, static) of the object at addr (TaskReader.type_of)."""
        return self.readers.tasks.type_of(addr)

    def _block_reader(self, base, block):
        """(ptr(addr), byte(addr)) reading from block, the memory at base
        read already, and from the target beyond it."""
        b = Block(self.mem, base, block, self.ptr)
        return b.ptr, b.byte

    def _gen_span(self):
        """How many bytes from a generator's gi_frame_state hold it and
        the fields of its frame read here."""
        L = self.L
        last = 0
        for k in ("_PyInterpreterFrame.f_code", "_PyInterpreterFrame.f_executable", "_PyInterpreterFrame.prev_instr",
                  "_PyInterpreterFrame.instr_ptr", "_PyInterpreterFrame.stackpointer", "_PyInterpreterFrame.stacktop"):
            if L.has(k):
                last = max(last, L.off(k) + self.ptr)
        start = L.off("PyGenObject.gi_frame_state")
        end = L.off("PyGenObject.gi_iframe") + last
        if end <= start or end - start > 1024:
            return 1
        return end - start

    def coro_frames(self, coro, thread=None, thread_of_frame=None):
        """The coroutine stack of a task, innermost first: coro's frame,
        then the coroutine it awaits (the target of its yield-from,
        on top of its suspended frame's stack), and so on. A coroutine
        that is running (its task runs on thread, or on the thread
        thread_of_frame(its frame) finds, kept as the list's thread) has
        its frames on that thread's stack: those down to its own frame."""
        L = self.L
        out = FrameList()
        out.thread = None
        if not coro or not L.has("PyGenObject.gi_iframe"):
            return out
        suspended, executing = frame_states(L.minor, L.f)
        gi_frame = L.off("PyGenObject.gi_iframe")
        gi_state = L.off("PyGenObject.gi_frame_state")
        span = self._gen_span()
        chain = []
        seen = set()
        g = coro
        try:
            while g and g not in seen and len(chain) < MAX_CHAIN:
                seen.add(g)
                # The state and the frame's fields in one read.
                block = self.mem.read(g + gi_state, span)
                ptr, _ = self._block_reader(g + gi_state, block)
                state = struct.unpack("<b", block[:1])[0]
                frame = g + gi_frame
                if state == executing and thread is None and thread_of_frame is not None and not chain:
                    thread = thread_of_frame(frame)
                if state == executing and thread is not None:
                    own = self._frames_down_to(thread, frame)
                    if own is not None:
                        if not chain:
                            out.thread = thread
                        chain.append(own)
                        break
                if state not in suspended and state != executing:
                    break
                fr = self.gen_frame(frame, ptr)
                if fr is None:
                    break
                chain.append([fr])
                if state not in suspended:
                    break
                g = self.awaited_coro(frame, ptr)
        except BudgetExhausted:
            out.partial = True
        except WalkError as e:
            out.partial, out.error = True, str(e)
        for part in reversed(chain):
            out.extend(part)
        return out

    def _frames_down_to(self, thread, frame):
        """The thread's Python frames, innermost first, down to frame (its
        address), or None when frame is not among them."""
        try:
            fl = self.stacks.frames(thread.tstate, 0)
        except WalkError:
            return None
        for i, fr in enumerate(fl):
            if fr.addr == frame:
                return list(fl[:i + 1])
        return None

    def gen_frame(self, f, ptr=None):
        """The Frame of a generator's embedded _PyInterpreterFrame at f,
        None when it holds no code (ptr reads pointers, self.mem.ptrv
        when None)."""
        L = self.L
        ptr = ptr or self.mem.ptrv
        code_field = "_PyInterpreterFrame.f_code" if L.has("_PyInterpreterFrame.f_code") else "_PyInterpreterFrame.f_executable"
        instr_field = "_PyInterpreterFrame.prev_instr" if L.has("_PyInterpreterFrame.prev_instr") else "_PyInterpreterFrame.instr_ptr"
        code = ptr(f + L.off(code_field)) & executable_mask(L.minor)
        if not code:
            return None
        c = self.readers.code.read(code)
        instr = ptr(f + L.off(instr_field))
        index = (instr - self.frame_reader.bytecode_start(f, code, c)) // 2
        if index < 0 or index > 1 << 24:
            index = 0
        return self.frame_reader._frame_of((f, code, index, False))

    def awaited_coro(self, f, ptr=None):
        """What the suspended frame at f awaits when it is a coroutine or
        generator (the object on top of its stack), else 0."""
        L = self.L
        ptr = ptr or self.mem.ptrv
        if L.has("_PyInterpreterFrame.stackpointer"):
            sp = ptr(f + L.off("_PyInterpreterFrame.stackpointer"))
            base = f + L.off("_PyInterpreterFrame.localsplus")
            if not sp or sp <= base or sp - base > 1 << 20:
                return 0
            top = self.mem.ptrv(sp - self.ptr) & stackref_mask(L.minor)
            if not top and sp - 2 * self.ptr >= base:
                # 3.15 keeps a null reference on top of the awaited
                # object while suspended in an await.
                top = self.mem.ptrv(sp - 2 * self.ptr) & stackref_mask(L.minor)
        elif L.has("_PyInterpreterFrame.stacktop"):
            n = self.mem.i32(f + L.off("_PyInterpreterFrame.stacktop"))
            if n <= 0 or n > 1 << 16:
                return 0
            top = self.mem.ptrv(f + L.off("_PyInterpreterFrame.localsplus") + self.ptr * (n - 1))
        else:
            return 0
        if not top:
            return 0
        name, static = self.task_type(top)
        if static and name in ("coroutine", "generator", "async_generator", "coroutine_wrapper"):
            if name == "coroutine_wrapper":
                return 0
            return top
        return 0


class RunningByFrame(dict):
    """No task is known to run (before 3.14); thread_of_frame(addr) is
    the thread whose stack holds the frame at addr, None if none: every
    thread's frames are read once, at the first question (stacks:
    threads() and frames(), a Runtime)."""

    def __init__(self, stacks):
        dict.__init__(self)
        self._stacks = stacks
        self._threads = None

    def thread_of_frame(self, addr):
        if self._threads is None:
            self._threads = {}
            w = self._stacks
            try:
                threads = w.threads()
            except WalkError:
                threads = []
            for th in threads:
                try:
                    for fr in w.frames(th.tstate, 0):
                        self._threads.setdefault(fr.addr, th)
                except WalkError:
                    continue
        return self._threads.get(addr)


def find_cycles(tasks):
    """The cycles of the await graph (a task awaits the task it waits on),
    each once, as lists of task ids in await order."""
    by_id = dict((t.id, t) for t in tasks)
    nxt = {}
    for t in tasks:
        if t.awaiting in by_id:
            nxt[t.id] = t.awaiting
    cycles, done = [], set()
    for start in nxt:
        path, where = [], {}
        n = start
        while n in nxt and n not in done and n not in where:
            where[n] = len(path)
            path.append(n)
            n = nxt[n]
        if n in where:
            cyc = path[where[n]:]
            i = cyc.index(min(cyc))
            cycles.append(cyc[i:] + cyc[:i])
        done.update(path)
    return cycles


def tasks_json(tl, tid_of=None):
    """The JSON value of a TaskList: {"tasks": [...], "tasks_total",
    "task_cycles", "tasks_error"}."""
    out = {"tasks": [t.as_dict(tid_of) for t in tl], "tasks_total": tl.total,
           "task_cycles": [list(c) for c in tl.cycles]}
    if tl.error:
        out["tasks_error"] = tl.error
    return out


def running_tasks(tl):
    """{thread state address: Task} of the tasks a thread runs now."""
    return dict((t.running.tstate, t) for t in tl if t.running is not None)


def _label(t):
    return "%s (0x%x)" % (escape(t.name if t.name is not None else "?"), t.id)


def format_tasks(tl, files=None, with_source=True, source_line=None, tid_of=None):
    """A TaskList as text: a tree of who awaits whom (like `python -m
    asyncio pstree`, roots first: the tasks no task awaits), each task
    with its state and coroutine stack, then the cycles. tid_of names
    the threads that run tasks (see thread_id)."""
    lines = []
    if tl.error:
        lines.append("pyattach: " + escape(tl.error))
        return "\n".join(lines) + "\n"
    by_id = dict((t.id, t) for t in tl)
    lines.append("%s asyncio task%s%s" % (thousands(tl.total), "" if tl.total == 1 else "s",
                                         "" if tl.total <= len(tl) else " (%s shown)" % thousands(len(tl))))
    children = {}
    for t in tl:
        for a in t.awaited_by:
            if a in by_id and a != t.id:
                children.setdefault(a, []).append(t.id)
    printed = set()
    in_cycle = set(i for c in tl.cycles for i in c)
    # Thousands of tasks run the same few lines: each is read once.
    sources = {}

    def source(fr):
        key = (fr.filename, fr.lineno)
        if key not in sources:
            sources[key] = source_line(fr.filename, fr.lineno, files)
        return sources[key]

    def task_lines(t, indent):
        pad = "  " * indent
        head = "%s%s Task %s [%s]" % (pad, "+" if indent else "*", _label(t), t.state or "?")
        if t.running is not None:
            head += ", running in thread %s" % thread_id(t.running, tid_of)
        lines.append(head)
        for fr in t.frames:
            line = "?" if fr.lineno is None else str(fr.lineno)
            lines.append('%s    File "%s", line %s, in %s' % (pad, escape(fr.filename), line, escape(fr.qualname or fr.name)))
            if with_source and source_line is not None:
                src = source(fr)
                if src:
                    lines.append("%s      %s" % (pad, escape(src)))
        if getattr(t.frames, "partial", False):
            lines.append("%s    ... coroutine stack not read further%s ..." % (pad, ": " + escape(t.frames.error) if t.frames.error else ""))
        if t.awaiting is not None:
            w = by_id.get(t.awaiting)
            if w is not None:
                lines.append("%s    awaits task %s" % (pad, _label(w)))
            else:
                lines.append("%s    awaits %s at 0x%x" % (pad, escape(t.awaiting_type or "an object"), t.awaiting))
        if t.error:
            lines.append("%s    (%s)" % (pad, escape(t.error)))

    def walk(tid, indent, path):
        t = by_id[tid]
        if tid in path:
            lines.append("%s+ Task %s: a cycle, see below" % ("  " * indent, _label(t)))
            return
        if tid in printed:
            lines.append("%s+ Task %s: see above" % ("  " * indent, _label(t)))
            return
        task_lines(t, indent)
        printed.add(tid)
        if indent >= 32:
            return
        for c in children.get(tid, ()):
            walk(c, indent + 1, path | {tid})

    roots = [t.id for t in tl if not any(a in by_id and a != t.id for a in t.awaited_by)]
    for r in roots:
        walk(r, 0, frozenset())
    for t in tl:
        if t.id not in printed and t.id not in in_cycle:
            walk(t.id, 0, frozenset())
    for c in tl.cycles:
        lines.append("cycle: " + " -> ".join(_label(by_id[i]) for i in c + [c[0]]) + " (each awaits the next: a deadlock)")
        for i in c:
            if i not in printed:
                task_lines(by_id[i], 1)
                printed.add(i)
    if tl.total > len(tl):
        lines.append("... %s more tasks not shown ..." % thousands(tl.total - len(tl)))
    return "\n".join(lines) + "\n"
