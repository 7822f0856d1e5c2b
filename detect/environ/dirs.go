package environ

import "path/filepath"

// Name is the directory pyattach keeps its files in under each XDG base
// directory.
const Name = "pyattach"

// Dirs are the XDG base directories, each an absolute path.
type Dirs struct {
	ConfigHome string // $XDG_CONFIG_HOME, else $HOME/.config
	DataHome   string // $XDG_DATA_HOME, else $HOME/.local/share
	CacheHome  string // $XDG_CACHE_HOME, else $HOME/.cache
	StateHome  string // $XDG_STATE_HOME, else $HOME/.local/state
}

// Dirs returns the XDG base directories of e. A variable that is unset,
// empty or relative is ignored (the specification asks for absolute
// paths only) and its default under $HOME is used; an unset or relative
// HOME counts as "/".
func (e Env) Dirs() Dirs {
	home := e.Home()
	if !filepath.IsAbs(home) {
		home = "/"
	}
	pick := func(key string, def ...string) string {
		if v := e.Get(key); filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return filepath.Join(append([]string{home}, def...)...)
	}
	return Dirs{
		ConfigHome: pick("XDG_CONFIG_HOME", ".config"),
		DataHome:   pick("XDG_DATA_HOME", ".local", "share"),
		CacheHome:  pick("XDG_CACHE_HOME", ".cache"),
		StateHome:  pick("XDG_STATE_HOME", ".local", "state"),
	}
}

// Config returns $XDG_CONFIG_HOME/pyattach/elem...
func (d Dirs) Config(elem ...string) string { return join(d.ConfigHome, elem) }

// Data returns $XDG_DATA_HOME/pyattach/elem...
func (d Dirs) Data(elem ...string) string { return join(d.DataHome, elem) }

// Cache returns $XDG_CACHE_HOME/pyattach/elem...
func (d Dirs) Cache(elem ...string) string { return join(d.CacheHome, elem) }

// State returns $XDG_STATE_HOME/pyattach/elem...
func (d Dirs) State(elem ...string) string { return join(d.StateHome, elem) }

// ConfigFile is the user's configuration file.
func (d Dirs) ConfigFile() string { return d.Config("config.toml") }

func join(base string, elem []string) string {
	return filepath.Join(append([]string{base, Name}, elem...)...)
}
