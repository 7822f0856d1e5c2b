package pywalk

import "testing"

// sourcePy checks how the walker reads the source files a target names
// (open_source, source_line, format_list, format_frames): only regular
// files, within the target's root whatever ".." and links say, as the
// target's user, bounded; and that what it prints is escaped.
const sourcePy = `import os, stat, sys, tempfile
import pyattach_walk as w

me = (os.getuid(), os.getgid(), ())
top = tempfile.mkdtemp()
os.chmod(top, 0o755)
root = os.path.join(top, "root")
out = os.path.join(top, "outside")
for d in (root, out, os.path.join(root, "sub")):
    os.mkdir(d)
    os.chmod(d, 0o755)
def write(path, data, mode=0o644):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)
write(os.path.join(root, "m.py"), b"one\ntwo\n")
write(os.path.join(out, "secret"), b"SECRET\n")
os.symlink("../outside/secret", os.path.join(root, "rel-out"))
os.symlink(os.path.join(out, "secret"), os.path.join(root, "abs-out"))
os.symlink("/m.py", os.path.join(root, "sub", "abs-in"))
os.symlink("../m.py", os.path.join(root, "sub", "rel-in"))
os.symlink("loop", os.path.join(root, "loop"))
fs = w.SourceFiles(root, creds=me)

def line(name, files=fs, n=1):
    return w.source_line(name, n, files)

# Within the root: links and ".." are resolved as the target sees them.
assert line("/m.py") == "one"
assert line("/m.py", n=2) == "two"
assert line("/m.py", n=3) is None
assert line("/sub/abs-in") == "one"
assert line("/sub/rel-in") == "one"
assert line("/sub/../m.py") == "one"
# ".." stops at the root, as it does for a chrooted process.
assert line("/../../../m.py") == "one"
assert line("/../outside/secret") is None
assert line("/rel-out") is None
assert line("/abs-out") is None
assert line("/loop") is None
assert line("/sub") is None
assert line("<frozen importlib._bootstrap>") is None
assert line("/m.py\0x") is None
# Relative names from cwd, confined to the root as well.
cwdfs = w.SourceFiles(root, cwd=os.path.join(root, "sub"), creds=me)
assert line("rel-in", cwdfs) == "one"
assert line("../m.py", cwdfs) == "one"
assert line("../../outside/secret", cwdfs) is None

# Only regular files: a FIFO is not opened (no writer: open() would
# block), nor a device (/dev/zero is an endless line).
fifo = os.path.join(root, "fifo")
os.mkfifo(fifo)
assert line("/fifo") is None
assert line("/dev/zero", w.SourceFiles("/", creds=me)) is None
assert w.format_list(w.Frame("/fifo", "f", "f", 1, 0, 0), "", fs) == "Unable to open /fifo\n"

# Bounded: a line is cut, and nothing past MAX_SOURCE_BYTES is read.
write(os.path.join(root, "long.py"), b"x" * 5000 + b"\nnext\n")
assert line("/long.py") == "x" * w.MAX_SOURCE_LINE + w.TRUNCATED
assert line("/long.py", n=2) == "next"
write(os.path.join(root, "huge.py"), b"y" * (w.MAX_SOURCE_BYTES + 10) + b"\nafter\n")
assert line("/huge.py") is None
assert line("/huge.py", n=2) is None
assert w.source_lines("/huge.py", fs, 1 << 30) == []

# As the target's user: owner, group and other bits, searchable
# directories; uid 0 reads everything; ANYONE only what others may.
write(os.path.join(root, "private.py"), b"private\n", 0o600)
write(os.path.join(root, "group.py"), b"group\n", 0o640)
st = os.stat(os.path.join(root, "group.py"))
owner = (st.st_uid, st.st_gid, ())
stranger = (st.st_uid + 12345, st.st_gid + 12345, ())
member = (st.st_uid + 12345, st.st_gid + 777, (st.st_gid,))
assert line("/private.py", w.SourceFiles(root, creds=owner)) == "private"
assert line("/private.py", w.SourceFiles(root, creds=(0, 0, ()))) == "private"
assert line("/private.py", w.SourceFiles(root, creds=stranger)) is None
assert line("/private.py", w.SourceFiles(root)) is None
assert line("/group.py", w.SourceFiles(root, creds=member)) == "group"
assert line("/group.py", w.SourceFiles(root, creds=stranger)) is None
assert line("/m.py", w.SourceFiles(root, creds=stranger)) == "one"
os.chmod(os.path.join(root, "sub"), 0o700)
write(os.path.join(root, "sub", "hidden.py"), b"hidden\n")
assert line("/sub/hidden.py", w.SourceFiles(root, creds=stranger)) is None
assert line("/sub/hidden.py", w.SourceFiles(root, creds=owner)) == "hidden"
# The owner's bits decide for the owner, even when others may read.
class St:
    st_uid, st_gid, st_mode = 1000, 100, stat.S_IFREG | 0o044
assert not w.may_access(St, (1000, 5, ()), 4)
assert w.may_access(St, (1001, 5, (100,)), 4)
assert w.may_access(St, (1001, 5, ()), 4)
assert w.may_access(St, (0, 0, ()), 4)
St.st_mode = stat.S_IFDIR | 0o751
assert w.may_access(St, (1000, 5, ()), 1) and w.may_access(St, (1001, 100, ()), 1) and w.may_access(St, w.ANYONE, 1)
assert not w.may_access(St, (1001, 5, ()), 4) and w.may_access(St, (1001, 100, ()), 4)

# Printed: every string from the target escaped, source lines included.
write(os.path.join(root, "esc.py"), b"a = '\x1b[2J'\n")
fr = w.Frame("/esc.py", "x\n  File \"/etc/spoof.py\", line 1, in fake", "q", 1, 0, 0)
got = w.format_frames([fr], fs)
assert "\x1b" not in got and "\n  File \"/etc/spoof.py\"" not in got, got
assert got == 'Traceback (most recent call first):\n  File "/esc.py", line 1, in x\\n  File "/etc/spoof.py", line 1, in fake\n    a = \'\\x1b[2J\'\n', got
assert w.format_list(fr, "", fs) == "  >1    a = '\\x1b[2J'\n"
print("ok")
`

// TestSourceFiles runs sourcePy against the embedded walker.
func TestSourceFiles(t *testing.T) {
	runWalkerScript(t, "source.py", sourcePy)
}
