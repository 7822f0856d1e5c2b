"""gdb adapter of pyattach's memory-only Python stack walker.

Loaded by the scripts pyattach writes; setup() takes what pyattach
already knows (version, ABI flags, the offsets, the process's root).
The adapter's rooms:

  pyattach_gdb_inferior  the selected inferior: its Walker, its threads
                         matched to thread states, its source files
  pyattach_gdb_commands  py-bt, py-bt-full, py-list, py-locals, py-print,
                         py-up, py-down, py-tasks, py-exc, py-threads
  pyattach_gdb_cpython   taking over CPython's own commands
  pyattach_gdb_names     thread names, escaped
  pyattach_gdb_settings  set/show pyattach-max-frames, -max-reads, -timeout
  pyattach_gdb_dump      `pyattach dump` (dump) and pyattach-dump
  pyattach_gdb_bt        Python frames in gdb's own bt (a frame filter)
  pyattach_gdb_native    the C frames py-bt shows among Python frames
"""

import gdb

import pyattach_gdb_bt
import pyattach_gdb_commands as commands
import pyattach_gdb_cpython as cpython
import pyattach_gdb_dump
import pyattach_gdb_inferior as inferior
import pyattach_gdb_names
import pyattach_gdb_settings as settings

# The names pyattach's scripts and tests call.
walker = inferior.walker
current_thread_state = inferior.current_thread_state
stopped_line = inferior.stopped_line
asyncio_debug_address = inferior.asyncio_debug_address
escape_thread_names = pyattach_gdb_names.escape_thread_names
thread_name = pyattach_gdb_names.thread_name
dump = pyattach_gdb_dump.dump
walker_answer = commands.walker_answer
max_frames_arg = commands.max_frames_arg

_config = inferior.config
_claimed = {}


def setup(version="", flags="", root="", tables=None, runtime=None, creds=None, asyncio_debug=None):
    """Registers pyattach-bt, and py-bt (see PyBt). Called once, before
    the program is loaded; claim() runs again whenever CPython's own
    extension may have been loaded since and taken py-bt over. runtime
    is _PyRuntime's run-time address when pyattach computed it (then no
    symbol is looked up). creds is a core's (uid, gid, groups), whose
    permissions its source files are read with (a live process's are
    read from /proc)."""
    _config.update(version=version, flags=flags, root=root, runtime=runtime, creds=creds, asyncio_debug=asyncio_debug)
    _config["tables"] = tables
    # Called again for another target (a project .gdbinit's hook, after
    # each attach or load): the new facts replace the old, once set up.
    inferior.forget()
    if _config.get("set_up"):
        claim()
        return
    _config["set_up"] = True
    settings.parameters()
    commands.PyattachBt("pyattach-bt")
    commands.PyBt()
    pyattach_gdb_bt.register(lambda: walker(max_frames=0), current_thread_state)
    commands.register_frame_commands()
    for ev in ("new_objfile", "stop", "before_prompt"):
        reg = getattr(gdb.events, ev, None)
        if reg is not None:
            reg.connect(claim)


def claim(*_):
    """Takes py-bt, py-list, py-locals, ... back after CPython's
    extension registered its own."""
    cls = cpython.command_class()
    if cls is not None and _claimed.get("cls") is not cls:
        _claimed["cls"] = cls
        commands.PyBt()
        commands.register_frame_commands()

