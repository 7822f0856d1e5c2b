"""Code objects in the inferior's memory: a code object's names, file,
first line and line table (co_lnotab up to 3.9, 3.10's co_linetable,
3.11+'s location table), and the line a bytecode position is on."""

# A code object's line table larger than this is not read (the line is
# then unknown): real ones are a few KiB.
MAX_LINETABLE = 1 << 20


class CodeReader(object):
    """Reads code objects through mem with the Layout L; strs and bytes_
    are the StrReader and BytesReader of pyattach_read_scalars. Each code
    object is read once (codes: {address: what read gives})."""

    def __init__(self, mem, layout, strs, bytes_):
        self.mem = mem
        self.L = layout
        self.strs = strs
        self.bytes = bytes_
        self.codes = {}

    def read(self, addr):
        """{"filename", "name", "qualname", "firstlineno", "linetable"}
        of the code object at addr, and from 3.11 on "code_start" (where
        its co_code_adaptive starts) and "firsttraceable"."""
        c = self.codes.get(addr)
        if c is not None:
            return c
        L = self.L
        mem = self.mem
        mark = mem.mark()
        c = {
            "filename": self.strs.value(mem.ptrv(addr + L.off("PyCodeObject.co_filename"))),
            "name": self.strs.value(mem.ptrv(addr + L.off("PyCodeObject.co_name"))),
            "firstlineno": mem.i32(addr + L.off("PyCodeObject.co_firstlineno")),
        }
        c["qualname"] = c["name"]
        if L.has("PyCodeObject.co_qualname"):
            c["qualname"] = self.strs.value(mem.ptrv(addr + L.off("PyCodeObject.co_qualname")))
        table = "PyCodeObject.co_linetable" if L.has("PyCodeObject.co_linetable") else "PyCodeObject.co_lnotab"
        c["linetable"] = self.bytes.value(mem.ptrv(addr + L.off(table)), MAX_LINETABLE)
        if L.has("PyCodeObject.co_code_adaptive"):
            c["code_start"] = addr + L.off("PyCodeObject.co_code_adaptive")
            c["firsttraceable"] = 0
            if L.has("PyCodeObject._co_firsttraceable"):
                c["firsttraceable"] = mem.i32(addr + L.off("PyCodeObject._co_firsttraceable"))
        self.codes[addr] = c
        mem.built(mark)
        return c

    def line(self, c, pos):
        """The line of the code object c (as read gives it) at pos: a
        code unit index from 3.11 on, f_lasti before (-1: not started).
        Each (code object, pos) is worked out once: a deep recursion runs
        the same call again and again."""
        lines = c.setdefault("lines", {})
        if pos in lines:
            return lines[pos]
        if self.L.minor >= (3, 11):
            got = line_311(c, pos * 2)
        elif self.L.minor >= (3, 10):
            got = line_310(c, pos * 2 if pos >= 0 else -1)
        else:
            got = line_lnotab(c, pos)
        if len(lines) < 4096:
            lines[pos] = got
        return got


def line_lnotab(c, lasti):
    """3.7-3.9: co_lnotab pairs of (bytecode offset, line) increments."""
    line = c["firstlineno"]
    tab = bytearray(c["linetable"])
    addr = 0
    for i in range(0, len(tab) - 1, 2):
        addr += tab[i]
        if addr > lasti:
            break
        inc = tab[i + 1]
        line += inc - 256 if inc >= 128 else inc
    return line


def line_310(c, addr):
    """3.10: co_linetable pairs of (bytes covered, line increment);
    -128 marks a range with no line."""
    if addr < 0:
        return c["firstlineno"]
    tab = bytearray(c["linetable"])
    line = c["firstlineno"]
    start = 0
    for i in range(0, len(tab) - 1, 2):
        sdelta, ldelta = tab[i], tab[i + 1]
        ldelta = ldelta - 256 if ldelta >= 128 else ldelta
        end = start + sdelta
        if ldelta != -128:
            line += ldelta
        if start <= addr < end:
            return None if ldelta == -128 else line
        start = end
    return line


def line_311(c, addr):
    """3.11+: the location table of PEP 657, one entry per run of code
    units: a first byte with bit 7 set, a code in bits 3-6 and the
    length minus one in bits 0-2, then the code's varints."""
    tab = bytearray(c["linetable"])
    line = c["firstlineno"]
    pos = 0
    start = 0
    n = len(tab)

    def varint(p):
        b = tab[p]
        p += 1
        val = b & 63
        shift = 0
        while b & 64 and p < n:
            b = tab[p]
            p += 1
            shift += 6
            val |= (b & 63) << shift
        return val, p

    def svarint(p):
        v, p = varint(p)
        return (-(v >> 1) if v & 1 else v >> 1), p

    while pos < n:
        first = tab[pos]
        pos += 1
        code = (first >> 3) & 15
        length = ((first & 7) + 1) * 2
        has_line = True
        if code == 15:
            has_line = False
        elif code == 14:
            delta, pos = svarint(pos)
            line += delta
            _, pos = varint(pos)
            _, pos = varint(pos)
            _, pos = varint(pos)
        elif code == 13:
            delta, pos = svarint(pos)
            line += delta
        elif code >= 10:
            line += code - 10
            pos += 2
        else:
            pos += 1
        end = start + length
        if start <= addr < end:
            return line if has_line else None
        start = end
    return None
