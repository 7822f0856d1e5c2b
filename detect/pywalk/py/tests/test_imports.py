"""What the direct reader (pyattach_proc) imports: pyattach starts it for
every `pyattach dump`, and its imports are most of its start. re, json
and what they pull in (enum, functools, collections...) cost it ~20 ms,
so it imports none of them."""

import os
import subprocess
import sys

WALKER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Not imported by loading pyattach_proc, as pyattach runs it.
HEAVY = ("re", "json", "enum", "collections", "functools", "operator", "types", "typing", "copyreg", "keyword",
         "reprlib", "heapq", "contextlib", "warnings", "locale", "traceback", "linecache", "tokenize")


def test_proc_imports_nothing_heavy():
    # As pyattach starts it: isolated, no site; what importing it adds to
    # what the interpreter loaded at its start.
    code = "\n".join([
        "import sys",
        "before = set(sys.modules)",
        "sys.path.insert(0, %r)" % WALKER,
        "import pyattach_proc",
        "print(' '.join(sorted(set(sys.modules) - before)))",
    ])
    out = subprocess.check_output([sys.executable, "-I", "-S", "-c", code]).decode()
    added = out.split()
    assert "pyattach_walk" in added, added
    heavy = [m for m in added if m.split(".")[0] in HEAVY]
    assert not heavy, "pyattach_proc imports %s" % ", ".join(heavy)
