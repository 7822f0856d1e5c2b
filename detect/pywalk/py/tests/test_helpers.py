"""The walker's pure helpers: ints from 30-bit digits and 3.12's lv_tag,
repr bounding, py-list's arguments and format, py-up/py-down's moves."""

import os
import struct

import pytest

import pyattach_walk as w

INTS = (0, 1, -1, 7, 2**30 - 1, 2**30, -2**30, 2**100, -12345678901234567890, 3**500)


def digits(v):
    v = abs(v)
    out = []
    while v:
        out.append(v & (2**30 - 1))
        v >>= 30
    return struct.pack("<%dI" % len(out), *out)


def sign(v):
    return (v > 0) - (v < 0)


@pytest.mark.parametrize("v", INTS)
def test_long_from_digits(v):
    got = w.long_from_digits(sign(v), digits(v))
    assert got == v, (v, got)


@pytest.mark.parametrize("v", INTS)
def test_long_sign_ndigits_of_lv_tag(v):
    # 3.12+: sign in bits 0-1 (0 positive, 1 zero, 2 negative), digits from bit 3.
    n = len(digits(v)) // 4
    tag = (n << 3) | {1: 0, 0: 1, -1: 2}[sign(v)]
    assert w.long_sign_ndigits(tag) == (sign(v), n), (v, tag, w.long_sign_ndigits(tag))


def test_bounded():
    assert w.bounded("abc", 3) == "abc"
    assert w.bounded("abcd", 3) == "abc...(truncated)"
    assert w.bounded(repr("x" * 5000)) == "'" + "x" * 1023 + "...(truncated)"


def test_parse_list_args():
    assert w.parse_list_args("") == (None, None)
    assert w.parse_list_args("7") == (7, 17)
    assert w.parse_list_args(" 3 , 9 ") == (3, 9)
    assert w.parse_list_args("x") == (None, None)


ME = (os.getuid(), os.getgid(), ())


@pytest.fixture
def src(tmp_path):
    """A directory holding m.py of 20 lines."""
    (tmp_path / "m.py").write_text("".join("line%d\n" % i for i in range(1, 21)))
    return str(tmp_path)


def test_format_list_around_line(src):
    fr = w.Frame("/m.py", "f", "f", 3, 0, 0)
    got = w.format_list(fr, "", w.SourceFiles(src, creds=ME))
    want = "".join("%4s    line%d\n" % ((">3" if i == 3 else str(i)), i) for i in range(1, 9))
    assert got == want, (got, want)


def test_format_list_range_past_end(src):
    fr = w.Frame("/m.py", "f", "f", 3, 0, 0)
    assert w.format_list(fr, "19, 30", w.SourceFiles(src, creds=ME)) == "  19    line19\n  20    line20\n"


def test_format_list_relative_name_from_cwd(src):
    fr = w.Frame("m.py", "f", "f", 20, 0, 0)
    assert w.format_list(fr, "", w.SourceFiles(cwd=src, creds=ME)).endswith(" >20    line20\n")


def test_format_list_unreadable(src):
    assert w.format_list(w.Frame("/nonexistent/m.py", "f", "f", 1, 0, 0)) == "Unable to open /nonexistent/m.py\n"
    fr = w.Frame("/m.py", "f", "f", None, 0, 0)
    assert w.format_list(fr, w.SourceFiles(src, creds=ME)) == "Unable to read python frame line number\n"


def test_move_selection():
    frames = [0, 1, 2]
    assert w.move_selection(frames, 0, True) == (1, None)
    assert w.move_selection(frames, 2, True) == (None, "Unable to find an older python frame\n")
    assert w.move_selection(frames, 1, False) == (0, None)
    assert w.move_selection(frames, 0, False) == (None, "Unable to find a newer python frame\n")
