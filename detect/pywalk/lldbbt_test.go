package pywalk

import "testing"

// lldbFormatPy checks how pyattach_lldb_bt puts its hooks into a
// frame-format as lldb 14 shows it (in double quotes, escaped).
const lldbFormatPy = `import pyattach_lldb_bt as b
default = '"frame #${frame.index}: ${ansi.fg.yellow}${frame.pc}${ansi.normal}{ ${module.file.basename}{\\` + "`" + `${function.name-with-args}{${frame.no-debug}${function.pc-offset}}}}{ at ${line.file.basename}:${line.number}}\\n"'
got = b.with_python_frames(default)
want = ('"frame #${frame.index}: ${ansi.fg.yellow}${frame.pc}${ansi.normal}'
        '{${script.frame:pyattach_lldb.pyattach_lldb_bt.python_frame}}'
        '{${script.frame:pyattach_lldb.pyattach_lldb_bt.usual}'
        '{ ${module.file.basename}{\\` + "`" + `${function.name-with-args}{${frame.no-debug}${function.pc-offset}}}}{ at ${line.file.basename}:${line.number}}'
        '}\\n"')
assert got == want, got
# Once is enough; a format without ${frame.pc} or an ending newline is left alone.
assert b.with_python_frames(got) is None
assert b.with_python_frames('"frame #${frame.index}\\n"') is None
assert b.with_python_frames('"${frame.pc}"') is None
# Unquoted, as a user may give it.
assert b.with_python_frames('${frame.pc} x\\n') == '${frame.pc}' + b.PYTHON_HOOK + '{' + b.USUAL_HOOK + ' x}\\n'
# usual exists only while the frame printed keeps lldb's look.
b._state["usual"] = False
assert not hasattr(b, "usual")
b._state["usual"] = True
assert b.usual(None, None) == ""
print("ok")
`

// TestLLDBFrameFormat runs lldbFormatPy against the embedded walker.
func TestLLDBFrameFormat(t *testing.T) {
	runWalkerScript(t, "lldbformat.py", lldbFormatPy)
}
