// Package testenv is for tests only: no package of pyattach's own code
// may import it.
//
// It holds what the tests of every package need from the machine they
// run on, so that each rule is written once:
//
//   - requirements: a tool (Need), a file (NeedFile), root (NeedRoot).
//     A missing one skips the test, except under CI=true, where it fails
//     it (Missing is that one rule);
//   - interpreters, discovered, never named by patch version: Debian's
//     /usr/bin/python3.11 and its debug build with the version found by
//     running them (Debian, DebianDebug), pyenv's builds under
//     $PYENV_ROOT or ~/.pyenv/versions (Pyenv, PyenvAll), and the
//     separate debug files of python3.11-dbg (DebianDebugFile);
//   - the environment lldb 14's Python needs on Debian (LLDBEnv);
//   - fixtures: C programs compiled with gcc (CC) and split from their
//     debug files (SplitDebug), readelf's build-id as an oracle
//     (ReadelfBuildID), a file's DWARF (DWARF), a stripped copy of an
//     interpreter (Stripped), a Python process that waits, killed when
//     the test ends (StartPython, Start, StartReady for testscript), a
//     venv (Venv), a copy (CopyFile), the test binary run as nobody
//     (Nobody) as a helper (HelperMain), and the cached Debian roots
//     scripts/make-roots.sh makes (Roots); a file written with its
//     directories (WriteFile), a tree of files, directories and links
//     written (WriteTree) and listed (ListTree), a directory only the
//     test's user can change (PrivateTempDir), a file that passes for
//     CPython's libpython.py (FakeLibpython);
//   - one interpreter's or root's subtest run alongside the others of
//     its test, a bounded number at once (Parallel);
//   - a table of a pure function's results checked in one loop (Cases),
//     and generated text checked against a golden file (Golden).
//
// It imports the standard library and detect/pyversion (the one version
// parser) only, so that the tests of any other package can use it
// without an import cycle.
//
// Why detect/testenv, when it holds no fact about a target: the import
// rules run cmd -> venv -> detect, and a test may import only what its
// package may, so the test kit sits in the lowest room, where the tests
// of detect/, venv/, gdbgen, lldbgen and cmd/ can all reach it (under
// cmd/internal, Go's internal rule would hide it from every package
// outside cmd/). cmd/pyattach's deps_test lists it as test-only: no
// package's own code may import it.
package testenv
