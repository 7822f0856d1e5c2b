package venv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Kind says how an environment holds its interpreter.
type Kind string

// Kinds of environment.
const (
	// KindCopies: bin/python is a copy of the base interpreter (venv
	// --copies, virtualenv --copies, Python 2 virtualenv). gdb cannot
	// auto-load anything for it by path.
	KindCopies Kind = "copies"
	// KindSymlinks: bin/python is a symlink chain that ends outside the
	// environment, at the base interpreter.
	KindSymlinks Kind = "symlinks"
	// KindConda: a conda env; bin/python is a real install.
	KindConda Kind = "conda"
	// KindNone: the environment has no usable bin/python.
	KindNone Kind = "none"
)

// Env is a virtual environment, Python 2 virtualenv or conda env.
type Env struct {
	// Path is the root directory, absolute.
	Path string `json:"path"`
	// Kind says how bin/python relates to the base interpreter.
	Kind Kind `json:"kind"`
	// Python is the path of bin/python (else bin/python3, bin/python2)
	// inside the environment, unresolved; "" if there is none.
	Python string `json:"python"`
	// Cfg is the parsed pyvenv.cfg; nil when there is none.
	Cfg *Cfg `json:"cfg,omitempty"`
	// Home is the base interpreter's directory: pyvenv.cfg's home, a
	// Python 2 virtualenv's <orig-prefix>/bin, or a conda env's own
	// root.
	Home string `json:"home"`
	// Python2 is true for a Python 2 virtualenv (orig-prefix.txt under
	// lib/python2.X).
	Python2 bool `json:"python2,omitempty"`
	// OrigPrefix is the base prefix read from lib/pythonX.Y/orig-prefix.txt
	// (virtualenv before version 20, and its Python 2 layout).
	OrigPrefix string `json:"orig_prefix,omitempty"`
	// Version is the Python version when known: pyvenv.cfg's version
	// (X.Y.Z), else X.Y from the lib/pythonX.Y directory. "" if unknown.
	Version string `json:"version,omitempty"`
}

// maxOrigPrefix bounds the read of orig-prefix.txt.
const maxOrigPrefix = 64 << 10

// Detect looks at dir as the root of an environment. It recognises, in
// this order: a PEP 405 venv (pyvenv.cfg), a virtualenv without
// pyvenv.cfg (lib/pythonX.Y/orig-prefix.txt; Python 2 virtualenvs), a
// conda env (conda-meta/). Anything else is an error wrapping ErrNotVenv.
//
// A pyvenv.cfg that cannot be parsed is a *CfgError (ErrMalformedCfg).
// When the environment is recognised but has no interpreter, Detect
// returns the Env (Kind KindNone, Python "") together with an error
// wrapping ErrNoPython, so that callers can still report what was found;
// a bin/python whose symlinks loop gives the Env and ErrSymlinkLoop.
func Detect(dir string) (*Env, error) {
	return detect(dir, "")
}

// FindEnv finds the environment that holds the interpreter exe, such as
// /x/.venv/bin/python: the parent of exe's directory when exe's directory
// is named bin and that parent is an environment that Detect recognises.
// exe is taken as given; its symlinks are not followed. FindEnv returns
// (nil, nil) when exe is not inside an environment.
//
// When the environment has no bin/python, python3 or python2, exe itself
// is taken as its interpreter.
func FindEnv(exe string) (*Env, error) {
	abs, err := filepath.Abs(exe)
	if err != nil {
		return nil, fmt.Errorf("find env of %s: %w", exe, err)
	}
	bin := filepath.Dir(abs)
	if filepath.Base(bin) != "bin" {
		return nil, nil
	}
	env, err := detect(filepath.Dir(bin), abs)
	if errors.Is(err, ErrNotVenv) {
		return nil, nil
	}
	return env, err
}

