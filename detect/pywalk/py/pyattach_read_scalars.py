"""Values that hold no other objects, in the inferior's memory: str
(compact strings: ASCII, or 1, 2 or 4 bytes a character), bytes, int
(30-bit digits; 3.12+ keep sign and size in lv_tag) and float. One
reader per type, each fed the memory reader and the Layout."""

import struct

from pyattach_walk_memory import WalkError

# A str longer than this many characters is not read ("<?>").
MAX_STR = 1 << 16
# The encoding of a compact str's characters by its kind (bytes a
# character).
STR_ENCODINGS = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}
# Ints of more decimal digits than this (CPython's default
# int_max_str_digits) are shown as type and address; MAX_INT_DIGITS is
# the most 30-bit digits such an int can have.
MAX_INT_DECIMAL = 4300
MAX_INT_DIGITS = MAX_INT_DECIMAL * 3322 // 30000 + 2
PYLONG_SHIFT = 30
# How many bytes a digit takes (uint32_t).
_DIGIT_SIZE = 4


def long_sign_ndigits(tag):
    """Sign (-1, 0, 1) and digit count of a 3.12+ int's long_value.lv_tag:
    bits 0-1 hold the sign (0 positive, 1 zero, 2 negative), bit 2 is
    reserved, the rest is the number of digits."""
    return 1 - (tag & 3), tag >> 3


def long_from_digits(sign, raw):
    """The value of an int from its 30-bit digits (little-endian uint32s,
    least significant digit first)."""
    n = len(raw) // _DIGIT_SIZE
    v = 0
    for d in reversed(struct.unpack("<%dI" % n, raw[: n * _DIGIT_SIZE])):
        v = (v << PYLONG_SHIFT) | (d & ((1 << PYLONG_SHIFT) - 1))
    return -v if sign < 0 else (0 if sign == 0 else v)


def int_decimal(v):
    """v in decimal, converted in 18-digit chunks so that no str() limit
    (int_max_str_digits, 3.11+) applies."""
    neg, v = v < 0, abs(v)
    chunks = []
    while v >= 10 ** 18:
        v, r = divmod(v, 10 ** 18)
        chunks.append("%018d" % r)
    chunks.append("%d" % v)
    return ("-" if neg else "") + "".join(reversed(chunks))


class StrReader(object):
    """str objects (compact ones: every str a program makes from 3.3 on
    but the legacy ones of the C API)."""

    def __init__(self, mem, layout):
        self.mem = mem
        self.L = layout

    def state(self, addr):
        """(length, kind, compact, ascii) of the str object at addr: its
        length and the bits of its state that say how it is stored."""
        L = self.L
        length = self.mem.i64(addr + L.off("PyASCIIObject.length"))
        word = self.mem.u32(addr + L.off("PyASCIIObject.state"))
        base = L.off("PyASCIIObject.state") * 8

        def bit(name):
            off, size = L.bits("PyASCIIObject.state." + name)
            return (word >> (off - base)) & ((1 << size) - 1)

        return length, bit("kind"), bit("compact"), bit("ascii")

    def _data(self, addr, ascii_):
        """Where a compact str's characters start."""
        if ascii_:
            return addr + self.L.off("sizeof(PyASCIIObject)")
        return addr + self.L.off("sizeof(PyCompactUnicodeObject)")

    def value(self, addr):
        """The str object's value ("<NULL>" for NULL, "<?>" when it
        cannot be read or decoded)."""
        if not addr:
            return "<NULL>"
        try:
            length, kind, compact, ascii_ = self.state(addr)
            if not compact or length < 0 or length > MAX_STR or kind not in STR_ENCODINGS:
                return "<?>"
            if ascii_:
                return self.mem.read(self._data(addr, True), length).decode("ascii", "replace")
            data = self.mem.read(self._data(addr, False), length * kind)
            return data.decode(STR_ENCODINGS[kind], "replace")
        except WalkError:
            return "<?>"

    def prefix(self, addr, limit):
        """The first limit characters of a str and its length, or None
        when it is not a compact str."""
        length, kind, compact, ascii_ = self.state(addr)
        if not compact or length < 0 or kind not in STR_ENCODINGS:
            return None
        n = min(length, limit)
        if ascii_:
            return self.mem.read(self._data(addr, True), n).decode("ascii", "replace") if n else "", length
        data = self.mem.read(self._data(addr, False), n * kind) if n else b""
        return data.decode(STR_ENCODINGS[kind], "surrogatepass"), length


class BytesReader(object):
    """bytes objects."""

    def __init__(self, mem, layout):
        self.mem = mem
        self.L = layout

    def size(self, addr):
        return self.mem.i64(addr + self.L.off("PyVarObject.ob_size"))

    def prefix(self, addr, limit):
        """The first limit bytes of the bytes object at addr, or None
        when its size cannot be right."""
        size = self.size(addr)
        if size < 0:
            return None
        n = min(size, limit)
        return self.mem.read(addr + self.L.off("PyBytesObject.ob_sval"), n) if n else b""

    def value(self, addr, limit):
        """All of a bytes object, b"" for NULL or one of more than limit
        bytes (or a size that cannot be right)."""
        if not addr:
            return b""
        size = self.size(addr)
        if size <= 0 or size > limit:
            return b""
        return self.mem.read(addr + self.L.off("PyBytesObject.ob_sval"), size)


class IntReader(object):
    """int (and bool) objects."""

    def __init__(self, mem, layout):
        self.mem = mem
        self.L = layout

    def value(self, addr):
        """An int's value, None when it has more than MAX_INT_DIGITS
        digits."""
        L = self.L
        if L.has("PyLongObject.long_value.lv_tag"):
            sign, n = long_sign_ndigits(self.mem.u64(addr + L.off("PyLongObject.long_value.lv_tag")))
            digits = addr + L.off("PyLongObject.long_value.ob_digit")
        else:
            size = self.mem.i64(addr + L.off("PyVarObject.ob_size"))
            sign, n = (size > 0) - (size < 0), abs(size)
            digits = addr + L.off("PyLongObject.ob_digit")
        if n > MAX_INT_DIGITS:
            return None
        if n == 0:
            return 0
        return long_from_digits(sign, self.mem.read(digits, _DIGIT_SIZE * n))


class FloatReader(object):
    """float objects."""

    def __init__(self, mem, layout):
        self.mem = mem
        self.L = layout

    def value(self, addr):
        return struct.unpack("<d", self.mem.read(addr + self.L.off("PyFloatObject.ob_fval"), 8))[0]
