"""The adapters' version of the target: what pyattach knew, else
Py_Version (PY_VERSION_HEX) through the one parser."""

import struct

import pytest

import pyattach_walk as walk


def test_target_version():
    mem = {0x1000: struct.pack("<I", 0x030B07F0)}

    def read(addr, size):
        return mem[addr][:size]

    assert walk.target_version("3.12.1", read, 0x1000, "gdb") == "3.12.1"
    assert walk.target_version("", read, 0x1000, "gdb") == "3.11.7"
    with pytest.raises(walk.WalkError) as e:
        walk.target_version("", read, None, "lldb")
    assert str(e.value) == "the Python version is not known; start lldb through pyattach"
