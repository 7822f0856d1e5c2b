"""The attributes of instances of classes, in the inferior's memory:
their __dict__ and their __slots__.

Where the __dict__ is depends on the version and the class:

  3.7-3.10, and classes without Py_TPFLAGS_MANAGED_DICT: a pointer at
        tp_dictoffset from the object (none when it is 0 or less);
  3.11  (MANAGED_DICT) the dict pointer three words before the object,
        or while there is no dict a values pointer four words before it
        (keys: the class's ht_cached_keys);
  3.12  the word three before holds the dict, or the values' address
        minus one (so odd);
  3.13+ the word three before holds the dict, else (INLINE_VALUES) the
        values sit inline after the object, at tp_basicsize, while
        their PyDictValues.valid byte is set.

The words before the object are not a struct any table describes
(CPython's MANAGED_DICT_OFFSET and the 3.11 values pointer before it);
they are named here in pointers. __slots__ are the class's (and its
heap-type bases') tp_members of type T_OBJECT_EX."""

import struct

from pyattach_read_types import HEAPTYPE, INLINE_VALUES, MANAGED_DICT
from pyattach_walk_memory import WalkError

# Words before the object: the managed dict (3.11+) and 3.11's values.
_MANAGED_DICT_WORDS = 3
_MANAGED_VALUES_WORDS_311 = 4
# PyMemberDef.type of a slot (Py_T_OBJECT_EX, a #define).
_T_OBJECT_EX = 16
# Sanity bounds on what the target's memory claims.
MAX_MEMBERS = 64
MAX_BASES = 16


class InstanceReader(object):
    """Reads an instance's __dict__ and __slots__ through mem with the
    Layout L, dicts a pyattach_read_containers.DictReader and types a
    pyattach_read_types.TypeReader."""

    def __init__(self, mem, layout, dicts, types, ptr=8):
        self.mem = mem
        self.L = layout
        self.dicts = dicts
        self.types = types
        self.ptr = ptr

    def dict_place(self, obj, tp, flags):
        """Where the instance at obj (of the type at tp, with flags)
        keeps its attributes: ("dict", dict address), ("values", keys
        table, values), ("none",) when it has none now, or None when the
        type gives it no __dict__."""
        L = self.L
        mem = self.mem
        minor = L.minor
        if minor >= (3, 11) and flags & MANAGED_DICT:
            word = mem.ptrv(obj - _MANAGED_DICT_WORDS * self.ptr)
            values = 0
            if minor >= (3, 13):
                if not word and flags & INLINE_VALUES:
                    values = obj + mem.i64(tp + L.off("PyTypeObject.tp_basicsize"))
                    if not bytearray(mem.read(values + L.off("PyDictValues.valid"), 1))[0]:
                        return None
            elif minor >= (3, 12):
                if word & 1:
                    values, word = word + 1, 0
            elif not word:
                values = mem.ptrv(obj - _MANAGED_VALUES_WORDS_311 * self.ptr)
            if word:
                return ("dict", word)
            if not values:
                return ("none",)
            keys = mem.ptrv(tp + L.off("PyHeapTypeObject.ht_cached_keys"))
            if not keys:
                raise WalkError("type at 0x%x: no cached keys" % tp)
            return ("values", keys, values)
        offset = mem.i64(tp + L.off("PyTypeObject.tp_dictoffset"))
        if offset <= 0:
            return None
        d = mem.ptrv(obj + offset)
        return ("dict", d) if d else ("none",)

    def items(self, obj):
        """(key, value) addresses of the attributes in the instance's
        __dict__ (or 3.11+'s values kept beside the object); [] when it
        has none."""
        tp = self.types.type_addr(obj)
        place = self.dict_place(obj, tp, self.types.flags(tp))
        if place is None or place[0] == "none":
            return []
        if place[0] == "dict":
            return self.dicts.items(place[1])
        return self.dicts.entries(place[1], place[2])

    def first_items(self, obj, tp, flags, most, spent=None):
        """The first most (key, value) addresses of the instance's
        __dict__, with (0, 0) after them when it holds more; None when it
        has no __dict__."""
        place = self.dict_place(obj, tp, flags)
        if place is None:
            return None
        if place[0] == "none":
            return []
        if place[0] == "values":
            return self.dicts.entries(place[1], place[2], most, spent)
        pairs, more = self.dicts.first_items(place[1], most, spent)
        return pairs + ([(0, 0)] if more else [])

    def slots(self, obj, tp):
        """(name address, value address) of the instance's __slots__
        that hold a value, from the class and its heap-type bases, base
        first; None when no class has slots (or the layout lacks
        tp_members)."""
        L = self.L
        mem = self.mem
        if not L.has("PyTypeObject.tp_members"):
            return None
        chain = []
        t = tp
        while t and len(chain) < MAX_BASES:
            if not self.types.flags(t) & HEAPTYPE:
                break
            chain.append(t)
            t = mem.ptrv(t + L.off("PyTypeObject.tp_base"))
        size = L.off("sizeof(PyMemberDef)")
        name_at, type_at, offset_at = (L.off("PyMemberDef." + f) for f in ("name", "type", "offset"))
        out = None
        for t in reversed(chain):
            members = mem.ptrv(t + L.off("PyTypeObject.tp_members"))
            for i in range(MAX_MEMBERS):
                if not members:
                    break
                m = mem.read(members + size * i, size)
                mname = struct.unpack_from("<Q", m, name_at)[0]
                if not mname:
                    break
                mtype = struct.unpack_from("<i", m, type_at)[0]
                moff = struct.unpack_from("<q", m, offset_at)[0]
                if mtype != _T_OBJECT_EX or moff <= 0:
                    continue
                v = mem.ptrv(obj + moff)
                out = out if out is not None else []
                if v:
                    out.append((mname, v))
        return out
