"""Where an interpreter build keeps what the walker reads: the offset
tables shipped beside this file (offsets.json, generated from real
builds' DWARF), or from 3.13 on the _Py_DebugOffsets the build wrote at
the start of _PyRuntime."""

import os
import struct

from pyattach_walk_json import loads
from pyattach_walk_memory import WalkError


def version_tuple(version):
    """(major, minor) of a version string ("3.13.0rc1" -> (3, 13)): the
    walker's one parser of versions, with version_from_hex."""
    parts = []
    for p in version.split(".")[:2]:
        digits = ""
        for c in p:
            if not c.isdigit():
                break
            digits += c
        parts.append(int(digits or 0))
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def load_tables(path=None):
    """The offset tables shipped beside this file, by key ("3.11", "3.11d")."""
    if path is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offsets.json")
    with open(path) as f:
        data = loads(f.read())
    return dict((t["key"], t["fields"]) for t in data["tables"])


class Layout(object):
    """Offsets of one interpreter build."""

    def __init__(self, version, flags, fields):
        self.version = version
        self.minor = version_tuple(version)
        self.flags = flags or ""
        self.f = fields

    @classmethod
    def for_version(cls, version, flags, tables, read=None, runtime=None):
        # 3.13+: the offsets the build itself wrote into memory, when
        # read(addr, size) and _PyRuntime's address are given.
        if read is not None and runtime and (not version or version_tuple(version) >= (3, 13)):
            layout = debug_offsets_layout(read, runtime, flags)
            if layout is not None:
                # What _Py_DebugOffsets does not carry (locals, ints,
                # floats...) comes from this exact build kind's table.
                table = tables.get("%d.%d" % layout.minor + layout.flags)
                if table:
                    merged = dict(table)
                    merged.update(layout.f)
                    layout.f = merged
                return layout
        minor = "%d.%d" % version_tuple(version)
        keep = "".join(c for c in (flags or "") if c in "td")
        for key in (minor + keep, minor + keep.replace("d", ""), minor):
            if key in tables:
                return cls(version, keep, tables[key])
        raise WalkError("no offsets for Python %s%s (known: %s)" % (minor, keep, ", ".join(sorted(tables))))

    def has(self, name):
        return name in self.f

    def off(self, name):
        try:
            return self.f[name]
        except KeyError:
            raise WalkError("Python %s: no offset for %s" % (self.version, name))

    def bits(self, name):
        return self.f[name + ":bit_offset"], self.f[name + ":bit_size"]


# _Py_DebugOffsets (3.13+): _PyRuntime starts with the offsets that
# out-of-process tools need, written by the build itself: the cookie
# "xdebugpy", PY_VERSION_HEX, then one uint64_t per member. Its members
# change between minor versions (not between patch releases), so their
# order is kept here with the minor version that added each;
# detect/pywalk's roots test checks each version's list against the DWARF
# of Debian's builds of that version.

DEBUG_COOKIE = b"xdebugpy"

# Every member of every version, in order, once: "name@3.14" is a member
# that the versions before 3.14 do not have. Members have only been added
# so far; one that a later version drops needs an upper bound here.
_DEBUG_OFFSETS_LAYOUT = (
    ("runtime_state", "size finalizing interpreters_head"),
    ("interpreter_state", "size id next threads_head threads_main@3.14 gc "
     "imports_modules sysdict builtins ceval_gil gil_runtime_state "
     "gil_runtime_state_enabled gil_runtime_state_locked gil_runtime_state_holder "
     "code_object_generation@3.14 tlbc_generation@3.14"),
    ("thread_state", "size prev next interp current_frame base_frame@3.15 "
     "last_profiled_frame@3.15 last_profiled_frame_seq@3.15 thread_id "
     "native_thread_id datastack_chunk status holds_gil@3.15 gil_requested@3.15 "
     "current_exception@3.15 exc_state@3.15"),
    ("err_stackitem", "exc_value@3.15"),
    ("interpreter_frame", "size previous executable instr_ptr localsplus owner "
     "stackpointer@3.14 tlbc_index@3.14"),
    ("code_object", "size filename name qualname linetable firstlineno argcount "
     "localsplusnames localspluskinds co_code_adaptive co_tlbc@3.14"),
    ("pyobject", "size ob_type"),
    ("type_object", "size tp_name tp_repr tp_flags tp_basicsize@3.15 "
     "tp_dictoffset@3.15"),
    ("heap_type_object", "size@3.15 ht_cached_keys@3.15"),
    ("tuple_object", "size ob_item ob_size"),
    ("list_object", "size ob_item ob_size"),
    ("set_object", "size@3.14 used@3.14 table@3.14 mask@3.14"),
    ("dict_object", "size ma_keys ma_values"),
    ("float_object", "size ob_fval"),
    ("long_object", "size lv_tag ob_digit"),
    ("bytes_object", "size ob_size ob_sval"),
    ("unicode_object", "size state length asciiobject_size "
     "compactunicodeobject_size@3.15"),
    ("gc", "size collecting frame@3.15 generation_stats_size@3.15 "
     "generation_stats@3.15"),
    ("gen_object", "size@3.14 gi_name@3.14 gi_iframe@3.14 gi_frame_state@3.14"),
    ("llist_node", "next@3.14 prev@3.14"),
    ("debugger_support", "eval_breaker@3.14 remote_debugger_support@3.14 "
     "remote_debugging_enabled@3.14 debugger_pending_call@3.14 "
     "debugger_script_path@3.14 debugger_script_path_size@3.14"),
)


