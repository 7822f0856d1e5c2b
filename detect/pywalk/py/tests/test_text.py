"""escape() and has_controls() (pyattach_walk_text), which use no
regular expression, against one: what they rewrite, for every code
point, alone and among others. cmd/internal/safetext's
TestEscapeMatchesWalker compares escape() with Go's Escape.

Needs no pytest: `python3 test_text.py` runs every check."""

import os
import re
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyattach_walk_text as t  # noqa: E402

# What escape() rewrites, as a character class (see pyattach_walk_text).
UNSAFE = re.compile(u"[\\\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
CONTROLS = re.compile(UNSAFE.pattern.replace(u"\\\\", u"", 1))
NAMED = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def escape_one(m):
    c = m.group(0)
    if c in NAMED:
        return NAMED[c]
    return ("\\x%02x" if ord(c) < 0x100 else "\\u%04x") % ord(c)


def want_escape(s):
    return UNSAFE.sub(escape_one, s)


def test_every_code_point():
    # Those escape() rewrites one at a time and among others; the other
    # unprintable ones (unassigned, private use, format...) at once.
    every = "".join(chr(i) for i in range(0x110000))
    assert t.escape(every) == want_escape(every)
    assert t.has_controls(every)
    unsafe = UNSAFE.findall(every)
    assert len(unsafe) == 1 + 32 + 33 + 1 + 2 + 7 + 4 + 0x800, len(unsafe)
    for c in unsafe:
        assert t.escape(c) == want_escape(c), hex(ord(c))
        assert t.escape("a" + c + "\u00e9") == want_escape("a" + c + "\u00e9"), hex(ord(c))
        assert t.has_controls("x" + c) == (c != "\\"), hex(ord(c))
    others = "".join(c for c in UNSAFE.sub("", every) if not c.isprintable())
    assert t.escape(others) == others and not t.has_controls(others)
    assert not t.has_controls(CONTROLS.sub("", every))


def test_printable_strings_kept():
    for s in ["", "handle_request", "/srv/app/app.py", "caf\u00e9, \u65e5\u672c\u8a9e, emoji \U0001f40d", " ~!"]:
        assert t.escape(s) is s or t.escape(s) == s
        assert not t.has_controls(s)


def test_mixed():
    cases = [
        "C:\\path", "\x1b]52;c;SGVsbG8=\x07", "x\n  File \"/etc/spoof.py\", line 1", "tab\there\rcr\x00nul\x7fdel",
        "c1 \u0085 nel \u009b csi", "sep\u2028line\u2029para", "\u202eevil\u202c \u2066iso\u2069",
        "\u00a0nbsp \u00e9 \u200b zwsp \u00ad shy \ue000 private \U000e0001 tag kept", "\ud800\udc00 pair",
        "\\\\\\", "\\\n\\", "\udfff" * 3,
    ]
    for s in cases:
        assert t.escape(s) == want_escape(s), s
        assert t.has_controls(s) == (CONTROLS.search(s) is not None), s
    assert t.escape(None) == "" and not t.has_controls(None)


if __name__ == "__main__":
    for name, f in sorted(globals().items()):
        if name.startswith("test_") and callable(f):
            f()
    print("ok %s" % sys.version.split()[0])
