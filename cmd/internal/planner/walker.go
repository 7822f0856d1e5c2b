package planner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/pyoffsets"
	"github.com/pyattach/pyattach/detect/pywalk"
)

// WalkerDirError is a walker directory that cannot be made private
// (the data directory is another user's, or not writable).
type WalkerDirError struct{ Err error }

func (e *WalkerDirError) Error() string {
	return "cannot write pyattach's stack walker: " + e.Err.Error()
}

func (e *WalkerDirError) Unwrap() error { return e.Err }

// WalkerFor writes pyattach's stack walker into a private directory
// under dataHome named by its content (dataHome/pyattach/walker/<hash>,
// kept across runs for the init files that name it) and returns what
// the generators need to load it for the resolved interpreter: nil when
// its offsets do not cover the interpreter's version.
func WalkerFor(res *target.Result, dataHome string) (*plan.Walker, error) {
	if res == nil || !pyoffsets.Supported(res.Python.Version, res.Python.ABIFlags) {
		return nil, nil
	}
	dir, err := WriteWalker(dataHome)
	if err != nil {
		return nil, err
	}
	w := &plan.Walker{Dir: dir, Version: res.Python.Version, ABIFlags: res.Python.ABIFlags}
	if res.Container {
		w.Root = res.Root
	}
	return w, nil
}

// WriteWalker writes the walker's files once per content under
// dataHome ($XDG_DATA_HOME) and returns their directory.
func WriteWalker(dataHome string) (string, error) {
	files := pywalk.Files()
	dir, err := safefs.PrivateDir(dataHome, "pyattach", "walker", pywalk.Digest(files))
	if err != nil {
		return "", &WalkerDirError{Err: err}
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
