"""Python objects in the inferior's memory: str, bytes, int, float,
containers and instances of classes, and the bounded repr() of a value
that py-locals and dump --locals print."""

import struct

from pyattach_walk_memory import BudgetExhausted, WalkError
from pyattach_walk_text import MAX_REPR, bounded, escape

# A str longer than this many characters is not read ("<?>").
_MAX_STR = 1 << 16
# The encoding of a compact str's characters by its kind (bytes a
# character).
_STR_ENCODINGS = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}
# Ints of more decimal digits than this (CPython's default
# int_max_str_digits) are shown as type and address; _MAX_INT_DIGITS is
# the most 30-bit digits such an int can have.
MAX_INT_DECIMAL = 4300
_MAX_INT_DIGITS = MAX_INT_DECIMAL * 3322 // 30000 + 2
_PyLong_SHIFT = 30
_Py_TPFLAGS_HEAPTYPE = 1 << 9
_Py_TPFLAGS_INLINE_VALUES = 1 << 2  # 3.13+
_Py_TPFLAGS_MANAGED_DICT = 1 << 4  # 3.11+

# How far value_repr goes: containers and instances nested deeper than
# MAX_DEPTH show as type and address, the first MAX_ITEMS items of each
# are shown, then "..."; one value's repr stops adding items after
# MAX_VALUE_READS memory reads (and the walk's Budget holds as ever).
MAX_DEPTH = 3
MAX_ITEMS = 10
MAX_VALUE_READS = 2000
# Sanity bounds on what the target's memory claims.
_MAX_LOG2_SIZE = 30
_MAX_MEMBERS = 64
_MAX_BASES = 16


