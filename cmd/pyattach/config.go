package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/adrg/xdg"
)

// Config is the configuration file. The user's file
// ($XDG_CONFIG_HOME/pyattach/config.toml, or --config) is read first,
// then the project's .pyattach.toml in the working directory or the
// nearest parent; lists are joined, and the project's scalars win.
type Config struct {
	// DebugDirs are searched for separate debug files after
	// /usr/lib/debug and pyattach's own store, before --debug-dir.
	DebugDirs []string `toml:"debug_dirs"`
	// Extensions are CPython gdb extension files (or directories holding
	// *-gdb.py or libpython.py) to consider besides the installed ones.
	Extensions []string `toml:"extensions"`
	// ExtensionBaseURL is where fetch-extension downloads
	// Tools/gdb/libpython.py from: <base>/v<X.Y.Z>/Tools/gdb/libpython.py.
	ExtensionBaseURL string `toml:"extension_base_url"`
	// Offline, when true, never asks debuginfod servers (as --offline).
	Offline bool `toml:"offline"`
	// Sources maps names to local source trees (as --source NAME=DIR):
	// [sources] echion = "~/src/echion".
	Sources map[string]string `toml:"sources"`

	// Files lists the configuration files that were read.
	Files []string `toml:"-"`
}

// ProjectConfigName is the per-project configuration file.
const ProjectConfigName = ".pyattach.toml"

// DefaultExtensionBaseURL serves CPython's sources by tag.
const DefaultExtensionBaseURL = "https://raw.githubusercontent.com/python/cpython"

// loadConfig reads the user's and the project's configuration files.
// userFile overrides the XDG location; a missing file is no error unless
// it was named explicitly.
func loadConfig(userFile, cwd, home string) (*Config, error) {
	cfg := &Config{}
	explicit := userFile != ""
	if !explicit {
		userFile = filepath.Join(xdg.ConfigHome, "pyattach", "config.toml")
	}
	if err := cfg.merge(userFile, home); err != nil {
		if explicit || !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if p := findProjectConfig(cwd, home); p != "" {
		if err := cfg.merge(p, home); err != nil {
			return nil, err
		}
	}
	if cfg.ExtensionBaseURL == "" {
		cfg.ExtensionBaseURL = DefaultExtensionBaseURL
	}
	return cfg, nil
}

// findProjectConfig looks for .pyattach.toml in dir and its parents,
// stopping at the home directory.
func findProjectConfig(dir, home string) string {
	for dir != "" {
		p := filepath.Join(dir, ProjectConfigName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
		if dir == home {
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	return ""
}

// configError is a problem with a configuration file.
type configError struct {
	file string
	err  error
}

func (e *configError) Error() string { return e.file + ": " + e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

var errConfig = errors.New("invalid configuration")

func (c *Config) merge(file, home string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var f Config
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return &configError{file, fmt.Errorf("%w: line %d: %s", errConfig, pe.Position.Line, pe.Message)}
		}
		return &configError{file, fmt.Errorf("%w: %v", errConfig, err)}
	}
	if und := md.Undecoded(); len(und) > 0 {
		var keys []string
		for _, k := range und {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		return &configError{file, fmt.Errorf("%w: unknown key %s (known: debug_dirs, extensions, extension_base_url, offline, sources)", errConfig, strings.Join(keys, ", "))}
	}
	base := filepath.Dir(file)
	for _, d := range f.DebugDirs {
		c.DebugDirs = append(c.DebugDirs, expandPath(d, base, home))
	}
	for _, e := range f.Extensions {
		c.Extensions = append(c.Extensions, expandPath(e, base, home))
	}
	if f.ExtensionBaseURL != "" {
		u := strings.TrimRight(f.ExtensionBaseURL, "/")
		if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
			return &configError{file, fmt.Errorf("%w: extension_base_url %q is not an http(s) URL", errConfig, f.ExtensionBaseURL)}
		}
		c.ExtensionBaseURL = u
	}
	for name, dir := range f.Sources {
		if c.Sources == nil {
			c.Sources = map[string]string{}
		}
		c.Sources[name] = expandPath(dir, base, home)
	}
	if md.IsDefined("offline") {
		c.Offline = f.Offline
	}
	c.Files = append(c.Files, file)
	return nil
}

// expandPath expands a leading ~/ and makes a relative path relative to
// the directory of the file that names it.
func expandPath(p, base, home string) string {
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(base, p)
	}
	return filepath.Clean(p)
}
