"""`pyattach dump` through gdb: dump() writes every OS thread's Python
stack (and, asked, its C frames, locals, source lines, asyncio tasks)
as JSON (walk.write_dump, walk.dump_threads); pyattach-dump FILE runs
it from gdb's prompt."""

import gdb

import pyattach_gdb_inferior as inferior
import pyattach_gdb_names as names
import pyattach_gdb_settings as settings
import pyattach_walk as walk


def dump(path, native=False, source=False, max_frames=walk.MAX_FRAMES, max_reads=walk.MAX_READS, timeout=walk.TIMEOUT, locals=False,
         tasks=False, asyncio_debug=0, max_tasks=walk.MAX_TASKS, kernel=None, eval_loop=()):
    """Writes every OS thread's Python stack (innermost first) as JSON to
    path (walk.write_dump, walk.dump_threads): {"threads": [{"tid",
    "name", "frames": [{"function", "file", "line"}]}]}, plus each
    frame's "source" line with source, each thread's C frames as
    "native" with native, and "error" when the stacks cannot be read.
    Threads without a Python thread state get no frames. Of a stack
    deeper than max_frames, the innermost and outermost halves are
    kept: "frames_omitted" counts the others, which were before
    frames["frames_omitted_at"]; a stack not read to its end has
    "partial": true. The whole walk has one budget (max_reads, timeout;
    0 for none): once it is used up, "truncated" says why and the
    threads left are listed without their stacks. With locals, each
    frame has "locals": [[name, repr], ...] (see Walker.locals). With
    tasks, the asyncio tasks too (walk.tasks_json; asyncio_debug is the
    .AsyncioDebug section's address when pyattach found it). kernel is,
    for a core, each thread's system call as its registers say (tid:
    kernel view, see walk.dump_threads). eval_loop holds the address
    ranges (lo, hi) of the eval loop's functions that pyattach read from
    symbol tables gdb did not load: a C frame gdb has no name for in one
    of them is named as the eval loop, so that it is merged with its
    Python frames."""
    budget = walk.Budget(max_reads=max_reads, timeout=timeout)
    want = None
    if tasks:
        want = {"debug": asyncio_debug or None, "limit": max_tasks}  # 0: all
    walk.write_dump(path, budget, lambda: _dump_threads(native, source, max_frames, budget, locals, want, kernel, eval_loop),
                    errors=(gdb.error,))



def _dump_threads(native, source, max_frames, budget, with_locals=False, tasks=None, kernel=None, eval_loop=()):
    inf = gdb.selected_inferior()
    if not inf.pid:
        raise walk.WalkError("no process or core is loaded")
    w = inferior.walker(max_frames, budget)
    oss, states = inferior.thread_states(inf, w)
    for ot in oss:
        ot.os_name = names.thread_name(ot.handle)
    selected = gdb.selected_thread()
    try:
        return walk.dump_threads(
            w, inf.pid, oss, states, inferior.live(inf), inferior.files(), source=source, with_locals=with_locals,
            native=(lambda ot: _native_frames(ot.handle, eval_loop)) if native else None,
            detach=(lambda: gdb.execute("detach", to_string=True)) if inferior.live(inf) else None, tasks=_with_debug(tasks), kernel=kernel)
    finally:
        if selected is not None and native and selected.is_valid():
            selected.switch()


def _with_debug(tasks):
    """tasks with the .AsyncioDebug section's address found by gdb when
    pyattach gave none."""
    if tasks is not None and not tasks.get("debug"):
        tasks = dict(tasks, debug=inferior.asyncio_debug_address())
    return tasks



def _native_frames(th, eval_loop=()):
    """The thread's C frames as gdb unwinds them, innermost first,
    without the frames of inlined functions: pc, the name gdb has (None
    when it has none), file and line when gdb read them, and block_pc,
    an address inside the frame's function (a caller's pc is its return
    address: the byte before it). A frame gdb has no name for whose
    block_pc is in one of eval_loop's ranges is named as the eval loop
    (pyattach names it exactly afterwards)."""
    out = []
    try:
        th.switch()
        f = gdb.newest_frame()
        inner_normal = False
        while f is not None and len(out) < 4096:
            if f.type() == gdb.INLINE_FRAME:
                # A function inlined into the real frame below, at the
                # same pc: one frame per pc, named by the symbol table.
                f = f.older()
                continue
            sal = f.find_sal()
            symtab = sal.symtab if sal is not None else None
            pc = f.pc()
            normal = f.type() == gdb.NORMAL_FRAME
            block_pc = pc - 1 if normal and inner_normal and pc > 0 else pc
            name = f.name()
            if name is None and any(lo <= block_pc < hi for lo, hi in eval_loop):
                name = walk.EVAL_LOOP
            out.append({
                "function": name,
                "file": symtab.filename if symtab is not None else None,
                "line": sal.line if symtab is not None and sal.line else None,
                "pc": pc,
                "block_pc": block_pc,
            })
            inner_normal = normal
            f = f.older()
    except gdb.error:
        pass
    return out


class PyattachDump(gdb.Command):
    """pyattach-dump FILE: write every thread's Python stack as JSON to FILE.

FILE gets {"threads": [{"tid", "name", "frames": [{"function", "file",
"line"}]}]}, innermost frame first; "pyattach dump" runs it."""

    def __init__(self):
        super(PyattachDump, self).__init__("pyattach-dump", gdb.COMMAND_STACK, gdb.COMPLETE_FILENAME)

    def invoke(self, args, from_tty):
        argv = gdb.string_to_argv(args)
        if len(argv) != 1:
            raise gdb.GdbError("usage: pyattach-dump FILE")
        dump(argv[0], max_frames=settings.limit("max_frames", walk.MAX_FRAMES),
             max_reads=settings.limit("max_reads", walk.MAX_READS), timeout=settings.limit("timeout", walk.TIMEOUT))


PyattachDump()
