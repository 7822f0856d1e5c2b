package pywalk

import "testing"

// subinterpPy drives the walker over a fake process (a 3.9 layout)
// where one OS thread (pthread_t 7) has a thread state in a
// subinterpreter (id 1, the newest: first in the runtime's list) and
// one in the main interpreter (id 0), suspended in its call into the
// subinterpreter; a second thread (8) runs in the main interpreter only.
// Its stack is the subinterpreter's frames, then the main
// interpreter's, each labelled; when the main interpreter's frames
// cannot be read, or an interpreter cannot be, the walk says so
// (partial, error, Walker.stopped) instead of leaving them out.
const subinterpPy = fakeProcessPy + `

BAD = 0x7fff0000


class Memory(FakeMemory):
    """FakeMemory and the stacks of the subinterpreter tests."""

    def tstate(self, thread_id, names):
        frames = [self.alloc() for _ in names]
        for i, (f, name) in enumerate(zip(frames, names)):
            self.put(f, 0, "<Q", frames[i + 1] if i + 1 < len(frames) else 0)
            self.put(f, 8, "<Q", self.code(name, 10 * (i + 1)))
            self.put(f, 16, "<i", 2)
        t = self.alloc()
        self.put(t, 8, "<Q", thread_id)
        self.put(t, 16, "<Q", frames[0] if frames else 0)
        return t


def process():
    m = Memory()
    runtime = m.alloc()
    sub, main = m.alloc(), m.alloc()
    m.put(runtime, 0, "<Q", sub)
    m.put(sub, 0, "<Q", main)
    m.put(sub, 16, "<q", 1)
    m.put(main, 16, "<q", 0)
    t_sub = m.tstate(7, ["sub_inner", "sub_outer"])
    m.put(sub, 8, "<Q", t_sub)
    t_main = m.tstate(7, ["exec", "run_in_sub"])
    t_other = m.tstate(8, ["<module>"])
    m.put(main, 8, "<Q", t_other)
    m.put(t_other, 0, "<Q", t_main)
    return m, runtime, sub, t_sub, t_main, t_other


def walker(m, runtime):
    return w.Walker(m.read, runtime, w.Layout("3.9.18", "", FIELDS))


m, runtime, sub, t_sub, t_main, t_other = process()
ww = walker(m, runtime)
assert len(ww.threads()) == 3
ths = ww.os_threads()
assert [th.tstate for th in ths] == [t_sub, t_other], ths
assert [o.tstate for o in ths[0].outer] == [t_main] and ths[1].outer == []
assert ww.thread_for(pthread_id=7) is ths[0]
fl = ww.thread_frames(ths[0])
assert [(f.name, f.interp) for f in fl] == [("sub_inner", 1), ("sub_outer", 1), ("exec", 0), ("run_in_sub", 0)], fl
assert not fl.partial and fl.error is None and ww.stopped() is None
assert fl[0].as_dict()["interpreter"] == 1
text = w.format_frames(fl, with_source=False).splitlines()
assert text[1] == "  In interpreter 1:" and text[4] == "  In interpreter 0:", text
assert len(text) == 7, text
# One interpreter: no labels.
assert "In interpreter" not in w.format_frames(ww.thread_frames(ths[1]), with_source=False)
entries, why = w.dump_threads(ww, 0, [w.OSThread(100, 7, "runner"), w.OSThread(101, 8, "main")],
                              {7: ths[0], 8: ths[1]}, False, None)
assert entries[0]["interpreter"] == 1 and entries[1]["interpreter"] == 0, entries
assert [f["interpreter"] for f in entries[0]["frames"]] == [1, 1, 0, 0], entries[0]
assert why is None and not entries[0].get("partial"), (why, entries[0])

# The main interpreter's frames of that thread cannot be read: the
# stack ends after the subinterpreter's, says why, and so does the walk.
m.put(t_main, 16, "<Q", BAD)
ww = walker(m, runtime)
fl = ww.thread_frames(ww.os_threads()[0])
assert [f.name for f in fl] == ["sub_inner", "sub_outer"] and fl.partial, fl
assert fl.error.startswith("frames in interpreter 0 not read: cannot read 8 bytes at 0x7fff"), fl.error
assert "frames in interpreter 0 not read" in ww.stopped(), ww.stopped()
last = w.format_frames(fl, with_source=False).splitlines()[-1]
assert last.startswith("  ... stack not read further: frames in interpreter 0 not read: "), last
ww.begin()
entries, why = w.dump_threads(ww, 0, [w.OSThread(100, 7, "runner")], {7: ww.os_threads()[0]}, False, None)
assert entries[0]["partial"] and entries[0]["error"].startswith("frames in interpreter 0 not read"), entries[0]
assert why and "frames in interpreter 0 not read" in why, why

# An interpreter that cannot be read: the threads listed before it are
# kept, and the walk says the list is cut.
m, runtime, sub, t_sub, t_main, t_other = process()
m.put(sub, 0, "<Q", BAD)
ww = walker(m, runtime)
assert [th.tstate for th in ww.threads()] == [t_sub]
assert "interpreters not all listed: cannot read" in ww.stopped(), ww.stopped()
entries, why = w.dump_threads(ww, 0, [w.OSThread(100, 7, "runner")], {7: ww.os_threads()[0]}, False, None)
assert why and "interpreters not all listed" in why, why
print("ok")
`

// TestWalkSubinterpreters runs subinterpPy against the embedded walker.
func TestWalkSubinterpreters(t *testing.T) {
	runWalkerScript(t, "subinterp.py", subinterpPy)
}
