// Package target turns what a user names (a PID, an executable, a
// virtualenv, a script with a shebang, a pyenv shim) into the facts about
// the Python interpreter that really runs: the real interpreter file proved
// by build-id, its Python version and ABI, libpython, the venv it came
// from, whether the process lives in another root or mount namespace, and
// for a PID every mapped module with its build-id.
//
// It joins the lower packages: proc (the process), elfinfo (ELF facts),
// pyinfo (Python facts) and venv (copies back to originals). It touches
// the file system only through the roots it is given: a path in a
// process's root goes through detect/rootfs, which follows links inside
// that root, and its environment is the environ.Env in Options.
package target
