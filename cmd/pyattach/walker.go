package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/environ"
	"github.com/pyattach/pyattach/detect/pyoffsets"
	"github.com/pyattach/pyattach/detect/pywalk"
	"github.com/pyattach/pyattach/detect/safefs"
	"github.com/pyattach/pyattach/gdbgen/plan"
)

// walkerFor writes pyattach's stack walker into a private directory
// named by its content ($XDG_DATA_HOME/pyattach/walker/<hash>, kept
// across runs for the init files that name it) and returns what the
// generators need to load it for the resolved interpreter.
func walkerFor(res *target.Result, dirs environ.Dirs) (*plan.Walker, error) {
	if res == nil || !pyoffsets.Supported(res.Python.Version, res.Python.ABIFlags) {
		return nil, nil
	}
	dir, err := writeWalker(dirs)
	if err != nil {
		return nil, err
	}
	w := &plan.Walker{Dir: dir, Version: res.Python.Version, ABIFlags: res.Python.ABIFlags}
	if res.Container {
		w.Root = res.Root
	}
	return w, nil
}

// writeWalker writes the walker's files once per content and returns
// their directory.
func writeWalker(dirs environ.Dirs) (string, error) {
	files := pywalk.Files()
	dir, err := safefs.PrivateDir(dirs.DataHome, environ.Name, "walker", pywalk.Digest(files))
	if err != nil {
		return "", withHint(fmt.Errorf("cannot write pyattach's stack walker: %w", err),
			"set XDG_DATA_HOME to a directory of your own (export XDG_DATA_HOME=$(mktemp -d))")
	}
	for n, b := range files {
		// Written once: the directory is private and named by content,
		// and an unchanged file needs no write (nor its fsync).
		if old, err := os.ReadFile(filepath.Join(dir, n)); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := safefs.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			return "", fmt.Errorf("cannot write pyattach's stack walker: %w", err)
		}
	}
	return dir, nil
}
