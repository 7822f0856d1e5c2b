package main

import (
	"github.com/pyattach/pyattach/cmd/internal/planner"
	"github.com/pyattach/pyattach/venv/environ"
)

// writeWalker writes pyattach's stack walker under $XDG_DATA_HOME and
// returns its directory (planner.WriteWalker).
func writeWalker(dirs environ.Dirs) (string, error) { return planner.WriteWalker(dirs.DataHome) }
