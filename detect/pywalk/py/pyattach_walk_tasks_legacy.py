"""asyncio tasks of 3.11-3.13 (stub: the issue-21 legacy branch brings
the real module; its merge replaces this file)."""


def legacy_task_addrs(w, limit):
    """Addresses of every asyncio Task object of the interpreter(s) w
    walks (3.11-3.13): (addrs, total, error)."""
    return [], 0, "Python %s: tasks are not read before 3.14 yet" % w.L.version
