"""How pyattach_lldb_bt puts its hooks into a frame-format as lldb 14
shows it (in double quotes, escaped)."""

import pyattach_lldb_bt as b

DEFAULT = ('"frame #${frame.index}: ${ansi.fg.yellow}${frame.pc}${ansi.normal}'
           '{ ${module.file.basename}{\\`${function.name-with-args}{${frame.no-debug}${function.pc-offset}}}}'
           '{ at ${line.file.basename}:${line.number}}\\n"')
WANT = ('"frame #${frame.index}: ${ansi.fg.yellow}${frame.pc}${ansi.normal}'
        '{${script.frame:pyattach_lldb.pyattach_lldb_bt.python_frame}}'
        '{${script.frame:pyattach_lldb.pyattach_lldb_bt.usual}'
        '{ ${module.file.basename}{\\`${function.name-with-args}{${frame.no-debug}${function.pc-offset}}}}{ at ${line.file.basename}:${line.number}}'
        '}\\n"')


def test_hooks_in_lldb_default_format():
    got = b.with_python_frames(DEFAULT)
    assert got == WANT, got


def test_once_is_enough_others_left_alone():
    # A format without ${frame.pc} or an ending newline is left alone.
    assert b.with_python_frames(WANT) is None
    assert b.with_python_frames('"frame #${frame.index}\\n"') is None
    assert b.with_python_frames('"${frame.pc}"') is None


def test_unquoted_format():
    # As a user may give it.
    assert b.with_python_frames('${frame.pc} x\\n') == '${frame.pc}' + b.PYTHON_HOOK + '{' + b.USUAL_HOOK + ' x}\\n'


def test_usual_exists_while_frame_keeps_lldb_look():
    saved = b._state["usual"]
    try:
        b._state["usual"] = False
        assert not hasattr(b, "usual")
        b._state["usual"] = True
        assert b.usual(None, None) == ""
    finally:
        b._state["usual"] = saved


# lldb 22's default: the pc sits in a scope of its own, which what
# follows the pc closes.
DEFAULT_22 = ('"frame #${frame.index}: {${ansi.fg.cyan}${frame.pc}${ansi.normal} }'
              '{${module.file.basename}{\\`}}{${function.name-with-args}{${frame.no-debug}${function.pc-offset}}}'
              '{ at ${ansi.fg.cyan}${line.file.basename}${ansi.normal}:${ansi.fg.yellow}${line.number}${ansi.normal}'
              '{:${ansi.fg.yellow}${line.column}${ansi.normal}}}${frame.kind}{${function.is-optimized} [opt]}'
              '{${function.is-inlined} [inlined]}{${frame.is-artificial} [artificial]}\\n"')
WANT_22 = ('"frame #${frame.index}: {${ansi.fg.cyan}${frame.pc}${ansi.normal}'
           '{${script.frame:pyattach_lldb.pyattach_lldb_bt.python_frame}}'
           '{${script.frame:pyattach_lldb.pyattach_lldb_bt.usual} }}'
           '{${script.frame:pyattach_lldb.pyattach_lldb_bt.usual}'
           '{${module.file.basename}{\\`}}{${function.name-with-args}{${frame.no-debug}${function.pc-offset}}}'
           '{ at ${ansi.fg.cyan}${line.file.basename}${ansi.normal}:${ansi.fg.yellow}${line.number}${ansi.normal}'
           '{:${ansi.fg.yellow}${line.column}${ansi.normal}}}${frame.kind}{${function.is-optimized} [opt]}'
           '{${function.is-inlined} [inlined]}{${frame.is-artificial} [artificial]}}\\n"')


def test_hooks_in_lldb22_default_format():
    got = b.with_python_frames(DEFAULT_22)
    assert got == WANT_22, got


def _balanced(fmt):
    depth, k = 0, 0
    while k < len(fmt):
        if fmt[k] == "\\":
            k += 2
            continue
        depth += {"{": 1, "}": -1}.get(fmt[k], 0)
        if depth < 0:
            return False
        k += 1
    return depth == 0


def test_scopes_stay_balanced():
    for fmt in (DEFAULT, DEFAULT_22, '{{${frame.pc}} a {b}} c\\n', '${frame.pc}\\} x\\n'):
        assert _balanced(b.with_python_frames(fmt)), fmt


class _Vals(object):
    def __init__(self, v):
        self.v = v

    def GetSize(self):
        return 1

    def GetStringAtIndex(self, i):
        return self.v


class _Debugger(object):
    """What install, uninstall and command use of an SBDebugger."""

    def __init__(self, fmt):
        self.fmt = fmt

    def GetInstanceName(self):
        return "debugger_1"

    def GetInternalVariableValue(self, var, name):
        return _Vals(self.fmt)

    def SetInternalVariable(self, var, value, name):
        self.fmt = value

    def HandleCommand(self, cmd):
        pass

    def GetNumTargets(self):
        return 0


def test_off_holds_until_on():
    # pyattach's DAP proxy turns the filter off before the script that
    # runs once the target exists, which installs it again otherwise.
    saved = dict(b._state)
    try:
        b._state["frames"] = None
        b._state.pop("off", None)
        d = _Debugger(DEFAULT)
        assert b.install(d)
        assert b.command(d, "off") == "Python frames in bt: off."
        assert d.fmt == DEFAULT
        assert not b.install(d)
        assert d.fmt == DEFAULT
        assert b.command(d, "on") == "Python frames in bt: on."
        assert d.fmt == WANT
    finally:
        b._state.clear()
        b._state.update(saved)
