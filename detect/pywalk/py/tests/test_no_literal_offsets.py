"""No reader adds a struct offset of its own to an address: every
offset comes from the Layout (offset tables generated from the DWARF of
real builds, or the build's _Py_DebugOffsets).

The rule, checked on the source of every module that reads the
inferior's memory (READERS): no addition or subtraction (a + b, a - b,
a += b, a -= b) has an int literal other than 0, 1 and -1 as one
operand while the other operand is an expression that is not made of
constants alone. Constants are literals and ALL_CAPS names (module
constants, such as MAX_LOG2_SIZE + 3). So `addr + 24` and `size - 8`
fail; `addr + L.off("PyObject.ob_type")`, `obj - 3 * self.ptr`, `i + 1`
and `values - _ORDER_COUNT_BACK` pass. What no table can hold (words
before an object, prefix bytes of a values array, a #define) is a named
module constant whose comment says why; a size of a pointer is the
walker's ptr. Offsets into a bytes block just read (struct.unpack_from's
offset argument, slices) are not additions to an address and are not
checked: they are written from Layout offsets too. The functions in
EXEMPT decode bytes already read and hold no address.
"""

import ast
import glob
import os

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The modules that read the inferior's memory. pyattach_walk_runtime's
# search of struct pthread for a tid (match_tids) steps through bytes
# already read, not through the target's memory: its bound is written
# with the size of what is unpacked, so the module is checked whole.
READERS = sorted(
    glob.glob(os.path.join(HERE, "pyattach_read_*.py")) +
    [os.path.join(HERE, "pyattach_walk%s.py" % m) for m in (
        "", "_memory", "_layout", "_runtime", "_threads", "_frames", "_tasks", "_tasks_legacy", "_dap")])

# Functions the rule does not apply to, with why: they decode bytes
# already read (a line table's varints and deltas), and hold no address.
EXEMPT = {
    "line_lnotab": "decodes co_lnotab's bytes (signed byte deltas)",
    "line_310": "decodes 3.10's co_linetable bytes (signed byte deltas)",
    "line_311": "decodes 3.11+'s location table (varints, entry codes)",
}


def _int_literal(node):
    """The int a node is a literal of (also -N), or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _int_literal(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _constant(node):
    """Whether node is made only of literals and ALL_CAPS names."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            if not n.id.isupper():
                return False
        elif not isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Load)):
            return False
    return True


def literal_offsets(source, name="<source>"):
    """["file:line: text"] of each addition or subtraction of an int
    literal (not 0, 1, -1) to an expression that is not constant."""
    found = []
    tree = ast.parse(source, name)
    skip = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name in EXEMPT:
            skip.update(id(n) for n in ast.walk(fn))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            pairs = ((node.left, node.right), (node.right, node.left))
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
            pairs = ((node.value, node.target),)
        else:
            continue
        for lit, other in pairs:
            v = _int_literal(lit)
            if v is not None and v not in (0, 1, -1) and not _constant(other):
                found.append("%s:%d: %s" % (name, node.lineno, ast.get_source_segment(source, node)))
                break
    return found


def test_readers_exist():
    assert all(os.path.exists(p) for p in READERS), READERS
    assert any("pyattach_read_containers" in p for p in READERS)
    assert any("pyattach_walk_runtime" in p for p in READERS)


def test_no_literal_offsets():
    found = []
    for path in READERS:
        with open(path) as f:
            found += literal_offsets(f.read(), os.path.basename(path))
    assert not found, "numeric literals added to addresses (take the offset from the Layout):\n" + "\n".join(found)


def test_rule():
    bad = ["addr + 24", "addr - 24", "p += 8", "x -= 16", "8 + addr", "tp + t0 + 264", "a + -8", "f(x) + 8"]
    good = ["addr + L.off('PyObject.ob_type')", "obj - 3 * self.ptr", "i + 1", "n - 1", "i += 1",
            "values - _ORDER_COUNT_BACK", "MAX_LOG2_SIZE + 3", "MAX_INT_DECIMAL * 3322 // 30000 + 2",
            "'a' + s", "x * 8", "addr + 0"]
    for src in bad:
        assert literal_offsets(src), src
    for src in good:
        assert not literal_offsets(src), src
