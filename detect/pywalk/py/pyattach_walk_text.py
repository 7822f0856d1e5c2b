"""How the walker prints what it read: every string from the target goes
through escape() before it is printed as text, and long values are cut
by bounded()."""

import re

# Strings from the target (names, file names, thread names, source
# lines) are printed through escape(), and its files are read through
# open_source() (pyattach_walk_source): the target chooses both.

# What escape() rewrites: backslash, C0 controls, DEL, C1 controls, the
# Arabic letter mark, LRM/RLM, the line and paragraph separators, the
# bidi embeddings/overrides and isolates, and lone surrogates. Keep in
# step with cmd/internal/safetext.Escape (a test compares the two).
_UNSAFE = re.compile(u"[\\\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_CONTROLS = re.compile(_UNSAFE.pattern.replace(u"\\\\", u"", 1))
_NAMED_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_one(m):
    c = m.group(0)
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
    return _UNSAFE.sub(_escape_one, s)


def has_controls(s):
    """Whether s holds a character escape() rewrites, backslash aside."""
    return s is not None and _CONTROLS.search(s) is not None


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
