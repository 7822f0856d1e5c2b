package environ

import "path/filepath"

// Name is the directory pyattach keeps its files in under each XDG base
// directory.
const Name = "pyattach"

// Dirs are the XDG base directories, each an absolute path.
type Dirs struct {
	ConfigHome string // $XDG_CONFIG_HOME, else the layout's (Linux: $HOME/.config)
	DataHome   string // $XDG_DATA_HOME, else the layout's (Linux: $HOME/.local/share)
	CacheHome  string // $XDG_CACHE_HOME, else the layout's (Linux: $HOME/.cache)
	StateHome  string // $XDG_STATE_HOME, else the layout's (Linux: $HOME/.local/state)
}

// Layout is where a system keeps the base directories that the XDG
// variables do not name: each home directory relative to $HOME (or
// absolute), and the
// system-wide configuration directories (absolute, most important
// first).
type Layout struct {
	ConfigHome, DataHome, CacheHome, StateHome string
	ConfigDirs                                 []string
}

// XDGLayout is the XDG Base Directory specification's defaults, which
// are Linux's.
var XDGLayout = Layout{
	ConfigHome: ".config",
	DataHome:   ".local/share",
	CacheHome:  ".cache",
	StateHome:  ".local/state",
	ConfigDirs: []string{"/etc/xdg"},
}

// Host is the running system's layout. It is XDGLayout until
// cmd/pyattach's main sets it, once, before any command runs (on macOS
// from the adrg/xdg library: ~/Library/Application Support and
// ~/Library/Caches); nothing else changes it, so tests see XDGLayout.
var Host = XDGLayout

// Dirs returns the XDG base directories of e on the running system
// (Host). A variable that is unset, empty or relative is ignored (the
// specification asks for absolute paths only) and the layout's default
// under $HOME is used; an unset or relative HOME counts as "/".
func (e Env) Dirs() Dirs { return e.DirsIn(Host) }

// DirsIn is Dirs with the defaults of layout l.
func (e Env) DirsIn(l Layout) Dirs {
	home := e.Home()
	if !filepath.IsAbs(home) {
		home = "/"
	}
	pick := func(key string, def string) string {
		if v := e.Get(key); filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		if filepath.IsAbs(def) {
			return filepath.Clean(def)
		}
		return filepath.Join(home, def)
	}
	return Dirs{
		ConfigHome: pick("XDG_CONFIG_HOME", l.ConfigHome),
		DataHome:   pick("XDG_DATA_HOME", l.DataHome),
		CacheHome:  pick("XDG_CACHE_HOME", l.CacheHome),
		StateHome:  pick("XDG_STATE_HOME", l.StateHome),
	}
}

// ConfigDirs returns the system-wide configuration directories of e on
// the running system, most important first.
func (e Env) ConfigDirs() []string { return e.ConfigDirsIn(Host) }

// ConfigDirsIn is ConfigDirs with the defaults of layout l: the
// absolute entries of $XDG_CONFIG_DIRS (relative ones are ignored, as
// the specification says), else the layout's. Each is cleaned, and
// repeats are dropped.
func (e Env) ConfigDirsIn(l Layout) []string {
	var out []string
	seen := map[string]bool{}
	add := func(list []string) {
		for _, d := range list {
			if d = filepath.Clean(d); filepath.IsAbs(d) && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	add(e.List("XDG_CONFIG_DIRS"))
	if len(out) == 0 {
		add(l.ConfigDirs)
	}
	return out
}

// Config returns a path under pyattach's configuration directory.
func (d Dirs) Config(elem ...string) string { return join(d.ConfigHome, elem) }

// Data returns a path under pyattach's data directory.
func (d Dirs) Data(elem ...string) string { return join(d.DataHome, elem) }

// Cache returns a path under pyattach's cache directory.
func (d Dirs) Cache(elem ...string) string { return join(d.CacheHome, elem) }

// State returns a path under pyattach's state directory.
func (d Dirs) State(elem ...string) string { return join(d.StateHome, elem) }

// ConfigFile is the user's configuration file.
func (d Dirs) ConfigFile() string { return d.Config("config.toml") }

// ConfigFileIn is the configuration file in a system-wide configuration
// directory dir.
func ConfigFileIn(dir string) string { return join(dir, []string{"config.toml"}) }

func join(base string, elem []string) string {
	return filepath.Join(append([]string{base, Name}, elem...)...)
}