def _debug_offsets_members(minor):
    """The members of _Py_DebugOffsets of a minor version (a tuple such as
    (3, 14)) in order, from _DEBUG_OFFSETS_LAYOUT."""
    members = ["version", "free_threaded"]
    for struct_name, names in _DEBUG_OFFSETS_LAYOUT:
        for name in names.split():
            name, _, since = name.partition("@")
            if not since or version_tuple(since) <= minor:
                members.append("%s.%s" % (struct_name, name))
    return members


DEBUG_OFFSETS_MEMBERS = dict((v, _debug_offsets_members(v)) for v in ((3, 13), (3, 14), (3, 15)))

# Layout names (as in the offset tables) of the members the walker reads.
DEBUG_OFFSETS_FIELDS = {
    "runtime_state.interpreters_head": "_PyRuntimeState.interpreters.head",
    "interpreter_state.id": "PyInterpreterState.id",
    "interpreter_state.next": "PyInterpreterState.next",
    "interpreter_state.threads_head": "PyInterpreterState.threads.head",
    "thread_state.size": "sizeof(PyThreadState)",
    "thread_state.next": "PyThreadState.next",
    "thread_state.interp": "PyThreadState.interp",
    "thread_state.current_frame": "PyThreadState.current_frame",
    "thread_state.thread_id": "PyThreadState.thread_id",
    "thread_state.native_thread_id": "PyThreadState.native_thread_id",
    "interpreter_frame.size": "sizeof(_PyInterpreterFrame)",
    "interpreter_frame.previous": "_PyInterpreterFrame.previous",
    "interpreter_frame.executable": "_PyInterpreterFrame.f_executable",
    "interpreter_frame.instr_ptr": "_PyInterpreterFrame.instr_ptr",
    "interpreter_frame.localsplus": "_PyInterpreterFrame.localsplus",
    "interpreter_frame.owner": "_PyInterpreterFrame.owner",
    "interpreter_frame.stackpointer": "_PyInterpreterFrame.stackpointer",
    "interpreter_frame.tlbc_index": "_PyInterpreterFrame.tlbc_index",
    "code_object.filename": "PyCodeObject.co_filename",
    "code_object.name": "PyCodeObject.co_name",
    "code_object.qualname": "PyCodeObject.co_qualname",
    "code_object.linetable": "PyCodeObject.co_linetable",
    "code_object.firstlineno": "PyCodeObject.co_firstlineno",
    "code_object.argcount": "PyCodeObject.co_argcount",
    "code_object.localsplusnames": "PyCodeObject.co_localsplusnames",
    "code_object.localspluskinds": "PyCodeObject.co_localspluskinds",
    "code_object.co_code_adaptive": "PyCodeObject.co_code_adaptive",
    "code_object.co_tlbc": "PyCodeObject.co_tlbc",
    "pyobject.size": "sizeof(PyObject)",
    "pyobject.ob_type": "PyObject.ob_type",
    "type_object.tp_name": "PyTypeObject.tp_name",
    "type_object.tp_flags": "PyTypeObject.tp_flags",
    "tuple_object.ob_item": "PyTupleObject.ob_item",
    "tuple_object.ob_size": "PyVarObject.ob_size",
    "list_object.ob_item": "PyListObject.ob_item",
    "float_object.ob_fval": "PyFloatObject.ob_fval",
    "long_object.lv_tag": "PyLongObject.long_value.lv_tag",
    "long_object.ob_digit": "PyLongObject.long_value.ob_digit",
    "bytes_object.ob_sval": "PyBytesObject.ob_sval",
    "unicode_object.state": "PyASCIIObject.state",
    "unicode_object.length": "PyASCIIObject.length",
    "unicode_object.asciiobject_size": "sizeof(PyASCIIObject)",
    "unicode_object.compactunicodeobject_size": "sizeof(PyCompactUnicodeObject)",
    "interpreter_state.ceval_gil": "PyInterpreterState.ceval.gil",
    "gen_object.gi_iframe": "PyGenObject.gi_iframe",
    "gen_object.gi_frame_state": "PyGenObject.gi_frame_state",
    "llist_node.next": "llist_node.next",
}

