package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/venv/environ"
)

// xdgVars are the variables whose defaults hostLayout asks adrg/xdg
// for (macOS); withoutXDGVars unsets them around the question.
var xdgVars = []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS"}

// withoutXDGVars runs f with xdgVars unset in the process environment,
// then puts them back as they were. adrg/xdg reads the process
// environment only, so this is how its defaults are asked for: main
// calls it once, before any command runs and before pyattach starts a
// goroutine. Commands then apply the variables of their injected
// environment themselves (environ.Env.Dirs), so tests that hand Main an
// environment stay hermetic and parallel-safe.
func withoutXDGVars(f func()) {
	saved := map[string]string{}
	for _, k := range xdgVars {
		if v, ok := os.LookupEnv(k); ok {
			saved[k] = v
			os.Unsetenv(k)
		}
	}
	defer func() {
		for k, v := range saved {
			os.Setenv(k, v)
		}
	}()
	f()
}

// layoutOf makes a layout of adrg/xdg's answers for home: each home
// directory relative to home when it lies under it. System-wide
// configuration directories under home (macOS lists
// ~/Library/Preferences and ~/.config) are left out: they are not
// system-wide.
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
