//go:build !darwin

package main

import "github.com/pyattach/pyattach/venv/environ"

// hostLayout is the XDG specification's layout, which is adrg/xdg's
// answer on Linux too (TestXDGLinuxLayout). The library is not linked
// in here: on Linux its package init opens
// $XDG_CONFIG_HOME/user-dirs.dirs with a plain open, before main runs,
// and a FIFO there blocks pyattach (root, perhaps with a user's
// environment) for good, even for --version.
func hostLayout() environ.Layout { return environ.XDGLayout }