# Members that give an offset from another member's: the GIL's fields are
# written as offsets in the interpreter's own _gil, the collector's flag
# as one in the interpreter's gc state.
DEBUG_OFFSETS_RELATIVE = {
    "_gil_runtime_state.locked": ("interpreter_state.gil_runtime_state_locked", "-", "interpreter_state.gil_runtime_state"),
    "_gil_runtime_state.last_holder": ("interpreter_state.gil_runtime_state_holder", "-", "interpreter_state.gil_runtime_state"),
    "PyInterpreterState.gc.collecting": ("interpreter_state.gc", "+", "gc.collecting"),
}

# What _Py_DebugOffsets does not carry, checked against the DWARF by the
# same test: the bits of PyASCIIObject.state (from its first bit: interned
# is a 2-bit field, but a whole byte in free-threaded builds from 3.14 on,
# "t"; 3.13t keeps the bit field), how far _co_firsttraceable sits before
# co_code_adaptive, and how much the compact string header adds to
# PyASCIIObject (utf8_length and utf8).
DEBUG_OFFSETS_EXTRA = {
    "": {"state.kind": (2, 3), "state.compact": (5, 1), "state.ascii": (6, 1),
         "firsttraceable_before_code": 16, "compact_extra": 16},
    "t": {"state.kind": (8, 3), "state.compact": (11, 1), "state.ascii": (12, 1),
          "firsttraceable_before_code": 16, "compact_extra": 16},
}


def version_from_hex(v):
    """"3.13.5" from PY_VERSION_HEX (the walker's one parser of it: the
    adapters read the version through this too)."""
    return "%d.%d.%d" % (v >> 24, (v >> 16) & 0xFF, (v >> 8) & 0xFF)


def read_debug_offsets(read, runtime):
    """The _Py_DebugOffsets at _PyRuntime as (version, {member: value}),
    or None when it is not there: before 3.13, or a minor version whose
    members this file does not know."""
    try:
        head = bytes(read(runtime, 16))
    except Exception:
        return None
    if len(head) != 16 or head[:8] != DEBUG_COOKIE:
        return None
    version = version_from_hex(struct.unpack("<Q", head[8:16])[0])
    members = DEBUG_OFFSETS_MEMBERS.get(version_tuple(version))
    if members is None:
        return None
    try:
        raw = bytes(read(runtime + len(DEBUG_COOKIE), 8 * len(members)))
    except Exception:
        return None
    if len(raw) != 8 * len(members):
        return None
    values = struct.unpack("<%dQ" % len(members), raw)
    return version, dict(zip(members, values))


def debug_offsets_layout(read, runtime, flags=""):
    """A Layout built from the _Py_DebugOffsets in the inferior's memory,
    or None when it has none (see read_debug_offsets)."""
    got = read_debug_offsets(read, runtime)
    if got is None:
        return None
    version, d = got
    keep = "".join(c for c in (flags or "") if c == "d")
    if d.get("free_threaded"):
        keep = "t" + keep
    extra = DEBUG_OFFSETS_EXTRA["t" if "t" in keep and version_tuple(version) >= (3, 14) else ""]
    fields = {}
    for member, name in DEBUG_OFFSETS_FIELDS.items():
        if member in d:
            fields[name] = d[member]
    for name, (a, op, b) in DEBUG_OFFSETS_RELATIVE.items():
        if a in d and b in d:
            fields[name] = d[a] - d[b] if op == "-" else d[a] + d[b]
    state_bit = fields["PyASCIIObject.state"] * 8
    for name in ("state.kind", "state.compact", "state.ascii"):
        bit, size = extra[name]
        fields["PyASCIIObject." + name + ":bit_offset"] = state_bit + bit
        fields["PyASCIIObject." + name + ":bit_size"] = size
    fields.setdefault("sizeof(PyCompactUnicodeObject)", fields["sizeof(PyASCIIObject)"] + extra["compact_extra"])
    fields["PyCodeObject._co_firsttraceable"] = fields["PyCodeObject.co_code_adaptive"] - extra["firsttraceable_before_code"]
    layout = Layout(version, keep, fields)
    layout.source = "_Py_DebugOffsets"
    return layout
