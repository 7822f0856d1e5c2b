"""Containers in the inferior's memory: tuple, list, dict and set (and
frozenset). The one place dicts and sets are read: thread names
(pyattach_walk_threads), globals and builtins (py-print), asyncio's task
sets (pyattach_walk_tasks_legacy), instance attributes
(pyattach_read_instances) and value reprs (pyattach_read_repr) all read
them here.

Dicts: PyDictObject holds ma_used, ma_keys (a PyDictKeysObject) and
ma_values (a split table's values, NULL for a combined one). The keys
object's entries follow its index array: 3.7-3.10 dk_size slots of 1,
2, 4 or 8 bytes each; 3.11+ 2**dk_log2_index_bytes bytes, and entries
of PyDictKeyEntry (hash, key, value) or, when dk_kind says all keys are
str, PyDictUnicodeEntry (key, value). A split table keeps the values
apart, in insertion order of their own: 3.11 and 3.12 in prefix bytes
before the values array, 3.13+ in an array after it
(PyDictValues.capacity values, then PyDictValues.size order bytes).

Sets: PySetObject.mask + 1 slots of setentry (key, hash; a deleted slot
holds the dummy key with hash -1), read in large reads, bounded by the
caller's most slots and the walk's Budget, so that garbage memory (a
table pointer that loops back, a size that lies) ends the walk, never
hangs it."""

import struct

from pyattach_walk_memory import WalkError

# A dict keys table of more than 2**MAX_LOG2_SIZE slots is not believed.
MAX_LOG2_SIZE = 30
# A dict read whole (DictReader.items) of more entries than this is not
# read.
MAX_DICT_ENTRIES = 1 << 14
# Entries read at once while only the first few are wanted.
_DICT_CHUNK = 32

# 3.11, 3.12: a split table's values array is preceded by prefix bytes:
# values[-1] the prefix's size, values[-2] how many entries the insertion
# order holds, the order itself (an entry's index a byte) running down
# from values[-3]. No struct declares them, so no offset table can hold
# them: these are the distances back from the values array.
_ORDER_COUNT_BACK = 2

# The most slots of a set's table read by default: 2**22 (64 MiB of
# entries, room for a million tasks); a set claiming more is not
# believed.
MAX_SET_SLOTS = 1 << 22
# Set entries read at once.
SET_CHUNK = 256
# A deleted set entry's hash.
_DUMMY_HASH = 0xFFFFFFFFFFFFFFFF


class SequenceReader(object):
    """tuple and list objects: their size and item addresses."""

    def __init__(self, mem, layout, ptr=8):
        self.mem = mem
        self.L = layout
        self.ptr = ptr

    def size(self, addr):
        return self.mem.i64(addr + self.L.off("PyVarObject.ob_size"))

    def items(self, addr, kind, n):
        """The addresses of the first n items of the tuple or list
        (kind) at addr."""
        if not n:
            return ()
        if kind == "tuple":
            items = addr + self.L.off("PyTupleObject.ob_item")
        else:
            items = self.mem.ptrv(addr + self.L.off("PyListObject.ob_item"))
        return struct.unpack("<%dQ" % n, self.mem.read(items, self.ptr * n))

    def item(self, addr, kind, i):
        """The address of item i of the tuple or list at addr."""
        return self.items(addr, kind, i + 1)[i]


class _Entries(object):
    """Where a keys table's entries are and how they are laid out."""
    __slots__ = ("at", "size", "key", "value", "nentries")


