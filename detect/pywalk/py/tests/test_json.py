"""pyattach_walk_json against the json package: the same text from
dumps, the same values from loads, ValueError where json.loads raises
it, TypeError where json.dumps raises it.

Needs no pytest: `python3 test_json.py` runs every check (any Python
3.6+, the walker's directory one up), to try the Pythons pytest is not
installed in."""

import json
import math
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyattach_walk_json as wj  # noqa: E402

DEEP = []
for _ in range(50):
    DEEP = [{"k": DEEP}, 1]

VALUES = [
    None, True, False, 0, 1, -1, 7, 2**31, 2**63, -2**63 - 1, 2**64, 3**500, -10**1000,
    0.0, -0.0, 1.5, -2.25, 1 / 3.0, 1e16, 1e22, 1e-7, 1e308, 5e-324, 2.0**53 + 1,
    float("nan"), float("inf"), float("-inf"),
    "", "a", "handle_request", "caf\u00e9", "\u65e5\u672c\u8a9e", "\U0001f40d", "\"\\/\b\f\n\r\t",
    "\x00\x01\x1f\x7f\x80\x9f", "\u2028\u2029\u202e\u061c\u200e", "\ud800", "\udfff", "\udc00\ud800",
    "\ud83d\udc0d", "x" * 10000, "\uffff\ufffe\ufeff",
    [], {}, [[]], [{}], {"": {}}, (), (1, "two", 3.0),
    [1, "two", 3.0, None, True, [False, {"x": []}]],
    {"a": {"b": [1, {"c": None}]}, "z": -1, "\u00e9": "\ud800", "\x1b[31m": "\n"},
    {1: "int key", 2.5: "float key", False: "bool key", None: "none key", -7: 0},
    {"nan": float("nan"), "inf": [float("inf"), float("-inf")]},
    {"threads": [{"tid": 4242, "frames": [{"name": "f", "file": "/app.py", "line": 3}] * 3}],
     "cost": {"reads": 5524, "bytes": 392757, "seconds": 0.0412}},
    DEEP,
]

TEXTS = [
    "0", "-0", "-0.0", "1", "-1", "12345678901234567890123456789012345678901234567890",
    "1.0", "1e5", "1E-5", "-1.5e+300", "1e400", "-1e400", "0.1", "123.456e-789",
    "NaN", "Infinity", "-Infinity", "[NaN, Infinity, -Infinity]",
    "true", "false", "null", '""', '"a"', '"\\u00e9"', '"\u00e9"', '"\\ud800"', '"\\udc00\\ud800"',
    '"\\ud83d\\udc0d"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\U0001f40d"', '"\u2028"',
    " {\"a\" : 1 , \"b\":[ 1 ,2 ] } \n", "\t[1,2]\r\n", "  \n\r\t 7 \t\n\r ",
    '{"a": 1, "a": 2}', '{"": {"": []}}', "[[[[[]]]]]", "{}", "[]", "[ ]", "{ }",
    '{"pid": 4242, "runtime": 140737, "version": "3.11.7", "flags": "", "output": "/tmp/o.json",'
    ' "native": {"4242": [["f", 1]]}, "timeout": 2.5, "block": true}',
]

BAD_TEXTS = [
    "", " ", "\n", "x", "[", "{", "[1,", "[1,]", "{\"a\"}", "{\"a\":1,}", "{'a': 1}", "{1: 2}",
    "[1] x", "1 2", "[] []", "nul", "tru", "Nan", "nan", "inf", "-", "+1", ".5", "1.", "01", "-01",
    "1e", "0x10", "'a'", '"abc', '"\\x41"', '"\\u12"', '"\\u12g4"', '"\\q"', '"a\x00b"', '"a\nb"',
    '"\x1f"', "\x0c1", "\u00a01", "\ufeff1", "1\x0c", "1\u00a0", "[1 2]", "{\"a\" 1}", "]", "}",
    "\x00",
]

UNENCODABLE = [object(), set(), {1, 2}, b"bytes", {(1, 2): 1}, [1, object()], {"a": {"b": 1j}}]


def same(a, b):
    """Equal values of equal types (NaN as NaN, -0.0 apart from 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def raises(f, arg):
    """The exception class f(arg) raises, or None."""
    try:
        f(arg)
    except Exception as e:
        return e
    return None


def test_c_accelerator_used():
    # Where _json works (CPython), the fallback is not what is tested.
    try:
        import _json
    except ImportError:
        return
    assert _json.make_scanner and _json.make_encoder
    assert wj.loads is wj._c_loads and wj.dumps is wj._c_dumps, (wj.loads, wj.dumps)


def test_dumps_same_text():
    for v in VALUES:
        want = json.dumps(v)
        got = wj.dumps(v)
        assert got == want, (v, got[:200], want[:200])


def test_loads_same_values():
    for v in VALUES:
        text = json.dumps(v)
        assert same(wj.loads(text), json.loads(text)), text[:200]
    for text in TEXTS:
        assert same(wj.loads(text), json.loads(text)), text


def test_big_ints_as_json():
    # 3.11+ refuses ints of more than 4,300 digits (int_max_str_digits):
    # both raise ValueError then, both read them before.
    for text in ("1" * 4300, "-" + "9" * 4301, "1" * 20000):
        e, want = raises(wj.loads, text), raises(json.loads, text)
        if want is None:
            assert e is None and wj.loads(text) == json.loads(text), text[:20]
        else:
            assert isinstance(e, ValueError), (text[:20], e)


def test_bad_texts_raise_value_error():
    for text in BAD_TEXTS:
        assert isinstance(raises(json.loads, text), ValueError), text
        e = raises(wj.loads, text)
        assert isinstance(e, ValueError), (text, e)


def test_loads_takes_str_only():
    # json.loads decodes bytes; nothing here gives it any.
    assert isinstance(raises(wj.loads, None), TypeError)
    assert isinstance(raises(wj.loads, 1), TypeError)


def test_unencodable_raise_type_error():
    for v in UNENCODABLE:
        want = raises(json.dumps, v)
        assert isinstance(want, TypeError), (v, want)
        e = raises(wj.dumps, v)
        assert type(e) is TypeError, (v, e, want)
        # 3.6's json quotes the type's name ('object').
        assert str(e) == str(want) or sys.version_info < (3, 7), (v, e, want)


def test_scanner_reused():
    # One scanner for every call: what one call read does not leak into
    # the next (its key memo is cleared).
    for _ in range(3):
        assert wj.loads('{"a": {"a": 1}, "b": "a"}') == {"a": {"a": 1}, "b": "a"}
        assert isinstance(raises(wj.loads, '{"a": [1, '), ValueError)


if __name__ == "__main__":
    for name, f in sorted(globals().items()):
        if name.startswith("test_") and callable(f):
            f()
    print("ok %s: %s" % (sys.version.split()[0], "C" if wj.loads is getattr(wj, "_c_loads", None) else "json"))
