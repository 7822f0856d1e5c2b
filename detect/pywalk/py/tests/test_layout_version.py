"""The walker's one version parser: PY_VERSION_HEX and version strings
(pyattach_walk_layout), and _Py_DebugOffsets found by its cookie."""

import struct

from pyattach_walk_layout import DEBUG_COOKIE, DEBUG_OFFSETS_MEMBERS, read_debug_offsets, version_from_hex, version_tuple


def test_version_from_hex():
    assert version_from_hex(0x030D05F0) == "3.13.5"
    assert version_from_hex(0x030F00A1) == "3.15.0"


def test_version_tuple():
    assert version_tuple("3.13.0rc1") == (3, 13)
    assert version_tuple("3.7") == (3, 7)
    assert version_tuple("3") == (3, 0)


def test_read_debug_offsets():
    members = DEBUG_OFFSETS_MEMBERS[(3, 14)]
    values = list(range(len(members)))
    values[0] = 0x030E02F0  # version
    mem = DEBUG_COOKIE + struct.pack("<%dQ" % len(members), *values)

    def read(addr, size):
        return mem[addr - 0x1000:addr - 0x1000 + size]

    version, got = read_debug_offsets(read, 0x1000)
    assert version == "3.14.2" and got[members[-1]] == len(members) - 1
    assert read_debug_offsets(lambda a, n: b"\0" * n, 0x1000) is None
