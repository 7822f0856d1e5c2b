"""How the walker reads the source files a target names (open_source,
source_line, format_list, format_frames): only regular files, within the
target's root whatever ".." and links say, as the target's user,
bounded; and that what it prints is escaped."""

import collections
import os
import stat

import pytest

import pyattach_walk as w

ME = (os.getuid(), os.getgid(), ())

Tree = collections.namedtuple("Tree", "root fs")


def write(path, data, mode=0o644):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


@pytest.fixture
def tree(tmp_path):
    """A target's root (m.py, sub/, links in and out of it, a loop) and
    a file outside it; SourceFiles over the root as this process."""
    top = str(tmp_path)
    os.chmod(top, 0o755)
    root = os.path.join(top, "root")
    out = os.path.join(top, "outside")
    for d in (root, out, os.path.join(root, "sub")):
        os.mkdir(d)
        os.chmod(d, 0o755)
    write(os.path.join(root, "m.py"), b"one\ntwo\n")
    write(os.path.join(out, "secret"), b"SECRET\n")
    os.symlink("../outside/secret", os.path.join(root, "rel-out"))
    os.symlink(os.path.join(out, "secret"), os.path.join(root, "abs-out"))
    os.symlink("/m.py", os.path.join(root, "sub", "abs-in"))
    os.symlink("../m.py", os.path.join(root, "sub", "rel-in"))
    os.symlink("loop", os.path.join(root, "loop"))
    return Tree(root, w.SourceFiles(root, creds=ME))


def test_links_and_dotdot_resolved_within_root(tree):
    def line(name, n=1):
        return w.source_line(name, n, tree.fs)
    assert line("/m.py") == "one"
    assert line("/m.py", n=2) == "two"
    assert line("/m.py", n=3) is None
    assert line("/sub/abs-in") == "one"
    assert line("/sub/rel-in") == "one"
    assert line("/sub/../m.py") == "one"


def test_dotdot_stops_at_root(tree):
    # As it does for a chrooted process.
    assert w.source_line("/../../../m.py", 1, tree.fs) == "one"
    assert w.source_line("/../outside/secret", 1, tree.fs) is None


@pytest.mark.parametrize("name", ["/rel-out", "/abs-out", "/loop", "/sub",
                                  "<frozen importlib._bootstrap>", "/m.py\0x"])
def test_no_line_from_outside_loops_dirs_or_odd_names(tree, name):
    assert w.source_line(name, 1, tree.fs) is None


def test_relative_names_from_cwd_confined_to_root(tree):
    cwdfs = w.SourceFiles(tree.root, cwd=os.path.join(tree.root, "sub"), creds=ME)
    assert w.source_line("rel-in", 1, cwdfs) == "one"
    assert w.source_line("../m.py", 1, cwdfs) == "one"
    assert w.source_line("../../outside/secret", 1, cwdfs) is None


def test_only_regular_files(tree):
    # A FIFO is not opened (no writer: open() would block), nor a device
    # (/dev/zero is an endless line).
    os.mkfifo(os.path.join(tree.root, "fifo"))
    assert w.source_line("/fifo", 1, tree.fs) is None
    assert w.source_line("/dev/zero", 1, w.SourceFiles("/", creds=ME)) is None
    assert w.format_list(w.Frame("/fifo", "f", "f", 1, 0, 0), "", tree.fs) == "Unable to open /fifo\n"


def test_bounded(tree):
    # A line is cut, and nothing past MAX_SOURCE_BYTES is read.
    write(os.path.join(tree.root, "long.py"), b"x" * 5000 + b"\nnext\n")
    assert w.source_line("/long.py", 1, tree.fs) == "x" * w.MAX_SOURCE_LINE + w.TRUNCATED
    assert w.source_line("/long.py", 2, tree.fs) == "next"
    write(os.path.join(tree.root, "huge.py"), b"y" * (w.MAX_SOURCE_BYTES + 10) + b"\nafter\n")
    assert w.source_line("/huge.py", 1, tree.fs) is None
    assert w.source_line("/huge.py", 2, tree.fs) is None
    assert w.source_lines("/huge.py", tree.fs, 1 << 30) == []


def test_read_as_target_user(tree):
    # Owner, group and other bits, searchable directories; uid 0 reads
    # everything; ANYONE only what others may.
    root = tree.root
    write(os.path.join(root, "private.py"), b"private\n", 0o600)
    write(os.path.join(root, "group.py"), b"group\n", 0o640)
    st = os.stat(os.path.join(root, "group.py"))
    owner = (st.st_uid, st.st_gid, ())
    stranger = (st.st_uid + 12345, st.st_gid + 12345, ())
    member = (st.st_uid + 12345, st.st_gid + 777, (st.st_gid,))

    def line(name, creds):
        return w.source_line(name, 1, w.SourceFiles(root, creds=creds))
    assert line("/private.py", owner) == "private"
    assert line("/private.py", (0, 0, ())) == "private"
    assert line("/private.py", stranger) is None
    assert w.source_line("/private.py", 1, w.SourceFiles(root)) is None
    assert line("/group.py", member) == "group"
    assert line("/group.py", stranger) is None
    assert line("/m.py", stranger) == "one"
    os.chmod(os.path.join(root, "sub"), 0o700)
    write(os.path.join(root, "sub", "hidden.py"), b"hidden\n")
    assert line("/sub/hidden.py", stranger) is None
    assert line("/sub/hidden.py", owner) == "hidden"


def test_may_access_owner_bits_decide_for_owner():
    # Even when others may read.
    class St:
        st_uid, st_gid, st_mode = 1000, 100, stat.S_IFREG | 0o044
    assert not w.may_access(St, (1000, 5, ()), 4)
    assert w.may_access(St, (1001, 5, (100,)), 4)
    assert w.may_access(St, (1001, 5, ()), 4)
    assert w.may_access(St, (0, 0, ()), 4)
    St.st_mode = stat.S_IFDIR | 0o751
    assert w.may_access(St, (1000, 5, ()), 1) and w.may_access(St, (1001, 100, ()), 1) and w.may_access(St, w.ANYONE, 1)
    assert not w.may_access(St, (1001, 5, ()), 4) and w.may_access(St, (1001, 100, ()), 4)


def test_printed_strings_escaped(tree):
    # Every string from the target, source lines included.
    write(os.path.join(tree.root, "esc.py"), b"a = '\x1b[2J'\n")
    fr = w.Frame("/esc.py", "x\n  File \"/etc/spoof.py\", line 1, in fake", "q", 1, 0, 0)
    got = w.format_frames([fr], tree.fs)
    assert "\x1b" not in got and "\n  File \"/etc/spoof.py\"" not in got, got
    assert got == 'Traceback (most recent call first):\n  File "/esc.py", line 1, in x\\n  File "/etc/spoof.py", line 1, in fake\n    a = \'\\x1b[2J\'\n', got
    assert w.format_list(fr, "", tree.fs) == "  >1    a = '\\x1b[2J'\n"
