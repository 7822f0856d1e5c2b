// Package walkerdir writes pyattach's stack walker (the Python files
// detect/pywalk embeds) to disk, into the private directory the
// debuggers load it from: dataHome/pyattach/walker/<hash>, named by the
// files' content and kept across runs for the init files that name it.
//
// It sits under cmd/internal, not beside the files in detect/pywalk,
// because writing pyattach's own files is no fact about a target: detect
// reads, and the commands (planner, dump, init) decide when to write.
package walkerdir

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/pywalk"
)

// DirError is a walker directory that cannot be made private (the data
// directory is another user's, or not writable).
type DirError struct{ Err error }

func (e *DirError) Error() string {
	return "cannot write pyattach's stack walker: " + e.Err.Error()
}

func (e *DirError) Unwrap() error { return e.Err }

// Write writes the walker's files once per content under dataHome
// ($XDG_DATA_HOME) and returns their directory.
//
// The last file written is Complete, holding the digest: a directory that
// has it holds every file whole (each is written under a temporary name
// and renamed), and is not read again.
func Write(dataHome string) (string, error) {
	digest := pywalk.FilesDigest()
	dir, err := safefs.PrivateDir(dataHome, "pyattach", "walker", digest)
	if err != nil {
		return "", &DirError{Err: err}
	}
	if b, err := os.ReadFile(filepath.Join(dir, Complete)); err == nil && string(b) == digest {
		return dir, nil
	}
	files := pywalk.Files()
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
	if err := safefs.WriteFile(filepath.Join(dir, Complete), []byte(digest), 0o644); err != nil {
		return "", fmt.Errorf("cannot write pyattach's stack walker: %w", err)
	}
	return dir, nil
}

// Complete is the file that says a walker directory is whole.
const Complete = ".complete"
