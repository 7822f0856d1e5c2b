"""Thread names in gdb, escaped. A target names its threads itself
(prctl PR_SET_NAME, threading in 3.14+), and gdb prints those names raw:
in "info threads", the headers of "thread apply", stop notices. Each
named thread gets its name, escaped (walk.escape), as its user-visible
name (what "thread name" sets), which gdb prints instead. gdb prints a
stop notice before Python hears of the stop, so the name is set for
every thread, escaped or not, whenever a thread appears and after each
stop: a notice shows the name the thread had at the last stop, never
one set since."""

import gdb

import pyattach_walk as walk

# (inferior number, ptid) -> the name pyattach set for that thread.
_set_names = {}
# Threads the user named with "thread name": left alone.
_user_names = set()
_names_hooked = []


def escape_thread_names():
    """Sets every thread's name escaped, now, whenever a thread appears
    and whenever the program stops. pyattach's scripts call it for every
    target."""
    if not _names_hooked:
        _names_hooked.append(True)
        for ev in ("new_thread", "stop", "before_prompt"):
            reg = getattr(gdb.events, ev, None)
            if reg is not None:
                reg.connect(_escape_names)
    _escape_names()


def _escape_names(event=None):
    th = getattr(event, "inferior_thread", None)
    if th is not None:
        _escape_name(th)
        return
    for inf in gdb.inferiors():
        try:
            threads = inf.threads()
        except (gdb.error, RuntimeError):
            continue
        for th in threads:
            _escape_name(th)


def thread_name(th):
    """The name the target gave th, not the one pyattach set; None when
    it has none."""
    mine = _set_names.get((th.inferior.num, th.ptid))
    name = th.name
    if mine is None or name != mine:
        return name
    return _own_name(th, mine)


def _own_name(th, shown):
    """The target's name for th, whose user-visible name is shown."""
    th.name = None
    try:
        return th.name
    finally:
        th.name = shown


def _escape_name(th):
    try:
        if not th.is_valid():
            return
        key = (th.inferior.num, th.ptid)
        if key in _user_names:
            return
        mine = _set_names.get(key)
        shown = th.name
        if mine is not None and shown != mine:
            # "thread name NAME": the user's; "thread name": the target's again.
            if shown is not None and _own_name(th, shown) != shown:
                _user_names.add(key)
                del _set_names[key]
                return
        th.name = None
        name = th.name
        if name is None:
            _set_names.pop(key, None)
            return
        th.name = _set_names[key] = walk.escape(name)
    except (gdb.error, RuntimeError):
        pass
