// Package pyext finds the CPython debugger extension that matches an
// interpreter: for gdb, CPython's Tools/gdb/libpython.py as the
// distributions and `make install` ship it (py-bt, py-list, py-locals);
// for lldb, the cpython_lldb module, and a copy of libpython.py that
// cmd/internal/extfetch fetched into pyattach's cache for an exact
// CPython tag (FetchedPath, with its SHA-256 beside it: PinSuffix, Pin).
// Finding is a fact and stays here; the download and the write are a
// tool of the fetch-extension command and live there.
//
// FindGDB looks, in this order, for the interpreter and for libpython
// (each as given and as its real path; gdb auto-loads by both):
//
//  1. debian-auto-load: <datadir>/auto-load/<objfile>-gdb.py
//     (/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py, python3.11d-gdb.py,
//     .../usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0-gdb.py). The
//     micro version comes from dpkg's database when the python3.X-dbg or
//     libpython3.X-dbg package that lists the file is installed.
//  2. fedora-debug: <debugdir>/<objfile>-gdb.py, <debugdir>/<objfile>.debug-gdb.py
//     and <debugdir>/<objdir>/<objname>-*.debug-gdb.py
//     (libpython3.12.so.1.0-3.12.1-1.fc39.x86_64.debug-gdb.py, version
//     3.12.1); with no libpython known, also
//     <debugdir>/usr/lib64/libpython3.X.so.1.0-*.debug-gdb.py.
//  3. beside-binary (pyenv's python-build copies the file there; CPython's
//     own `make install` does not): python3.X<abiflags>-gdb.py,
//     python3.X-gdb.py and <objfile>-gdb.py beside the interpreter, and
//     <libpython>-gdb.py beside libpython. The version is refined from a
//     version directory in the path (~/.pyenv/versions/3.12.1/...) or
//     from <prefix>/include/python3.X*/patchlevel.h.
//  4. build-tree: python-gdb.py beside the interpreter (`make` writes it
//     in a CPython build tree), version from Include/patchlevel.h in the
//     tree, or in the source tree that the build's Makefile names.
//  5. config: Input.Extra, each a file or a directory holding *-gdb.py
//     or libpython.py files.
//  6. fetched: <CacheDir>/extensions/<X.Y.Z>/libpython.py (see FetchedPath).
//
// With a container root (Input.Root, a host path such as /proc/PID/root),
// steps 1 to 4 run first inside the root, with symbolic links resolved
// as if the root were "/", then on the host; Extension.Path is then the
// path as the process sees it and Extension.HostPath the file to read on
// the host. Steps 5 and 6 are host paths.
//
// For a foreign target (Input.Foreign: a container, another user's
// process) a file under the root is never accepted, whoever owns it:
// the container wrote it. The host's own extension or a fetched copy
// serves only for the interpreter's exact X.Y.Z, and a fetched copy only
// while its content still has the SHA-256 recorded beside it
// (libpython.py.sha256); otherwise the caller falls back to pyattach's
// memory walker.
//
// A file is accepted only when its first 64 KiB look like libpython.py
// (it defines class PyObjectPtr). A small stub that execs, sources or
// imports another file is followed once. Among the accepted files, one
// of the interpreter's exact X.Y.Z version beats one that only matches
// X.Y, which beats one of unknown version, which beats one of another X.Y;
// within a rank, the first in search order wins. Extension.Warnings say
// when the version differs. The debugger runs the file, so a file that
// someone other than Input.UID or root could change (it, a directory on
// its way or a link to it: saferead.CheckTrusted) is refused, wherever it
// was found, and the reason is listed in tried.
//
// FindLLDB finds an installed cpython_lldb module; SitePackages lists the
// site-packages directories to search for it.
package pyext
