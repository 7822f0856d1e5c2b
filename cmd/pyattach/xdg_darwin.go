package main

import (
	"github.com/adrg/xdg"

	"github.com/pyattach/pyattach/venv/environ"
)

// hostLayout asks adrg/xdg where macOS keeps the base directories the
// XDG variables do not name: ~/Library/Application Support,
// ~/Library/Caches, /Library/Application Support and
// /Library/Preferences. (On macOS the library reads no file.)
func hostLayout() environ.Layout {
	var l environ.Layout
	withoutXDGVars(func() {
		xdg.Reload()
		l = layoutOf(xdg.Home, xdg.ConfigHome, xdg.DataHome, xdg.CacheHome, xdg.StateHome, xdg.ConfigDirs)
	})
	xdg.Reload()
	return l
}