// detect is Detect; extra, when not "", is one more interpreter path to
// fall back on after bin/python, bin/python3 and bin/python2.
func detect(dir, extra string) (*Env, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("detect env %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w: %w", abs, ErrNotVenv, err)
		}
		return nil, fmt.Errorf("detect env %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w: not a directory", abs, ErrNotVenv)
	}
	env := &Env{Path: abs}

	cfgPath := filepath.Join(abs, "pyvenv.cfg")
	origPrefix, origVersion, origErr := findOrigPrefix(abs)
	switch {
	case isFile(cfgPath):
		cfg, err := ReadCfgFile(cfgPath)
		if err != nil {
			return nil, err
		}
		env.Cfg = &cfg
		env.Home = cfg.Home
		env.Version = cfg.Version
		if env.Version == "" {
			env.Version = libVersion(abs)
		}
	case origErr != nil:
		return nil, origErr
	case origPrefix != "":
		env.OrigPrefix = origPrefix
		env.Home = filepath.Join(origPrefix, "bin")
		env.Version = origVersion
		env.Python2 = strings.HasPrefix(origVersion, "2.")
	case isDir(filepath.Join(abs, "conda-meta")):
		env.Kind = KindConda
		env.Home = abs
		env.Version = libVersion(abs)
	default:
		return nil, fmt.Errorf("%s: %w: no pyvenv.cfg, lib/python*/orig-prefix.txt or conda-meta/", abs, ErrNotVenv)
	}

	names := []string{"python", "python3", "python2"}
	for _, n := range names {
		p := filepath.Join(abs, "bin", n)
		if _, err := os.Lstat(p); err == nil {
			env.Python = p
			break
		}
	}
	if env.Python == "" && extra != "" {
		if _, err := os.Lstat(extra); err == nil {
			env.Python = extra
		}
	}
	if env.Python == "" {
		if env.Kind == "" {
			env.Kind = KindNone
		}
		return env, fmt.Errorf("%s: %w: no bin/python, bin/python3 or bin/python2", abs, ErrNoPython)
	}

	real, err := realPath(env.Python)
	if err != nil {
		if env.Kind == "" {
			env.Kind = KindNone
		}
		if errors.Is(err, ErrSymlinkLoop) {
			return env, err
		}
		return env, fmt.Errorf("%s: %w: %w", abs, ErrNoPython, err)
	}
	if env.Kind == KindConda {
		return env, nil
	}
	// A symlink chain that ends inside the environment (virtualenv's
	// python3 -> python, python a copy) still holds a copy.
	fi, err = os.Lstat(env.Python)
	if err != nil {
		return env, fmt.Errorf("detect env %s: %w", abs, err)
	}
	realRoot, err := filepath.EvalSymlinks(abs)
	if err != nil {
		realRoot = abs
	}
	if fi.Mode()&fs.ModeSymlink == 0 || within(real, realRoot) || within(real, abs) {
		env.Kind = KindCopies
	} else {
		env.Kind = KindSymlinks
	}
	return env, nil
}

// findOrigPrefix looks for lib/pythonX.Y/orig-prefix.txt under root and
// returns the prefix and X.Y. It returns "" when there is none.
func findOrigPrefix(root string) (prefix, version string, err error) {
	matches := globIn(filepath.Join(root, "lib", "python*"), "orig-prefix.txt")
	sort.Strings(matches)
	for _, m := range matches {
		v := strings.TrimPrefix(filepath.Base(filepath.Dir(m)), "python")
		if pyversion.MajorMinorOf(v) != v || !isFile(m) {
			continue
		}
		f, err := saferead.Open(m)
		if err != nil {
			return "", "", fmt.Errorf("read orig-prefix: %w", err)
		}
		line, err := bufio.NewReader(io.LimitReader(f, maxOrigPrefix)).ReadString('\n')
		f.Close()
		if err != nil && err != io.EOF {
			return "", "", fmt.Errorf("read %s: %w", m, err)
		}
		p := strings.TrimSpace(line)
		if p == "" || strings.ContainsRune(p, 0) || !filepath.IsAbs(p) {
			return "", "", fmt.Errorf("%s: %w: orig-prefix.txt does not hold an absolute path: %s", root, ErrNotVenv, quoteShort(p))
		}
		return filepath.Clean(p), v, nil
	}
	return "", "", nil
}

// libVersion returns X.Y from root/lib/pythonX.Y, when there is exactly
// one such directory.
func libVersion(root string) string {
	matches, _ := filepath.Glob(filepath.Join(root, "lib", "python[0-9]*"))
	found := ""
	for _, m := range matches {
		v := strings.TrimPrefix(filepath.Base(m), "python")
		if pyversion.MajorMinorOf(v) != v || !isDir(m) {
			continue
		}
		if found != "" && found != v {
			return ""
		}
		found = v
	}
	return found
}

// realPath returns the absolute path of name with every symlink resolved.
// A loop gives an error wrapping ErrSymlinkLoop.
func realPath(name string) (string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", fmt.Errorf("%s: %w", name, ErrSymlinkLoop)
		}
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links") {
			return "", fmt.Errorf("%s: %w", name, ErrSymlinkLoop)
		}
		return "", err
	}
	return real, nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func isFile(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}
