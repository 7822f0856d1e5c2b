"""Type objects in the inferior's memory: an object's type (ob_type),
its name (tp_name) and flags (tp_flags). Every reader of a value asks
this one which type it holds; the repr of a value is chosen by it
(pyattach_read_repr)."""

# tp_flags bits (Include/object.h; #defines, so no DWARF carries them).
HEAPTYPE = 1 << 9       # a class a program defines (not a static type)
MANAGED_DICT = 1 << 4   # 3.11+: the instance dict sits before the object
INLINE_VALUES = 1 << 2  # 3.13+: the instance values sit after it
BASE_EXC_SUBCLASS = 1 << 30  # BaseException and its subclasses

# How long a tp_name is read at most.
MAX_TYPE_NAME = 256


class TypeReader(object):
    """Reads type objects through mem (pyattach_walk_memory.Memory) with
    the Layout L."""

    def __init__(self, mem, layout):
        self.mem = mem
        self.L = layout

    def type_addr(self, obj):
        """The address of the type of the object at obj."""
        return self.mem.ptrv(obj + self.L.off("PyObject.ob_type"))

    def name(self, tp, limit=MAX_TYPE_NAME):
        """The tp_name of the type at tp."""
        return self.mem.cstring(self.mem.ptrv(tp + self.L.off("PyTypeObject.tp_name")), limit)

    def flags(self, tp):
        return self.mem.u64(tp + self.L.off("PyTypeObject.tp_flags"))

    def of(self, obj):
        """(type address, tp_name, tp_flags) of the object at obj."""
        tp = self.type_addr(obj)
        return tp, self.name(tp), self.flags(tp)

    def name_of(self, obj):
        """tp_name of the type of the object at obj."""
        return self.name(self.type_addr(obj))

    def name_static(self, obj):
        """The name of an object's type and whether it is a static
        (built-in) type: a class a program defines may be called "int"
        too."""
        _, name, flags = self.of(obj)
        return name, not flags & HEAPTYPE


class TypeCache(object):
    """TypeReader's answers, each type read once: for one repr, or one
    walk of tasks (thousands of objects share a few types)."""

    def __init__(self, types, limit=MAX_TYPE_NAME):
        self.types = types
        self.limit = limit
        self.names = {}
        self.flags = {}

    def name_of(self, obj):
        """tp_name of the type of the object at obj."""
        return self._name(self.types.type_addr(obj))

    def of(self, obj):
        """(type address, tp_name, tp_flags) of the object at obj."""
        tp = self.types.type_addr(obj)
        name = self._name(tp)
        flags = self.flags.get(tp)
        if flags is None:
            flags = self.flags[tp] = self.types.flags(tp)
        return tp, name, flags

    def _name(self, tp):
        name = self.names.get(tp)
        if name is None:
            name = self.names[tp] = self.types.name(tp, self.limit)
        return name
