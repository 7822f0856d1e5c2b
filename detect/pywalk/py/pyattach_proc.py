"""The direct reader of `pyattach dump`: the walker over a live process's
memory, read from /proc/PID/mem, with no debugger.

pyattach stops every thread of the process (ptrace) and runs this file
with a trusted system interpreter, isolated (python3 -I -S: no
environment, no user site, no current directory on sys.path):

  python3 -I -S pyattach_proc.py CONFIG

CONFIG is one JSON object: pid, runtime (_PyRuntime's address), version,
flags, output (the file the JSON goes to, see write_dump), source,
locals, max_frames, max_reads, timeout, and for asyncio tasks tasks,
asyncio_debug (the .AsyncioDebug section's address) and max_tasks. Nothing of the target runs here:
its memory, /proc/PID/task and the files of its source lines (read as
the process's own user, within its root) are only read.

The process is stopped only while its stacks are read: this says
"ready" on stdout once the walker is loaded and waits for a line on
stdin ("go": pyattach has stopped every thread; anything else, or none:
quit); it says "detach" when every stack is read and only source lines
are left, and waits for a line again, which pyattach writes once it has
resumed the process.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import json  # noqa: E402

import pyattach_walk as walk  # noqa: E402


class _Mem(object):
    """Reads of /proc/PID/mem."""

    def __init__(self, pid):
        self.fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))

    def read(self, addr, size):
        out = b""
        while len(out) < size:
            b = os.pread(self.fd, size - len(out), addr + len(out))
            if not b:
                break
            out += b
        return out


def _say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


_detached = []


def _detach():
    """Tells pyattach the stacks are read and waits until it has resumed
    the process (once)."""
    if not _detached:
        _detached.append(True)
        _say("detach")
        sys.stdin.readline()


def os_threads(pid):
    """The process's OS threads from /proc/PID/task: the main thread first,
    then by id, each with its name (comm) and its id in the process's own
    PID namespace."""
    tids = []
    for name in os.listdir("/proc/%d/task" % pid):
        if name.isdigit():
            tids.append(int(name))
    tids.sort(key=lambda t: (t != pid, t))
    out = []
    for tid in tids:
        try:
            with open("/proc/%d/task/%d/comm" % (pid, tid), "rb") as f:
                comm = f.read()
            name = comm[:-1] if comm.endswith(b"\n") else comm
            name = name.decode("utf-8", "replace")
        except (IOError, OSError):
            name = None
        out.append(walk.OSThread(tid, walk.namespace_tid(pid, tid), name))
    return out


def _dump_threads(cfg, budget, tables):
    pid = cfg["pid"]
    mem = _Mem(pid)
    w = walk.open_walker(mem.read, cfg["runtime"], cfg["version"], cfg.get("flags", ""), tables,
                         budget=budget, max_frames=cfg["max_frames"])
    threads = os_threads(pid)
    states = walk.match_threads(w, threads)
    files = walk.process_files(pid, True)
    try:
        tasks = None
        if cfg.get("tasks"):
            tasks = {"debug": cfg.get("asyncio_debug") or None, "limit": cfg.get("max_tasks") or 0}
        return walk.dump_threads(w, pid, threads, states, True, files, source=cfg["source"],
                                 with_locals=cfg["locals"], detach=_detach, tasks=tasks)
    finally:
        # Without source lines to read, the process goes on before the
        # JSON is written.
        _detach()


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: python3 -I -S pyattach_proc.py CONFIG\n")
        return 2
    cfg = json.loads(argv[1])
    tables = walk.load_tables()
    _say("ready")
    if sys.stdin.readline().strip() != "go":
        return 1
    budget = walk.Budget(max_reads=cfg["max_reads"], timeout=cfg["timeout"])
    walk.write_dump(cfg["output"], budget, lambda: _dump_threads(cfg, budget, tables), errors=(OSError, IOError))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
