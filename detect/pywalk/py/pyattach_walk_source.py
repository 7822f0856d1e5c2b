"""The target's source files, read as the target would read them: under
its root, from its working directory, with its credentials (see
open_source). Lines are returned as read: they are escaped
(pyattach_walk_text.escape) where they are printed."""

import os
import stat

from pyattach_walk_text import bounded

# How much of a source file is read, and of a line printed.
MAX_SOURCE_BYTES = 4 << 20
MAX_SOURCE_LINE = 1024
_MAX_LINKS = 40
# uid, gid and groups that match no file's owner or group: only what
# anyone may read is read.
ANYONE = (-1, -1, ())


class SourceFiles(object):
    """Where and as whom the target's files are read: root is its root
    directory ("" or "/" for this one), cwd its working directory for
    relative names ("" for none: relative to root when root is not /),
    creds its (uid, gid, groups) for file permissions (uid 0 reads
    everything; ANYONE only what others may read)."""

    def __init__(self, root="", cwd="", creds=ANYONE):
        self.root = root or "/"
        self.cwd = cwd
        self.creds = creds


def process_creds(pid):
    """(fsuid, fsgid, groups) of a live process from /proc/PID/status,
    ANYONE when they cannot be read."""
    ids = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Uid", "Gid", "Groups"):
                    ids[key] = [int(x) for x in rest.split()]
        return ids["Uid"][3], ids["Gid"][3], tuple(ids.get("Groups", ()))
    except (IOError, OSError, KeyError, IndexError, ValueError):
        return ANYONE


def process_files(pid, live, root="", creds=None):
    """The SourceFiles of a process: a live one's own view through /proc
    (its root, cwd and credentials), else the root pyattach gave (a
    core's container root) and creds (the core's owner, ANYONE when not
    known)."""
    if live and pid and os.path.isdir("/proc/%d" % pid):
        return SourceFiles("/proc/%d/root" % pid, "/proc/%d/cwd" % pid, process_creds(pid))
    return SourceFiles(root, "", tuple(creds) if creds else ANYONE)


def may_access(st, creds, bit):
    """Whether creds may read (bit 4) or search (bit 1) the file of stat
    st, by its mode bits as the kernel checks them (ACLs not read)."""
    uid, gid, groups = creds
    if uid == 0:
        return True
    mode = st.st_mode
    if st.st_uid == uid:
        return bool(mode & (bit << 6))
    if st.st_gid == gid or st.st_gid in groups:
        return bool(mode & (bit << 3))
    return bool(mode & bit)


def open_source(filename, files):
    """A descriptor open for reading on the target's file filename, or
    None. The name is resolved one component at a time under files.root,
    as the kernel resolves it for the target: ".." and symbolic links
    (absolute ones from the root) never leave that root, every directory
    must be searchable and the file readable by files.creds, and only a
    regular file is opened (a FIFO, device or directory is not: it is
    looked at through O_PATH only, so nothing blocks and no device
    opens)."""
    if not filename or "\0" in filename or filename.startswith("<"):
        return None
    dirflags = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
    fds = []

    def track(fd):
        fds.append(fd)
        return fd

    try:
        root = track(os.open(files.root, dirflags))
        root_st = os.fstat(root)
        if os.path.isabs(filename):
            cur = root
        elif files.cwd:
            cur = track(os.open(files.cwd, dirflags))
        elif files.root == "/":
            cur = track(os.open(".", dirflags))
        else:
            cur = root
        parts = [p for p in filename.split("/") if p not in ("", ".")]
        links = 0
        st = os.fstat(cur)
        fd = cur
        while parts:
            name = parts.pop(0)
            if not stat.S_ISDIR(st.st_mode) or not may_access(st, files.creds, 1):
                return None
            if name == "..":
                if (st.st_dev, st.st_ino) != (root_st.st_dev, root_st.st_ino):
                    cur = track(os.open("..", dirflags, dir_fd=cur))
                    st = os.fstat(cur)
                fd = cur
                continue
            fd = track(os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=cur))
            fst = os.fstat(fd)
            if stat.S_ISLNK(fst.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    return None
                dest = os.readlink(name, dir_fd=cur)
                if dest.startswith("/"):
                    cur, st = root, root_st
                parts = [p for p in dest.split("/") if p not in ("", ".")] + parts
                fd = cur
                continue
            cur, st = fd, fst
        if not stat.S_ISREG(st.st_mode) or not may_access(st, files.creds, 4):
            return None
        # Reopened through the O_PATH descriptor: the same inode.
        f = os.open("/proc/self/fd/%d" % fd, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        fst = os.fstat(f)
        if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            os.close(f)
            return None
        return f
    except (IOError, OSError, ValueError):
        return None
    finally:
        for d in fds:
            os.close(d)


def source_lines(filename, files, last):
    """The first last lines of the target's file, decoded, without their
    line ends; fewer when the file is shorter or longer than
    MAX_SOURCE_BYTES; None when it cannot be read (see open_source)."""
    fd = open_source(filename, files)
    if fd is None:
        return None
    chunks, size, newlines = [], 0, 0
    try:
        while newlines < last and size < MAX_SOURCE_BYTES:
            chunk = os.read(fd, min(1 << 16, MAX_SOURCE_BYTES - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            newlines += chunk.count(b"\n")
    except (IOError, OSError):
        return None
    finally:
        os.close(fd)
    lines = b"".join(chunks).split(b"\n")
    if size >= MAX_SOURCE_BYTES and newlines < last:
        lines.pop()  # cut by the bound, not by the file's end
    elif lines and lines[-1] == b"":
        lines.pop()
    return [l.rstrip(b"\r").decode("utf-8", "replace") for l in lines[:last]]


def source_line(filename, lineno, files):
    """The stripped source line lineno of the target's file, cut at
    MAX_SOURCE_LINE characters, or None. Not escaped."""
    if lineno is None or lineno < 1:
        return None
    return source_lines_at(filename, [lineno], files)[lineno]


def source_lines_at(filename, linenos, files):
    """{lineno: source_line(filename, lineno, files)} for each of linenos
    (each a positive int), the file opened and read once."""
    lines = source_lines(filename, files, max(linenos))
    out = {}
    for n in linenos:
        out[n] = bounded(lines[n - 1].strip(), MAX_SOURCE_LINE) if lines and len(lines) >= n else None
    return out
