// Package venv maps a virtual environment, a conda env, a pyenv shim or a
// bare copy of a Python binary onto the real interpreter it came from, and
// proves the mapping by an equal GNU build-id.
//
// gdb auto-loads CPython's extension (python3.X-gdb.py) and finds separate
// debug files by the path and build-id of the objfile. A venv made with
// --copies holds its own copy of the interpreter binary, so /proc/PID/exe
// names a file that no auto-load directory knows. This package finds the
// original: it reads the venv's pyvenv.cfg (PEP 405), or a Python 2
// virtualenv's lib/python2.7/orig-prefix.txt, builds an ordered list of
// candidate interpreters (the cfg's executable and home, PATH, /usr/bin,
// pyenv's versions, uv's managed Pythons, conda installs) and accepts the
// first whose build-id equals the copy's.
//
// Layouts it knows:
//
//   - PEP 405 venvs (python -m venv, virtualenv >= 20, uv venv): pyvenv.cfg
//     in the root with home, version or version_info, and, from CPython
//     3.11 on, executable and command. bin/python is a copy (--copies) or a
//     symlink chain to the base interpreter.
//   - Python 2 virtualenvs (virtualenv < 20, and virtualenv 20 creating a
//     Python 2 env without pyvenv.cfg support): no pyvenv.cfg;
//     lib/python2.7/orig-prefix.txt holds the base prefix, and bin/python
//     is a copy of <prefix>/bin/python2.7.
//   - conda envs: a conda-meta/ directory; bin/python is a real install,
//     its own interpreter.
//   - pyenv: versions under $PYENV_ROOT/versions/X.Y.Z are real installs;
//     the shims in $PYENV_ROOT/shims are shell scripts, resolved natively
//     by PyenvWhich the way `pyenv which` does.
//
// ParsePyvenvCfg and IsPyenvShim are pure parsers over an io.Reader. The
// functions that touch the file system take everything else they need from
// Options (the environment as an environ.Env, never os.Getenv), so that tests
// can fake HOME, PATH, PYENV_ROOT and the rest.
package venv
