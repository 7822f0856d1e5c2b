"""asyncio's tasks and futures in the inferior's memory: the _asyncio
extension's TaskObj and FutureObj (C names a Task's future members
task_state, task_callback0...: they sit where a Future's fut_* do, so
the FutureObj offsets serve both). Where the tasks are found is
pyattach_walk_tasks's (3.14+) and pyattach_walk_tasks_legacy's."""

import struct

from pyattach_walk_memory import Block

# fut_state values.
TASK_STATES = {0: "pending", 1: "cancelled", 2: "done"}
# How many tasks of one awaited_by set are read.
MAX_AWAITERS = 4096


class TaskFields(object):
    """What TaskReader.read reads of a task in one read: the addresses of
    its name, coroutine and the future it waits on (fut_waiter), its
    state (TASK_STATES, or "state N"), and block (the bytes read from
    the task's address)."""
    __slots__ = ("name", "coro", "waiter", "state", "block")


class FutureReader(object):
    """Futures (and tasks, as futures): what awaits them (3.14+'s
    fut_awaited_by: one object, or a set of them). sets is a
    pyattach_read_containers.SetReader."""

    def __init__(self, mem, layout, sets, ptr=8):
        self.mem = mem
        self.L = layout
        self.sets = sets
        self.ptr = ptr

    def awaiters(self, fut, block=None, limit=MAX_AWAITERS):
        """The addresses of what fut's awaited_by records (at most limit
        of a set); block holds the start of fut when it was read
        already. [] before 3.14."""
        L = self.L
        if not L.has("FutureObj.fut_awaited_by"):
            return []
        b = Block(self.mem, fut, block, self.ptr)
        a = b.ptr(fut + L.off("FutureObj.fut_awaited_by"))
        if not a:
            return []
        if not b.byte(fut + L.off("FutureObj.fut_awaited_by_is_set")):
            return [a]
        keys = []
        if limit <= 0:
            return keys
        for k in self.sets.keys(a):
            keys.append(k)
            if len(keys) >= limit:
                break
        return keys


class TaskReader(object):
    """Tasks: their fields (read), names (name) and the types of what
    they hold (type_of, kept by type for the walk: thousands of tasks
    share a few types). types, strs and ints are the readers of
    pyattach_read_types and pyattach_read_scalars."""

    def __init__(self, mem, layout, types, strs, ints, ptr=8):
        self.mem = mem
        self.L = layout
        self.types = types
        self.strs = strs
        self.ints = ints
        self.ptr = ptr
        self._types = (None, {})

    def read(self, addr):
        """The TaskFields of the task at addr, in one read."""
        L = self.L
        offs = dict((k, L.off(k)) for k in ("TaskObj.task_name", "FutureObj.fut_state", "TaskObj.task_coro",
                                              "TaskObj.task_fut_waiter"))
        size = max(offs.values()) + self.ptr
        if L.has("FutureObj.fut_awaited_by"):
            size = max(size, L.off("FutureObj.fut_awaited_by") + self.ptr, L.off("FutureObj.fut_awaited_by_is_set") + 1)
        block = self.mem.read(addr, size)

        def ptr(k):
            return struct.unpack_from("<Q", block, offs[k])[0]

        f = TaskFields()
        f.name, f.coro, f.waiter = ptr("TaskObj.task_name"), ptr("TaskObj.task_coro"), ptr("TaskObj.task_fut_waiter")
        state = struct.unpack_from("<i", block, offs["FutureObj.fut_state"])[0]
        f.state = TASK_STATES.get(state, "state %d" % state)
        f.block = block
        return f

    def type_of(self, addr):
        """(type name, static) of the object at addr, each type read once
        a walk (the memory's budget)."""
        tp = self.types.type_addr(addr)
        budget, known = self._types
        if budget is not self.mem.budget:
            known = {}
            self._types = (self.mem.budget, known)
        got = known.get(tp)
        if got is None:
            got = known[tp] = self.types.name_static(addr)
        return got

    def name(self, addr):
        """A task's name from its task_name: a str, or the number of an
        unnamed task (3.13+ keep the int and make "Task-N" of it when
        asked); None for none."""
        if not addr:
            return None
        name, _ = self.type_of(addr)
        if name == "str":
            return self.strs.value(addr)
        if name == "int":
            return "Task-%s" % self.ints.value(addr)
        return "<%s>" % name
