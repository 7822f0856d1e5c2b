"""How the walker prints what it read: every string from the target goes
through escape() before it is printed as text, and long values are cut
by bounded()."""

# Strings from the target (names, file names, thread names, source
# lines) are printed through escape(), and its files are read through
# open_source() (pyattach_walk_source): the target chooses both.

# What escape() rewrites: backslash, C0 controls, DEL, C1 controls, the
# Arabic letter mark, LRM/RLM, the line and paragraph separators, the
# bidi embeddings/overrides and isolates, and lone surrogates. Keep in
# step with cmd/internal/safetext.Escape (a test compares the two).
# Every one of them but the backslash is a character str.isprintable()
# calls unprintable (categories Cc, Cf, Zl, Zp, Cs), so a printable
# string without a backslash has nothing to rewrite: checked in C, and
# no regular expression (importing re costs pyattach_proc ~10 ms).
_NAMED_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _is_control(c):
    """Whether escape() rewrites the character c, backslash aside."""
    o = ord(c)
    return (o < 0x20 or 0x7f <= o <= 0x9f or o == 0x61c or o == 0x200e or o == 0x200f
            or 0x2028 <= o <= 0x202e or 0x2066 <= o <= 0x2069 or 0xd800 <= o <= 0xdfff)


def _escape_one(c):
    e = _NAMED_ESCAPES.get(c)
    if e is not None:
        return e
    if ord(c) < 0x100:
        return "\\x%02x" % ord(c)
    return "\\u%04x" % ord(c)


def escape(s):
    """s with what could drive a terminal or fake a line written as
    Python's repr writes it (\\n, \\x1b, \\u202e, and \\\\ for a
    backslash); None as "". Every string from the target goes through
    this before it is printed as text."""
    if s is None:
        return ""
    if s.isprintable() and "\\" not in s:
        return s
    out = []
    for c in s:
        if c == "\\" or (not c.isprintable() and _is_control(c)):
            out.append(_escape_one(c))
        else:
            out.append(c)
    return "".join(out)


def has_controls(s):
    """Whether s holds a character escape() rewrites, backslash aside."""
    if s is None or s.isprintable():
        return False
    for c in s:
        if _is_control(c):
            return True
    return False


# How CPython's py-locals and py-list bound what they print.
MAX_REPR = 1024
TRUNCATED = "...(truncated)"


def bounded(text, limit=MAX_REPR):
    """text cut at limit characters and marked, as CPython's py-locals
    cuts a value's repr."""
    if len(text) > limit:
        return text[:limit] + TRUNCATED
    return text


def thousands(n):
    """n with thousands separated by commas (5,906)."""
    return "{:,}".format(n)