class DictReader(object):
    """dict objects and dict keys tables (see the module's doc)."""

    def __init__(self, mem, layout, ptr=8):
        self.mem = mem
        self.L = layout
        self.ptr = ptr

    def _entry_fields(self, unicode):
        """(size, key offset, value offset) of one entry: key and value
        are its last two pointers in every version, which is what a
        table without them (a test's) is given."""
        L = self.L
        t = "PyDictUnicodeEntry" if unicode else "PyDictKeyEntry"
        size = L.off("sizeof(%s)" % t)
        if L.has(t + ".me_key"):
            return size, L.off(t + ".me_key"), L.off(t + ".me_value")
        return size, size - 2 * self.ptr, size - self.ptr

    def _entries(self, keys):
        """The entries of the keys table at keys."""
        L = self.L
        mem = self.mem
        e = _Entries()
        e.nentries = mem.i64(keys + L.off("PyDictKeysObject.dk_nentries"))
        if L.has("PyDictKeysObject.dk_log2_index_bytes"):
            # dk_log2_size, dk_log2_index_bytes and dk_kind: one byte
            # each, read at once.
            first = L.off("PyDictKeysObject.dk_log2_size")
            at = dict((f, L.off("PyDictKeysObject." + f) - first) for f in ("dk_log2_index_bytes", "dk_kind"))
            head = bytearray(mem.read(keys + first, max(at.values()) + 1))
            log2_size, log2_index, kind = head[0], head[at["dk_log2_index_bytes"]], head[at["dk_kind"]]
            if log2_size > MAX_LOG2_SIZE or log2_index > MAX_LOG2_SIZE + 3:
                raise WalkError("dict keys at 0x%x: 2**%d slots" % (keys, log2_size))
            e.at = keys + L.off("PyDictKeysObject.dk_indices") + (1 << log2_index)
            e.size, e.key, e.value = self._entry_fields(kind != 0)
            slots = 1 << log2_size
        else:
            slots = mem.i64(keys + L.off("PyDictKeysObject.dk_size"))
            if slots <= 0 or slots > 1 << MAX_LOG2_SIZE:
                raise WalkError("dict keys at 0x%x: %d slots" % (keys, slots))
            width = 1 if slots <= 0xFF else 2 if slots <= 0xFFFF else 4 if slots <= 0xFFFFFFFF else 8
            e.at = keys + L.off("PyDictKeysObject.dk_indices") + slots * width
            e.size, e.key, e.value = self._entry_fields(False)
        if e.nentries < 0 or e.nentries > slots:
            raise WalkError("dict keys at 0x%x: %d entries" % (keys, e.nentries))
        return e

    def _order(self, values, nentries, most):
        """(where a split table's values start, the indices of its
        entries in insertion order, at most most of them, or None when
        the table keeps no order of its own: before 3.11)."""
        L = self.L
        mem = self.mem
        if L.minor >= (3, 13):
            capacity = bytearray(mem.read(values + L.off("PyDictValues.capacity"), 1))[0]
            n = bytearray(mem.read(values + L.off("PyDictValues.size"), 1))[0]
            vals = values + L.off("PyDictValues.values")
            order = bytearray(mem.read(vals + self.ptr * capacity, min(n, most))) if n else bytearray()
        elif L.minor >= (3, 11):
            vals = values + L.off("PyDictValues.values")
            n = bytearray(mem.read(values - _ORDER_COUNT_BACK, 1))[0]
            k = min(n, most)
            order = bytearray(reversed(mem.read(values - _ORDER_COUNT_BACK - k, k))) if k else bytearray()
        else:
            return values, None
        return vals, [i for i in order if i < nentries]

    def entries(self, keys, values=0, most=None, spent=None):
        """(key, value) addresses of the keys table at keys, in insertion
        order; values is a split table's values, 0 for a combined one.
        Empty slots are left out. most: at most that many pairs, read a
        few entries at a time while spent() is False; None: all of them
        (a table of more than MAX_DICT_ENTRIES is not read)."""
        e = self._entries(keys)
        if most is None and e.nentries > MAX_DICT_ENTRIES:
            raise WalkError("dict keys at 0x%x: %d entries" % (keys, e.nentries))
        vals, order = (values, None) if not values else self._order(values, e.nentries, e.nentries if most is None else most)
        if order is not None:
            return self._ordered(e, vals, order)[:most]
        return self._in_table_order(e, vals, most, spent)

    def _ordered(self, e, vals, order):
        """The pairs of a split table in its insertion order."""
        if not order:
            return []
        n = max(order) + 1
        block = self.mem.read(e.at, e.size * n)
        vraw = struct.unpack("<%dQ" % n, self.mem.read(vals, self.ptr * n))
        pairs = []
        for i in order:
            k = struct.unpack_from("<Q", block, e.size * i + e.key)[0]
            v = vraw[i]
            if k and v:
                pairs.append((k, v))
        return pairs

    def _in_table_order(self, e, vals, most, spent):
        """The pairs of a table in the order of its entries: a combined
        table's, or a split table's before 3.11."""
        n_all = e.nentries
        chunk = n_all if most is None else _DICT_CHUNK
        pairs = []
        i = 0
        while i < n_all and (most is None or len(pairs) < most) and not (spent and spent()):
            n = min(n_all - i, chunk)
            block = self.mem.read(e.at + e.size * i, e.size * n)
            vraw = struct.unpack("<%dQ" % n, self.mem.read(vals + self.ptr * i, self.ptr * n)) if vals else None
            for j in range(n):
                k = struct.unpack_from("<Q", block, e.size * j + e.key)[0]
                v = vraw[j] if vraw is not None else struct.unpack_from("<Q", block, e.size * j + e.value)[0]
                if k and v and (most is None or len(pairs) < most):
                    pairs.append((k, v))
            i += n
        return pairs

    def tables(self, d):
        """(keys table, split values or 0) of the dict object at d."""
        L = self.L
        return self.mem.ptrv(d + L.off("PyDictObject.ma_keys")), self.mem.ptrv(d + L.off("PyDictObject.ma_values"))

    def items(self, d):
        """(key, value) addresses of the dict object at d, in order."""
        keys, values = self.tables(d)
        return self.entries(keys, values)

    def size(self, d):
        """How many items the dict object at d holds (ma_used)."""
        return self.mem.i64(d + self.L.off("PyDictObject.ma_used"))

    def first_items(self, d, most, spent=None):
        """(the first most (key, value) addresses of the dict object at
        d, whether it holds more), read while spent() is False."""
        L = self.L
        used = self.size(d)
        keys = self.mem.ptrv(d + L.off("PyDictObject.ma_keys"))
        values = self.mem.ptrv(d + L.off("PyDictObject.ma_values")) if used else 0
        if used < 0 or used > 1 << MAX_LOG2_SIZE:
            raise WalkError("dict of %d items" % used)
        if not used:
            return [], False
        pairs = self.entries(keys, values, most, spent)
        return pairs, used > len(pairs)

    def str_lookup(self, items, name, strings):
        """The value of the str key name among items ((key, value)
        pairs), or 0; strings is a StrReader."""
        for k, v in items:
            if strings.value(k) == name:
                return v
        return 0


