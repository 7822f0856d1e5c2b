package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"github.com/pyattach/pyattach/detect/environ"
)

// xdgVars are the variables whose defaults hostLayout asks adrg/xdg for.
var xdgVars = []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS"}

// hostLayout asks adrg/xdg where this system keeps the base directories
// the XDG variables do not name (macOS: ~/Library/Application Support,
// ~/Library/Caches, /Library/Application Support; Linux: the XDG
// specification's). The library reads the process environment only (in
// its init and in Reload), so the variables are unset around one
// Reload and put back as they were: main calls this once, before any
// command runs and before pyattach starts a goroutine. Commands then
// apply the variables of their injected environment themselves
// (environ.Env.Dirs), so tests that hand Main an environment stay
// hermetic and parallel-safe. System-wide configuration directories
// under $HOME (macOS lists ~/Library/Preferences and ~/.config) are left
// out: they are not system-wide.
func hostLayout() environ.Layout {
	saved := map[string]string{}
	for _, k := range xdgVars {
		if v, ok := os.LookupEnv(k); ok {
			saved[k] = v
			os.Unsetenv(k)
		}
	}
	xdg.Reload()
	l := layoutOf(xdg.Home, xdg.ConfigHome, xdg.DataHome, xdg.CacheHome, xdg.StateHome, xdg.ConfigDirs)
	for k, v := range saved {
		os.Setenv(k, v)
	}
	xdg.Reload()
	return l
}

// layoutOf makes a layout of the library's answers for home: each home
// directory relative to home when it lies under it.
func layoutOf(home, config, data, cache, state string, configDirs []string) environ.Layout {
	l := environ.XDGLayout
	l.ConfigDirs = nil
	rel := func(p string, def string) string {
		if !filepath.IsAbs(p) {
			return def
		}
		if filepath.IsAbs(home) {
			if r, err := filepath.Rel(home, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
				return r
			}
		}
		return filepath.Clean(p)
	}
	l.ConfigHome = rel(config, l.ConfigHome)
	l.DataHome = rel(data, l.DataHome)
	l.CacheHome = rel(cache, l.CacheHome)
	l.StateHome = rel(state, l.StateHome)
	for _, d := range configDirs {
		if r := rel(d, ""); filepath.IsAbs(r) {
			l.ConfigDirs = append(l.ConfigDirs, r)
		}
	}
	return l
}
