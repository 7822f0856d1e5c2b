package main

import (
	"github.com/adrg/xdg"

	"github.com/pyattach/pyattach/cmd/internal/planner"
)

// writeWalker writes pyattach's stack walker under $XDG_DATA_HOME and
// returns its directory (planner.WriteWalker).
func writeWalker() (string, error) { return planner.WriteWalker(xdg.DataHome) }
