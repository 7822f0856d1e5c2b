"""Python objects in the inferior's memory: str, bytes, int, float and
the type of any object, and the bounded repr() of a value that py-locals
prints."""

import struct

from pyattach_walk_memory import WalkError
from pyattach_walk_text import MAX_REPR, bounded, escape

# A str longer than this many characters is not read ("<?>").
_MAX_STR = 1 << 16
# The encoding of a compact str's characters by its kind (bytes a
# character).
_STR_ENCODINGS = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}
# Ints longer than this many 30-bit digits (about 3600 decimal digits,
# below the str conversion limit of 3.11+) are shown as type and address.
_MAX_INT_DIGITS = 400
_PyLong_SHIFT = 30
_Py_TPFLAGS_HEAPTYPE = 1 << 9


def long_sign_ndigits(tag):
    """Sign (-1, 0, 1) and digit count of a 3.12+ int's long_value.lv_tag:
    bits 0-1 hold the sign (0 positive, 1 zero, 2 negative), bit 2 is
    reserved, the rest is the number of digits."""
    return 1 - (tag & 3), tag >> 3


def long_from_digits(sign, raw):
    """The value of an int from its 30-bit digits (little-endian uint32s,
    least significant digit first)."""
    n = len(raw) // 4
    v = 0
    for d in reversed(struct.unpack("<%dI" % n, raw[: n * 4])):
        v = (v << _PyLong_SHIFT) | (d & ((1 << _PyLong_SHIFT) - 1))
    return -v if sign < 0 else (0 if sign == 0 else v)


class Objects(object):
    """The Walker's reads of objects: through its memory
    (pyattach_walk_memory.Memory) with self.L (the Layout)."""

    def string(self, addr):
        """A str object's value ("<?>" when it cannot be decoded)."""
        L = self.L
        if not addr:
            return "<NULL>"
        try:
            length, kind, compact, ascii_ = self.str_state(addr)
            if not compact or length < 0 or length > _MAX_STR or kind not in (1, 2, 4):
                return "<?>"
            if ascii_:
                data = self.read(addr + L.off("sizeof(PyASCIIObject)"), length)
                return data.decode("ascii", "replace")
            data = self.read(addr + L.off("sizeof(PyCompactUnicodeObject)"), length * kind)
            return data.decode(_STR_ENCODINGS[kind], "replace")
        except WalkError:
            return "<?>"

    def str_state(self, addr):
        """(length, kind, compact, ascii) of the str object at addr: its
        length and the bits of its state that say how it is stored."""
        L = self.L
        length = self.i64(addr + L.off("PyASCIIObject.length"))
        word = self.u32(addr + L.off("PyASCIIObject.state"))
        base = L.off("PyASCIIObject.state") * 8

        def bit(name):
            off, size = L.bits("PyASCIIObject.state." + name)
            return (word >> (off - base)) & ((1 << size) - 1)

        return length, bit("kind"), bit("compact"), bit("ascii")

    def cstring(self, addr, limit=256):
        """A NUL-terminated C string (a type's tp_name)."""
        out = b""
        while len(out) < limit:
            chunk = self.read(addr + len(out), 32)
            i = chunk.find(b"\0")
            if i >= 0:
                return (out + chunk[:i]).decode("utf-8", "replace")
            out += chunk
        return out.decode("utf-8", "replace")

    def type_of(self, addr):
        """The name of an object's type and whether it is a static (built-in)
        type: a class a program defines may be called "int" too."""
        L = self.L
        tp = self.ptrv(addr + L.off("PyObject.ob_type"))
        name = self.cstring(self.ptrv(tp + L.off("PyTypeObject.tp_name")))
        flags = self.u64(tp + L.off("PyTypeObject.tp_flags"))
        return name, not flags & _Py_TPFLAGS_HEAPTYPE

    def int_value(self, addr):
        """An int's value, None when it has more than _MAX_INT_DIGITS digits."""
        L = self.L
        if L.has("PyLongObject.long_value.lv_tag"):
            sign, n = long_sign_ndigits(self.u64(addr + L.off("PyLongObject.long_value.lv_tag")))
            digits = addr + L.off("PyLongObject.long_value.ob_digit")
        else:
            size = self.i64(addr + L.off("PyVarObject.ob_size"))
            sign, n = (size > 0) - (size < 0), abs(size)
            digits = addr + L.off("PyLongObject.ob_digit")
        if n > _MAX_INT_DIGITS:
            return None
        if n == 0:
            return 0
        return long_from_digits(sign, self.read(digits, 4 * n))

    def str_prefix(self, addr, limit):
        """The first limit characters of a str and its length, or None."""
        L = self.L
        length, kind, compact, ascii_ = self.str_state(addr)
        if not compact or length < 0 or kind not in (1, 2, 4):
            return None
        n = min(length, limit)
        if ascii_:
            return self.read(addr + L.off("sizeof(PyASCIIObject)"), n).decode("ascii", "replace") if n else "", length
        data = self.read(addr + L.off("sizeof(PyCompactUnicodeObject)"), n * kind) if n else b""
        return data.decode(_STR_ENCODINGS[kind], "surrogatepass"), length

    def value_repr(self, addr, limit=MAX_REPR):
        """repr() of the object at addr, for None, bool, int, float, str and
        bytes, bounded as CPython's py-locals bounds it; "<TYPE object at
        0xADDR>" for anything else."""
        L = self.L
        try:
            name, static = self.type_of(addr)
        except WalkError:
            return "<unreadable object at 0x%x>" % addr
        try:
            if static and name == "NoneType":
                return "None"
            if static and name == "bool":
                return "True" if self.int_value(addr) else "False"
            if static and name == "int":
                v = self.int_value(addr)
                if v is not None:
                    return bounded(repr(v), limit)
            elif static and name == "float":
                return bounded(repr(struct.unpack("<d", self.read(addr + L.off("PyFloatObject.ob_fval"), 8))[0]), limit)
            elif static and name == "str":
                got = self.str_prefix(addr, limit + 1)
                if got is not None:
                    return bounded(repr(got[0]), limit)
            elif static and name == "bytes":
                size = self.i64(addr + L.off("PyVarObject.ob_size"))
                if size >= 0:
                    n = min(size, limit + 1)
                    data = self.read(addr + L.off("PyBytesObject.ob_sval"), n) if n else b""
                    return bounded(repr(data), limit)
        except WalkError:
            pass
        return "<%s object at 0x%x>" % (escape(name), addr)