class SetReader(object):
    """set and frozenset objects (see the module's doc)."""

    def __init__(self, mem, layout):
        self.mem = mem
        self.L = layout

    def table(self, s, max_slots=MAX_SET_SLOTS):
        """(used, slots, table address) of the set object at s. Raises
        WalkError for a set whose size cannot be right."""
        L = self.L
        used = self.mem.i64(s + L.off("PySetObject.used"))
        mask = self.mem.i64(s + L.off("PySetObject.mask"))
        table = self.mem.ptrv(s + L.off("PySetObject.table"))
        slots = mask + 1
        if used < 0 or mask < 0 or slots > max_slots or slots & mask or used > slots:
            raise WalkError("set at 0x%x: %d keys in %d slots" % (s, used, slots))
        return used, slots, table

    def keys(self, s, max_slots=MAX_SET_SLOTS, chunk=SET_CHUNK):
        """Yields the keys of the set object at s (addresses), in table
        order, until its `used` live keys are found or its table ends."""
        used, slots, table = self.table(s, max_slots)
        return self.table_keys(used, slots, table, chunk)

    def table_keys(self, used, slots, table, chunk=SET_CHUNK, spent=None):
        """Yields the live keys of a set's table (see table), reading no
        further chunk once spent() is True."""
        if not used:
            return
        L = self.L
        size = L.off("sizeof(setentry)")
        koff = L.off("setentry.key")
        hoff = L.off("setentry.hash")
        if size % 8 or koff % 8 or hoff % 8:
            raise WalkError("Python %s: setentry is not made of 8-byte words" % L.version)
        step, kw, hw = size // 8, koff // 8, hoff // 8
        found = 0
        i = 0
        while i < slots and found < used and not (spent and spent()):
            n = min(slots - i, chunk)
            raw = self.mem.read(table + size * i, size * n)
            i += n
            if raw.count(b"\0") == len(raw):
                continue  # an empty stretch of the table
            words = struct.unpack("<%dQ" % (step * n), raw)
            for j in range(0, step * n, step):
                key, h = words[j + kw], words[j + hw]
                if key and h != _DUMMY_HASH:
                    found += 1
                    yield key
                    if found >= used:
                        return