def long_sign_ndigits(tag):
    """Sign (-1, 0, 1) and digit count of a 3.12+ int's long_value.lv_tag:
    bits 0-1 hold the sign (0 positive, 1 zero, 2 negative), bit 2 is
    reserved, the rest is the number of digits."""
    return 1 - (tag & 3), tag >> 3


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


    # Reprs of values, bounded (see MAX_DEPTH, MAX_ITEMS, MAX_VALUE_READS,
    # MAX_REPR). The layouts of containers and instances that the offset
    # tables do not carry are CPython's public struct layouts, stable from
    # 3.7 on (64-bit): offsets from the end of the object header
    # (sizeof(PyObject)) and from PyTypeObject.tp_name.

    def value_repr(self, addr, limit=MAX_REPR):
        """repr() of the object at addr, as repr() writes it, for None,
        bool, int, float, str, bytes, tuple, list, dict, set, frozenset and
        instances of classes ("<Widget(name='gizmo') at 0x..>", from the
        instance's __dict__ and __slots__); "<TYPE object at 0xADDR>" for
        anything else, "<unreadable at 0xADDR>" where memory cannot be
        read. Cut at limit characters."""
        ctx = _ReprContext(self, limit)
        return bounded(self._repr(addr, ctx, 0), limit)

    def _repr(self, addr, ctx, depth):
        try:
            return self._repr_of(addr, ctx, depth)
        except BudgetExhausted:
            raise
        except WalkError:
            return "<unreadable at 0x%x>" % addr

    def _type(self, addr, ctx):
        """(type address, name, flags) of the object at addr."""
        L = self.L
        tp = self.ptrv(addr + L.off("PyObject.ob_type"))
        got = ctx.types.get(tp)
        if got is None:
            name = self.cstring(self.ptrv(tp + L.off("PyTypeObject.tp_name")))
            flags = self.u64(tp + L.off("PyTypeObject.tp_flags"))
            got = ctx.types[tp] = (tp, name, flags)
        return got

    def _repr_of(self, addr, ctx, depth):
        L = self.L
        limit = ctx.limit
        tp, name, flags = self._type(addr, ctx)
        if flags & _Py_TPFLAGS_HEAPTYPE:
            return self._instance_repr(addr, tp, name, flags, ctx, depth)
        if name == "NoneType":
            return ctx.add("None")
        if name == "bool":
            return ctx.add("True" if self.int_value(addr) else "False")
        if name == "int":
            v = self.int_value(addr)
            if v is not None:
                text = int_decimal(v)
                if len(text.lstrip("-")) <= MAX_INT_DECIMAL:
                    return ctx.add(text)
        elif name == "float":
            return ctx.add(repr(struct.unpack("<d", self.read(addr + L.off("PyFloatObject.ob_fval"), 8))[0]))
        elif name == "str":
            got = self.str_prefix(addr, limit + 1)
            if got is not None:
                return ctx.add(repr(got[0]))
        elif name == "bytes":
            size = self.i64(addr + L.off("PyVarObject.ob_size"))
            if size >= 0:
                n = min(size, limit + 1)
                data = self.read(addr + L.off("PyBytesObject.ob_sval"), n) if n else b""
                return ctx.add(_bytes_repr(data))
        elif name in ("tuple", "list", "dict", "set", "frozenset"):
            if depth >= MAX_DEPTH:
                return ctx.add("<%s object at 0x%x>" % (name, addr))
            if addr in ctx.active:
                return ctx.add({"tuple": "(...)", "list": "[...]", "dict": "{...}"}.get(name, name + "(...)"))
            ctx.active.add(addr)
            try:
                if name == "dict":
                    return self._dict_repr(addr, ctx, depth)
                if name in ("set", "frozenset"):
                    return self._set_repr(addr, name, ctx, depth)
                return self._seq_repr(addr, name, ctx, depth)
            finally:
                ctx.active.discard(addr)
        elif name == "builtin_function_or_method":
            fn, self_name, self_addr = self.builtin_function(addr)
            if self_addr is None or self_name == "module":
                return ctx.add("<built-in function %s>" % escape(fn))
            return ctx.add("<built-in method %s of %s object at 0x%x>" % (escape(fn), escape(self_name), self_addr))
        return ctx.add("<%s object at 0x%x>" % (escape(name), addr))

    # PyCFunctionObject (3.7+): the object header, then m_ml (its
    # PyMethodDef: ml_name, ml_meth, ...) and m_self.
    def builtin_function(self, addr):
        """(name, type name of its self, address of its self) of the
        built-in function or method at addr; self's are None for a
        function without one."""
        h = self.L.off("sizeof(PyObject)")
        ml = self.ptrv(addr + h)
        name = self.cstring(self.ptrv(ml))
        slf = self.ptrv(addr + h + 8)
        if not slf:
            return name, None, None
        return name, self.type_name(slf), slf

    def builtin_method(self, addr):
        """The address of the C function (PyMethodDef.ml_meth) that the
        built-in function or method at addr runs."""
        return self.ptrv(self.ptrv(addr + self.L.off("sizeof(PyObject)")) + 8)

    def builtin_call_line(self, addr):
        """A built-in function or method as CPython's gdb extension names
        it where its py-bt shows one that Python called:
        "<built-in method NAME of TYPE object at remote 0xADDR>", or
        "<built-in function NAME>" when it has no self."""
        fn, self_name, self_addr = self.builtin_function(addr)
        if self_addr is None:
            return "<built-in function %s>" % escape(fn)
        return "<built-in method %s of %s object at remote 0x%x>" % (escape(fn), escape(self_name), self_addr)

    # A method-wrapper (wrapperobject): the header, then descr (a
    # PyWrapperDescrObject: the header, d_type, d_name, d_qualname,
    # d_base) and self; d_base is a wrapperbase: name, offset, function,
    # wrapper.
    def method_wrapper(self, addr):
        """(slot name, self's address, the C wrapper function's address)
        of the method-wrapper at addr."""
        h = self.L.off("sizeof(PyObject)")
        base = self.ptrv(self.ptrv(addr + h) + h + 24)
        return self.cstring(self.ptrv(base)), self.ptrv(addr + h + 8), self.ptrv(base + 24)

    def wrapper_call_line(self, addr):
        """A method-wrapper as CPython's gdb extension names it in py-bt:
        "<method-wrapper '__lt__' of int object at 0xADDR>"."""
        name, slf, _ = self.method_wrapper(addr)
        return "<method-wrapper %s of %s object at 0x%x>" % (escape(repr(name)), escape(self.type_name(slf)), slf)

    def type_name(self, addr):
        """tp_name of the type of the object at addr."""
        L = self.L
        return self.cstring(self.ptrv(self.ptrv(addr + L.off("PyObject.ob_type")) + L.off("PyTypeObject.tp_name")))

    def _items(self, ptrs, ctx, depth):
        """Reprs of the objects at ptrs (at most MAX_ITEMS of them are
        given), "..." after them when more is left or the value's reads
        or length are spent."""
        out = []
        for p in ptrs:
            if ctx.spent():
                out.append("...")
                break
            out.append(self._repr(p, ctx, depth + 1))
        return out

    def _seq_repr(self, addr, name, ctx, depth):
        L = self.L
        n = self.i64(addr + L.off("PyVarObject.ob_size"))
        if n < 0:
            raise WalkError("%s of size %d" % (name, n))
        k = min(n, MAX_ITEMS)
        if name == "tuple":
            items = addr + L.off("PyTupleObject.ob_item")
        else:
            items = self.ptrv(addr + L.off("PyListObject.ob_item")) if k else 0
        ptrs = struct.unpack("<%dQ" % k, self.read(items, 8 * k)) if k else ()
        parts = self._items(ptrs, ctx, depth)
        if n > k and parts[-1:] != ["..."]:
            parts.append("...")
        if name == "list":
            return "[" + ", ".join(parts) + "]"
        if n == 1:
            return "(" + parts[0] + ",)"
        return "(" + ", ".join(parts) + ")"

    def _set_repr(self, addr, name, ctx, depth):
        """A set or frozenset: PySetObject is the header, then fill, used,
        mask and table (setentry: key, hash; a deleted key has hash -1)."""
        h = self.L.off("sizeof(PyObject)")
        used = self.i64(addr + h + 8)
        mask = self.i64(addr + h + 16)
        table = self.ptrv(addr + h + 24)
        if used < 0 or mask < 0 or mask >= 1 << _MAX_LOG2_SIZE or used > mask + 1:
            raise WalkError("set of %d in %d slots" % (used, mask + 1))
        keys = []
        i = 0
        while used and i <= mask and len(keys) < min(used, MAX_ITEMS) and not ctx.spent():
            k = min(mask + 1 - i, 64)
            raw = struct.unpack("<%dQ" % (2 * k), self.read(table + 16 * i, 16 * k))
            for j in range(k):
                key, hsh = raw[2 * j], raw[2 * j + 1]
                if key and hsh != 0xFFFFFFFFFFFFFFFF and len(keys) < MAX_ITEMS:
                    keys.append(key)
            i += k
        parts = self._items(keys, ctx, depth)
        if used > len(keys) and parts[-1:] != ["..."]:
            parts.append("...")
        if not used:
            return name + "()"
        body = "{" + ", ".join(parts) + "}"
        return body if name == "set" else "frozenset(" + body + ")"

    def _dict_repr(self, addr, ctx, depth):
        pairs, more = self._dict_items(addr, ctx)
        parts = []
        for k, v in pairs:
            if ctx.spent():
                more = True
                break
            parts.append(self._repr(k, ctx, depth + 1) + ": " + self._repr(v, ctx, depth + 1))
        if more:
            parts.append("...")
        return "{" + ", ".join(parts) + "}"

    def _dict_items(self, addr, ctx):
        """The first MAX_ITEMS (key, value) addresses of the dict at addr
        in order, and whether it holds more. PyDictObject: the header,
        ma_used, a version/watcher word, ma_keys, ma_values."""
        h = self.L.off("sizeof(PyObject)")
        used = self.i64(addr + h)
        keys = self.ptrv(addr + h + 16)
        values = self.ptrv(addr + h + 24) if used else 0
        if used < 0 or used > 1 << _MAX_LOG2_SIZE:
            raise WalkError("dict of %d items" % used)
        if not used:
            return [], False
        pairs = self._keys_items(keys, values, ctx)
        return pairs, used > len(pairs)

    def _keys_items(self, keys, values, ctx):
        """(key, value) addresses in order from a PyDictKeysObject and,
        for a split table, its values (PyDictValues)."""
        L = self.L
        if L.minor >= (3, 11):
            # dk_refcnt, dk_log2_size, dk_log2_index_bytes, dk_kind,
            # dk_version, dk_usable, dk_nentries, dk_indices.
            head = self.read(keys + 8, 3)
            log2_size, log2_index, kind = bytearray(head)
            nentries = self.i64(keys + 24)
            if log2_size > _MAX_LOG2_SIZE or log2_index > _MAX_LOG2_SIZE + 3:
                raise WalkError("dict keys of 2**%d slots" % log2_size)
            entries = keys + 32 + (1 << log2_index)
            size = 24 if kind == 0 else 16
            key_at = 8 if kind == 0 else 0
        else:
            # dk_refcnt, dk_size, dk_lookup, dk_usable, dk_nentries,
            # dk_indices.
            dk_size = self.i64(keys + 8)
            nentries = self.i64(keys + 32)
            if dk_size <= 0 or dk_size > 1 << _MAX_LOG2_SIZE:
                raise WalkError("dict keys of %d slots" % dk_size)
            ix = 1 if dk_size <= 0xFF else 2 if dk_size <= 0xFFFF else 4
            entries = keys + 40 + dk_size * ix
            size, key_at = 24, 8
            log2_size = dk_size.bit_length() - 1
        if nentries < 0 or nentries > 1 << log2_size:
            raise WalkError("dict keys of %d entries" % nentries)
        order = None
        vals = values
        if values and L.minor >= (3, 13):
            capacity, vsize = bytearray(self.read(values, 2))
            vals = values + 8
            if vsize:
                order = bytearray(self.read(vals + 8 * capacity, min(vsize, MAX_ITEMS + 1)))
        elif values and L.minor >= (3, 11):
            vsize = bytearray(self.read(values - 2, 1))[0]
            if vsize:
                k = min(vsize, MAX_ITEMS + 1)
                order = bytearray(reversed(self.read(values - 2 - k, k)))
        if order is not None:
            order = [i for i in order if i < nentries]
        pairs = []
        wanted = MAX_ITEMS + 1
        if order is not None:
            for i in order:
                e = self.read(entries + size * i, size)
                k = struct.unpack("<Q", e[key_at:key_at + 8])[0]
                v = self.ptrv(vals + 8 * i)
                if k and v:
                    pairs.append((k, v))
            return pairs[:wanted]
        i = 0
        while i < nentries and len(pairs) < wanted and not ctx.spent():
            n = min(nentries - i, 32)
            raw = self.read(entries + size * i, size * n)
            vraw = self.read(vals + 8 * i, 8 * n) if vals else None
            for j in range(n):
                k = struct.unpack("<Q", raw[size * j + key_at:size * j + key_at + 8])[0]
                if vraw is not None:
                    v = struct.unpack("<Q", vraw[8 * j:8 * j + 8])[0]
                else:
                    v = struct.unpack("<Q", raw[size * j + key_at + 8:size * j + key_at + 16])[0]
                if k and v and len(pairs) < wanted:
                    pairs.append((k, v))
            i += n
        return pairs

    def _instance_repr(self, addr, tp, name, flags, ctx, depth):
        """"<NAME(attr=repr, ...) at 0xADDR>" of an instance of a class,
        from its __dict__ and __slots__; "<NAME object at 0xADDR>" when
        neither can be read."""
        name = escape(name)
        if depth >= MAX_DEPTH:
            return ctx.add("<%s object at 0x%x>" % (name, addr))
        if addr in ctx.active:
            return ctx.add("<%s(...) at 0x%x>" % (name, addr))
        ctx.active.add(addr)
        try:
            attrs = self._instance_attrs(addr, tp, flags, ctx)
            if attrs is None:
                return ctx.add("<%s object at 0x%x>" % (name, addr))
            parts = []
            for k, v in attrs:
                if ctx.spent():
                    parts.append("...")
                    break
                if k is None:
                    parts.append("...")
                    continue
                parts.append("%s=%s" % (k, self._repr(v, ctx, depth + 1)))
            return "<%s(%s) at 0x%x>" % (name, ", ".join(parts), addr)
        finally:
            ctx.active.discard(addr)

    def _instance_attrs(self, addr, tp, flags, ctx):
        """(name, value address) of an instance's attributes (name None
        for "more not shown"), or None when it has neither a __dict__ nor
        __slots__ the walker can read."""
        L = self.L
        t0 = L.off("PyTypeObject.tp_name")
        found = None
        try:
            pairs = self._instance_dict(addr, tp, flags, t0, ctx)
        except BudgetExhausted:
            raise
        except WalkError:
            pairs = None
        if pairs is not None:
            found = []
            for k, v in pairs:
                if not k or len(found) >= MAX_ITEMS:
                    found.append((None, 0))
                    break
                found.append((escape(self.string(k)), v))
        slots = self._slots(addr, tp, t0)
        if slots is not None:
            found = (found or []) + slots
        return found

    def _instance_dict(self, addr, tp, flags, t0, ctx):
        """An instance's __dict__ items, or None when it has none (or
        where this version keeps it the walker cannot tell)."""
        L = self.L
        minor = L.minor
        if minor >= (3, 11) and flags & _Py_TPFLAGS_MANAGED_DICT:
            # The managed dict pointer is three words before the object;
            # 3.11 keeps the values pointer at four, 3.12 in the dict
            # word as the values' address minus one (so odd), 3.13+
            # keeps them inline after the object (tp_basicsize on)
            # while there is no dict.
            word = self.ptrv(addr - 24)
            values = 0
            if minor >= (3, 13):
                if not word and flags & _Py_TPFLAGS_INLINE_VALUES:
                    values = addr + self.i64(tp + t0 + 8)
                    if not bytearray(self.read(values + 3, 1))[0]:
                        return None
            elif minor >= (3, 12):
                if word & 1:
                    values, word = word + 1, 0
            elif not word:
                values = self.ptrv(addr - 32)
            if word:
                return self._dict_items_list(word, ctx)
            if not values:
                return []
            keys = self._cached_keys(tp, t0)
            return self._keys_items(keys, values, ctx)
        offset = self.i64(tp + t0 + 264)  # tp_dictoffset
        if offset <= 0:
            return None
        d = self.ptrv(addr + offset)
        return self._dict_items_list(d, ctx) if d else []

    def _dict_items_list(self, d, ctx):
        pairs, more = self._dict_items(d, ctx)
        return pairs + ([(0, 0)] if more else [])

    def _cached_keys(self, tp, t0):
        """A class's shared instance keys (PyHeapTypeObject.ht_cached_keys):
        a heap type's tp_as_buffer points at its own as_buffer, which is
        followed by ht_name, ht_slots, ht_qualname, ht_cached_keys."""
        buf = self.ptrv(tp + t0 + 136)
        if buf < tp + t0 + 272 or buf > tp + 4096 or buf & 7:
            raise WalkError("type at 0x%x: no as_buffer" % tp)
        keys = self.ptrv(buf + 16 + 24)
        if not keys:
            raise WalkError("type at 0x%x: no cached keys" % tp)
        return keys

    def _slots(self, addr, tp, t0):
        """(name, value address) of the instance's __slots__ that hold a
        value, from the class and its bases' tp_members (PyMemberDef:
        name, type, offset, flags, doc; a slot is T_OBJECT_EX), or None
        when no class has slots."""
        out = None
        chain = []
        t = tp
        while t and len(chain) < _MAX_BASES:
            if not self.u64(t + self.L.off("PyTypeObject.tp_flags")) & _Py_TPFLAGS_HEAPTYPE:
                break
            chain.append(t)
            t = self.ptrv(t + t0 + 232)  # tp_base
        for t in reversed(chain):
            members = self.ptrv(t + t0 + 216)  # tp_members
            for i in range(_MAX_MEMBERS):
                if not members:
                    break
                m = self.read(members + 40 * i, 40)
                mname, mtype, moff = struct.unpack("<Qi4xq", m[:24])
                if not mname:
                    break
                if mtype != 16 or moff <= 0:
                    continue
                v = self.ptrv(addr + moff)
                out = out if out is not None else []
                if v:
                    out.append((escape(self.cstring(mname)), v))
        return out


class _ReprContext(object):
    """One value_repr's state: its length and read bounds, the
    containers being printed (cycles) and the types read."""

    def __init__(self, w, limit):
        self.w = w
        self.limit = limit
        self.chars = 0
        self.reads_end = w.budget.reads + MAX_VALUE_READS
        self.active = set()
        self.types = {}

    def add(self, text):
        self.chars += len(text)
        return text

    def spent(self):
        return self.chars > self.limit or self.w.budget.reads > self.reads_end


def _bytes_repr(data):
    """repr() of bytes, the same under Python 2 (gdb's Python may be 2)."""
    r = repr(bytes(data))
    return r if r.startswith("b") else "b" + r
