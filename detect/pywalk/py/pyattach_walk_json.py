"""JSON for the direct reader (pyattach_proc): loads() and dumps(), as
json.loads() and json.dumps() with their defaults give them, without
importing the json package, whose decoder imports re (and re enum,
functools, collections...): ~13 ms of the direct reader's start.

Both are built on CPython's C accelerator _json, the one json itself
encodes and decodes with: the same scanner and the same encoder, so the
same values and the same text. When _json is missing or does not take
what is given here (checked at import by a round trip), they are
json's own.
"""

_INF = float("inf")
_CONSTANTS = {"NaN": float("nan"), "Infinity": _INF, "-Infinity": -_INF}
_WHITESPACE = " \t\n\r"


class _Context(object):
    """What _json.make_scanner reads of a json.JSONDecoder: its
    defaults (array_hook is read from 3.15 on)."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    array_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__

    def __init__(self):
        self.memo = {}


def _default(o):
    # What json.JSONEncoder.default raises.
    raise TypeError("Object of type %s is not JSON serializable" % type(o).__name__)


def _c_loads(text):
    """The value of the JSON document text (a str); ValueError when it
    is not one, as json.loads."""
    if not isinstance(text, str):
        raise TypeError("the JSON object must be str, not %s" % type(text).__name__)
    idx = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        obj, end = _scan(text, idx)
    except StopIteration as e:
        raise ValueError("Expecting value: char %d" % e.value)
    if text[end:].lstrip(_WHITESPACE):
        raise ValueError("Extra data: char %d" % end)
    return obj


def _c_dumps(obj):
    """obj as json.dumps(obj) writes it (ensure_ascii, ", " and ": ")."""
    return "".join(_encode(obj, 0))


def _c_works():
    value = {"a": [1, 2.5, None, True, "\u00e9\n"], "b": {}}
    text = _c_dumps(value)
    return text == '{"a": [1, 2.5, null, true, "\\u00e9\\n"], "b": {}}' and _c_loads(text) == value


try:
    import _json
    _scan = _json.make_scanner(_Context())
    _encode = _json.make_encoder(None, _default, _json.encode_basestring_ascii, None, ": ", ", ",
                                 False, False, True)
    if not _c_works():
        raise ValueError("_json gives other text")
    loads, dumps = _c_loads, _c_dumps
except Exception:
    import json
    loads, dumps = json.loads, json.dumps
