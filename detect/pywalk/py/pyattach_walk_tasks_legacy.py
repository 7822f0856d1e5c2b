"""Where Python 3.11 to 3.13 keep their asyncio tasks, read from memory
(3.14 and 3.15 are read through pyattach_walk_tasks's debug offsets).

No list of tasks is kept for out-of-process readers before 3.14; the
interpreter's own structures have them. From each interpreter's modules
dict (sys.modules: PyInterpreterState.modules, 3.12+'s imports.modules):

  asyncio.tasks  _all_tasks (up to 3.11) or _scheduled_tasks (3.12+): a
                 weakref.WeakSet of every pending task of every event
                 loop in every thread; its instance dict's "data" is a
                 set of weak references (PyWeakReference.wr_object is the
                 task, None once it died)
                 _eager_tasks (3.12+): a set of the eager tasks running
                 their first step
                 _current_tasks: a dict, event loop -> the task it runs
  _asyncio       the C module: the same names, bound to the very objects
                 asyncio.tasks rebinds to (its module state holds them
                 too), read in case a program rebinds the Python ones.

Sets and dicts are read by the walker's readers
(pyattach_read_containers: sets bounded by MAX_SET_SLOTS and the walk's
Budget, so that garbage memory ends the walk, never hangs it)."""

import pyattach_read_containers as containers
from pyattach_read_types import TypeCache
from pyattach_walk_memory import BudgetExhausted, WalkError

# The most slots of a set's table read (pyattach_read_containers).
MAX_SET_SLOTS = containers.MAX_SET_SLOTS

# asyncio.tasks's names for what holds tasks: (name, how it holds them).
_TASK_HOLDERS = (
    ("_all_tasks", "weakset"),        # up to 3.11
    ("_scheduled_tasks", "weakset"),  # 3.12+
    ("_eager_tasks", "set"),          # 3.12+
    ("_current_tasks", "dict"),       # loop -> the task it runs now
)
_TASK_MODULES = ("asyncio.tasks", "_asyncio")


def set_keys(w, s):
    """Yields the keys of the set object at s (addresses), in table
    order (pyattach_read_containers.SetReader.keys)."""
    return w.readers.sets.keys(s)


class _Found(object):
    """The tasks found so far: the first limit addresses, and how many."""

    def __init__(self, limit):
        self.limit = limit
        self.addrs = []
        self.seen = set()
        self.counted = 0  # past the limit, not read

    def add(self, task):
        if task in self.seen or self.full():
            return
        self.seen.add(task)
        self.addrs.append(task)

    def full(self):
        return len(self.addrs) >= self.limit

    def total(self):
        return len(self.addrs) + self.counted


def _lookup(w, items, names):
    """{name: value address} of the str keys among names in the (key,
    value) pairs items, read in one pass."""
    out = {}
    for k, v in items:
        if len(out) == len(names):
            break
        try:
            s = w.readers.strs.value(k)
        except WalkError:
            continue
        if s in names and s not in out:
            out[s] = v
    return out


def _types(w):
    """Names of types by address, each read once (64 bytes of a name at
    most)."""
    return TypeCache(w.readers.types, 64)


def _holders(w, interp):
    """[(kind, address)] of what holds an interpreter's tasks (see
    _TASK_HOLDERS), each once; None when asyncio is not imported there."""
    L = w.L
    key = "PyInterpreterState.imports.modules" if L.has("PyInterpreterState.imports.modules") else "PyInterpreterState.modules"
    modules = w.mem.ptrv(interp + L.off(key))
    if not modules:
        return None
    mods = _lookup(w, w.readers.dicts.items(modules), _TASK_MODULES)
    if not mods:
        return None
    names = dict(_TASK_HOLDERS)
    out = []
    seen = set()
    for m in _TASK_MODULES:
        if m not in mods:
            continue
        md = w.mem.ptrv(mods[m] + L.off("PyModuleObject.md_dict"))
        got = _lookup(w, w.readers.dicts.items(md), names)
        for name, kind in _TASK_HOLDERS:
            v = got.get(name)
            if v and v not in seen:
                seen.add(v)
                out.append((kind, v))
    return out


def _weakset_data(w, ws, types):
    """The set of weak references inside the weakref.WeakSet at ws."""
    data = w.readers.dicts.str_lookup(w.readers.instances.items(ws), "data", w.readers.strs)
    if not data or types.name_of(data) != "set":
        raise WalkError("WeakSet at 0x%x: no set in its data" % ws)
    return data


def _add_holder(w, kind, h, found, types):
    """Adds the tasks the holder h of kind (weakset, set, dict) keeps."""
    L = w.L
    tname = types.name_of(h)
    if tname == "NoneType":
        return
    if tname in ("set", "dict"):
        kind = tname  # a program's own set or dict under that name
    if kind == "dict":
        # The running tasks: each is in a set too, where it is counted
        # past the limit.
        for _, t in w.readers.dicts.items(h):
            if not found.full() and types.name_of(t) != "NoneType":
                found.add(t)
        return
    if kind == "weakset":
        h = _weakset_data(w, h, types)
    wr = L.off("PyWeakReference.wr_object")
    for key in set_keys(w, h):
        if found.full():
            # Past the limit tasks are counted, not read: a weak
            # reference whose task died and that the set still holds
            # counts too.
            if kind == "weakset" or key not in found.seen:
                found.counted += 1
            continue
        try:
            t = w.mem.ptrv(key + wr) if kind == "weakset" else key
            if t and types.name_of(t) != "NoneType":
                found.add(t)
        except BudgetExhausted:
            raise
        except WalkError:
            continue


def legacy_task_addrs(w, limit):
    """Addresses of every asyncio Task object of the interpreter(s) w
    walks (3.11-3.13): the tasks in asyncio.tasks's _scheduled_tasks
    (_all_tasks up to 3.11: a WeakSet) and _eager_tasks (3.12+), the
    running ones of _current_tasks, and the C _asyncio module's own
    bindings of the same names. Returns (addrs, total, error): addrs a
    list of at most limit ints, total the number found (may be > limit:
    past limit the weak references are counted, not read), error None or
    a one-line str naming the version and why the list cannot be found
    (then addrs holds what was found before). w is what it reads with:
    L (the Layout), mem (the Memory), readers (Readers) and
    interpreters() (a pyattach_walk_tasks.Tasks, or a Walker)."""
    found = _Found(max(0, limit))
    version = w.L.version
    errors = []
    try:
        interps = list(w.interpreters())
    except WalkError as e:
        return [], 0, "Python %s: cannot read the interpreters: %s" % (version, e)
    types = _types(w)
    for interp in interps:
        try:
            holders = _holders(w, interp)
        except BudgetExhausted as e:
            errors.append("task list cut: %s" % e)
            break
        except WalkError as e:
            errors.append("cannot read sys.modules or asyncio.tasks: %s" % e)
            continue
        if holders is None:
            continue  # asyncio not imported: no tasks
        if not holders:
            errors.append("asyncio.tasks has none of %s" % ", ".join(n for n, _ in _TASK_HOLDERS))
            continue
        for kind, h in holders:
            try:
                _add_holder(w, kind, h, found, types)
            except BudgetExhausted as e:
                errors.append("task list cut: %s" % e)
                break
            except WalkError as e:
                errors.append("cannot read the tasks' %s: %s" % (kind, e))
        if w.mem.budget.exhausted:
            break
    error = None
    if errors:
        error = "Python %s: %s" % (version, "; ".join(errors))
    return found.addrs, found.total(), error
