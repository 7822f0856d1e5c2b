// Package environ is the environment as a value: the KEY=value list a
// process gets (os.Environ in production, a literal list in tests),
// passed down to every package that reads a variable, so that nothing
// below cmd/pyattach's main reads the process environment itself.
//
// Env answers lookups the way os/exec and a shell do: when a key
// repeats, the last entry counts. Dirs computes, from an Env alone, the
// XDG base directories (XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME,
// XDG_STATE_HOME) under which pyattach keeps its configuration, trust
// store, debug-symbol store, stack walker and caches, and ConfigDirs the
// system-wide configuration directories (XDG_CONFIG_DIRS): a variable
// that is unset, empty or not an absolute path is ignored, as the XDG
// Base Directory specification says, and the default of the system's
// Layout is used, under $HOME ("/" when HOME is unset or relative).
// Host, the running system's Layout, is XDGLayout (Linux's) unless
// cmd/pyattach's main set it from adrg/xdg (macOS: ~/Library/...). In-process tests therefore never
// read or write the developer's real directories: they hand pyattach an
// Env naming temporary ones.
//
// It is not a fact about a target, so it is not in detect/. It sits
// under venv/ because venv is the deepest package that reads variables
// (PATH, PYENV_ROOT, CONDA_PREFIX, UV_PYTHON_INSTALL_DIR, XDG_DATA_HOME
// choose which interpreter a name means) and both venv and cmd/ must
// import it: imports run cmd -> venv -> detect. It imports nothing of
// the module.
package environ
