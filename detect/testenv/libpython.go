package testenv

// FakeLibpython passes for CPython's gdb extension, libpython.py: its
// head defines class PyObjectPtr, which is what pyattach looks for. The
// tests that find extensions (detect/pyext) and fetch them
// (cmd/internal/extfetch) serve and plant it.
const FakeLibpython = `#!/usr/bin/python
'''
From gdb 7 onwards, gdb's build can be configured --with-python ...
'''
import gdb

class NullPyObjectPtr(RuntimeError):
    pass

class PyObjectPtr(object):
    """Class wrapping a gdb.Value that's either a (PyObject*) within the
    inferior process, or some subclass pointer e.g. (PyBytesObject*)"""
`
