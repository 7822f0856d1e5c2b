// Package config reads pyattach's configuration files (system-wide,
// the user's, the project's .pyattach.toml) into a Config, and keeps
// the trust store that says which project files may carry code
// (`pyattach trust`). It checks every file's size, nesting and types
// before the settings are used; its errors are *Error with the file and
// a hint for the command to print.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"

	"github.com/pyattach/pyattach/cmd/internal/extfetch"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv/environ"
)

// Config is the configuration file. The system-wide files
// (pyattach/config.toml in each $XDG_CONFIG_DIRS directory, /etc/xdg by
// default, the least important first) are read first, then the user's
// file ($XDG_CONFIG_HOME/pyattach/config.toml, or --config), then the
// project's .pyattach.toml in the working directory or the nearest
// parent; lists are joined, and the later file's scalars win. A
// system-wide file is read only when root alone can change it
// (saferead.CheckTrusted for uid 0): pyattach runs as root, and a file
// another user controls must not steer it.
//
// Settings that carry code (see codeKeys) are taken only from a file
// that may become debugger code: the user's own file when it passes
// saferead.CheckTrusted, a project file only once `pyattach trust` has
// recorded it as it is now. From any other file they are ignored, and
// Notices says so.
type Config struct {
	// DebugDirs are searched for separate debug files after
	// /usr/lib/debug and pyattach's own store, before --debug-dir.
	DebugDirs []string
	// Extensions are CPython gdb extension files (or directories holding
	// *-gdb.py or libpython.py) to consider besides the installed ones.
	Extensions []string
	// ExtensionBaseURL is where fetch-extension downloads
	// Tools/gdb/libpython.py from: <base>/v<X.Y.Z>/Tools/gdb/libpython.py.
	ExtensionBaseURL string
	// Offline, when true, never asks debuginfod servers (as --offline).
	Offline bool
	// Sources maps names to local source trees (as --source NAME=DIR):
	// [sources] echion = "~/src/echion".
	Sources map[string]string
	// MaxCoreSize caps a compressed core decompressed into the cache
	// (as --max-core-size): bytes, or a number with K, M, G or T; ""
	// for the default. pyattach checks it when it reads one.
	MaxCoreSize string

	// Files lists the configuration files that were read.
	Files []string
	// Notices are the lines to print on stderr: the code-carrying
	// settings ignored in a file, and how to have them used.
	Notices []string
}

// ProjectFileName is the per-project configuration file.
const ProjectFileName = ".pyattach.toml"

// DefaultExtensionBaseURL serves CPython's sources by tag.
const DefaultExtensionBaseURL = extfetch.DefaultBaseURL

// Limits on a configuration file, checked before the TOML decoder runs.
// BurntSushi/toml's work grows with the size times the nesting (a 40 KB
// nested inline table took 37 s and 4.6 GB); within these limits it is
// a few hundred bytes allocated per byte, some tens of MB at most.
const (
	// maxConfigSize is ample for a few settings; pyattach's files hold
	// well under 4 KiB.
	maxConfigSize = 64 << 10
	// maxConfigDepth bounds [ and { nesting, and the parts of one dotted
	// key; pyattach's own settings need 2 at most.
	maxConfigDepth = 4
)

// maxTrustStoreSize bounds the trust store (about 100 bytes a project).
const maxTrustStoreSize = 1 << 20

// codeKeys are the settings that make the debugger run code: extension
// files are sourced, the base URL chooses what fetch-extension puts in
// the cache that is sourced later, and gdb auto-loads
// <debugdir>/<objfile>-gdb.py from every debug directory. gdb 13's
// defaults say so ("show auto-load safe-path" and "show auto-load
// scripts-directory" both print $debugdir:$datadir/auto-load), and a
// file <dir>/tmp/p/prog-gdb.py runs for /tmp/p/prog once
// "set debug-file-directory /usr/lib/debug:<dir>" is followed by any
// add-auto-load-safe-path (pyattach adds one for an extension beside the
// interpreter), and for every shared library of an attached process
// (TestSecurityDebugDirAutoLoad and security_config_debugdir.txtar).
var codeKeys = []string{"extensions", "extension_base_url", "debug_dirs"}

// knownKeys, in the order the error message lists them.
var knownKeys = []string{"debug_dirs", "extensions", "extension_base_url", "offline", "sources", "max_core_size"}

// Load reads the system-wide, the user's and the project's configuration
// files. userFile overrides the XDG location; a missing file is no error
// unless it was named explicitly. HOME and the XDG directories come from
// env.
func Load(userFile, cwd string, env environ.Env) (*Config, error) {
	cfg := &Config{}
	home, dirs := env.Home(), env.Dirs()
	uid := os.Geteuid()
	if err := cfg.mergeSystem(env.ConfigDirs(), home); err != nil {
		return nil, err
	}
	explicit := userFile != ""
	if !explicit {
		userFile = dirs.ConfigFile()
	}
	if abs, err := filepath.Abs(userFile); err == nil {
		userFile = abs
	}
	data, err := ReadFile(userFile)
	switch {
	case err == nil:
		why := ""
		if terr := saferead.CheckTrusted(userFile, uid); terr != nil {
			why = untrustedWhy(terr, userFile, false, dirs)
		}
		if err := cfg.merge(userFile, data, home, why); err != nil {
			return nil, err
		}
	case explicit || !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if p := FindProject(cwd, home); p != "" {
		data, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := cfg.merge(p, data, home, projectTrust(p, data, uid, dirs)); err != nil {
			return nil, err
		}
	}
	if cfg.ExtensionBaseURL == "" {
		cfg.ExtensionBaseURL = DefaultExtensionBaseURL
	}
	return cfg, nil
}

// mergeSystem merges the system-wide configuration files in dirs (most
// important first) that root alone can change; the others are left out,
// with a notice.
func (c *Config) mergeSystem(dirs []string, home string) error {
	for i := len(dirs) - 1; i >= 0; i-- {
		p := environ.ConfigFileIn(dirs[i])
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err := saferead.CheckTrusted(p, 0); err != nil {
			why := safetext.Fold(err.Error())
			var ue *saferead.UntrustedError
			if errors.As(err, &ue) {
				why = ue.Component + " is " + ue.Reason
			}
			c.Notices = append(c.Notices, fmt.Sprintf("pyattach: ignored %s: %s; a system-wide configuration file must be owned by root and writable by root alone", p, why))
			continue
		}
		data, err := ReadFile(p)
		if err != nil {
			return err
		}
		if err := c.merge(p, data, home, ""); err != nil {
			return err
		}
	}
	return nil
}

// projectTrust returns "" when the project file p, whose content is
// data, may carry code, else why not and what to do about it.
func projectTrust(p string, data []byte, uid int, dirs environ.Dirs) string {
	if err := saferead.CheckTrusted(p, uid); err != nil {
		return untrustedWhy(err, p, true, dirs)
	}
	cmd := "pyattach trust " + shquote.Quote(filepath.Dir(p))
	store, err := LoadTrustStore(dirs)
	if err != nil {
		return fmt.Sprintf("not trusted (%s)", safetext.Fold(err.Error()))
	}
	switch store.State(p, data) {
	case TrustChanged:
		return "changed since it was trusted; to trust it as it is now, run: " + cmd
	case TrustYes:
		return ""
	}
	return "not trusted; to trust it, run: " + cmd
}

// untrustedWhy says why a file that fails saferead.CheckTrusted cannot
// carry code, and what the user can do.
func untrustedWhy(err error, file string, project bool, dirs environ.Dirs) string {
	var ue *saferead.UntrustedError
	if !errors.As(err, &ue) {
		return safetext.Fold(err.Error())
	}
	why := ue.Component + " is " + ue.Reason
	if strings.HasPrefix(ue.Reason, "writable by") {
		fix := "chmod go-w " + shquote.Quote(ue.Component)
		if project {
			fix += " && pyattach trust " + shquote.Quote(filepath.Dir(file))
		}
		return why + "; to fix it, run: " + fix
	}
	own := dirs.ConfigFile()
	if !project && file == own {
		return why + "; review it and pass a configuration file of your own: pyattach --config FILE"
	}
	return why + "; review it and copy the settings you want into a configuration file of your own (" + own + ")"
}

// FindProject looks for .pyattach.toml in dir and its parents,
// stopping at the home directory.
func FindProject(dir, home string) string {
	for dir != "" {
		p := filepath.Join(dir, ProjectFileName)
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

// Error is a problem with a configuration file.
type Error struct {
	File string
	Err  error
	Hint string // "" for the usual "fix or remove FILE"
}

func (e *Error) Error() string { return e.File + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ErrInvalid matches every *Error about a file's content.
var ErrInvalid = errors.New("invalid configuration")

// ReadFile reads a configuration file: a regular file of at most
// maxConfigSize bytes. It never blocks on a FIFO and never reads a
// device.
func ReadFile(name string) ([]byte, error) {
	return readSmallFile(name, maxConfigSize)
}

// readSmallFile reads a regular file of at most max bytes.
func readSmallFile(name string, max int64) ([]byte, error) {
	f, st, err := saferead.OpenRegular(name)
	if errors.Is(err, saferead.ErrNotRegular) {
		return nil, &Error{name, fmt.Errorf("%w: not a regular file (%s)", ErrInvalid, saferead.Kind(st.Mode())),
			"name a regular file: pyattach --config FILE"}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooBig := &Error{name, fmt.Errorf("%w: larger than %d KiB", ErrInvalid, max>>10),
		"a configuration file holds a few settings; fix or remove " + name}
	if st.Size() > max {
		return nil, tooBig
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, tooBig
	}
	return data, nil
}

// Check reports whether a configuration file's content is valid (the
// *Error Load would return for it), without using its settings.
func Check(file string, data []byte) error {
	_, err := parseConfig(file, data)
	return err
}

// fileConfig is one file's settings, checked for type.
type fileConfig struct {
	debugDirs, extensions []string
	baseURL               string
	offline               *bool
	sources               map[string]string
	maxCoreSize           string
}

// parseConfig checks a configuration file's nesting, decodes it, and
// checks that every key is known and of the right type.
func parseConfig(file string, data []byte) (*fileConfig, error) {
	bad := func(format string, args ...any) error {
		return &Error{file, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...), ""}
	}
	if line, err := scanNesting(data, maxConfigDepth); err != nil {
		return nil, bad("line %d: %v", line, err)
	}
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, bad("line %d: %s", pe.Position.Line, pe.Message)
		}
		return nil, bad("%v", err)
	}
	var unknown []string
	for k := range m {
		if !contains(knownKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, bad("unknown key %s (known: %s)", strings.Join(unknown, ", "), strings.Join(knownKeys, ", "))
	}
	var f fileConfig
	var err error
	strList := func(key string) []string {
		v, ok := m[key]
		if !ok || err != nil {
			return nil
		}
		want := fmt.Sprintf(`a list of strings (%s = ["/some/path"])`, key)
		list, ok := v.([]any)
		if !ok {
			err = bad("%s must be %s, not %s", key, want, tomlType(v))
			return nil
		}
		out := make([]string, 0, len(list))
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				err = bad("%s must be %s; item %d is %s", key, want, i+1, tomlType(e))
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	f.debugDirs = strList("debug_dirs")
	f.extensions = strList("extensions")
	if err != nil {
		return nil, err
	}
	if v, ok := m["extension_base_url"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, bad(`extension_base_url must be a string (extension_base_url = "https://..."), not %s`, tomlType(v))
		}
		f.baseURL = s
	}
	if v, ok := m["offline"]; ok {
		b, ok := v.(bool)
		if !ok {
			return nil, bad("offline must be true or false, not %s", tomlType(v))
		}
		f.offline = &b
	}
	if v, ok := m["max_core_size"]; ok {
		switch x := v.(type) {
		case string:
			f.maxCoreSize = x
		case int64:
			f.maxCoreSize = fmt.Sprint(x)
		default:
			return nil, bad(`max_core_size must be a size (max_core_size = "64G"), not %s`, tomlType(v))
		}
	}
	if v, ok := m["sources"]; ok {
		t, ok := v.(map[string]any)
		if !ok {
			return nil, bad(`sources must be a table of names and directories ([sources] then echion = "~/src/echion"), not %s`, tomlType(v))
		}
		f.sources = map[string]string{}
		for name, dir := range t {
			s, ok := dir.(string)
			if !ok {
				return nil, bad("sources.%s must be a directory (a string), not %s", name, tomlType(dir))
			}
			f.sources[name] = s
		}
	}
	return &f, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tomlType names the TOML type of a decoded value.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// merge adds the settings of file (content data) to c. untrusted is ""
// when the file may carry code, else why not: then its code-carrying
// settings are left out, with one notice.
func (c *Config) merge(file string, data []byte, home, untrusted string) error {
	f, err := parseConfig(file, data)
	if err != nil {
		return err
	}
	base := filepath.Dir(file)
	if untrusted != "" {
		var ignored []string
		for _, k := range codeKeys {
			if (k == "extensions" && len(f.extensions) > 0) || (k == "debug_dirs" && len(f.debugDirs) > 0) || (k == "extension_base_url" && f.baseURL != "") {
				ignored = append(ignored, k)
			}
		}
		if len(ignored) > 0 {
			c.Notices = append(c.Notices, fmt.Sprintf("pyattach: ignored %s in %s: %s", strings.Join(ignored, ", "), file, untrusted))
		}
		f.debugDirs, f.extensions, f.baseURL = nil, nil, ""
	}
	for _, d := range f.debugDirs {
		c.DebugDirs = append(c.DebugDirs, ExpandPath(d, base, home))
	}
	for _, e := range f.extensions {
		c.Extensions = append(c.Extensions, ExpandPath(e, base, home))
	}
	if f.baseURL != "" {
		u := strings.TrimRight(f.baseURL, "/")
		if err := extfetch.CheckBaseURL(u); err != nil {
			return &Error{file, fmt.Errorf("%w: extension_base_url: %v", ErrInvalid, err), HTTPSHint}
		}
		c.ExtensionBaseURL = u
	}
	for name, dir := range f.sources {
		if c.Sources == nil {
			c.Sources = map[string]string{}
		}
		c.Sources[name] = ExpandPath(dir, base, home)
	}
	if f.offline != nil {
		c.Offline = *f.offline
	}
	if f.maxCoreSize != "" {
		c.MaxCoreSize = f.maxCoreSize
	}
	c.Files = append(c.Files, file)
	return nil
}

// HTTPSHint is the advice for a base URL that is not https.
const HTTPSHint = "use an https:// URL: a mirror of CPython's sources served over TLS (the default is " + DefaultExtensionBaseURL + ")"

// ExpandPath expands a leading ~/ and makes a relative path relative to
// the directory of the file that names it.
func ExpandPath(p, base, home string) string {
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

// scanNesting checks, without decoding, that TOML text nests [ and {
// at most max deep and that no dotted key has more than max parts. It
// skips strings and comments as TOML does; it returns the 1-based line
// of the first excess. Text it misreads is text the decoder rejects.
func scanNesting(data []byte, max int) (int, error) {
	line, depth, dots := 1, 0, 0
	n := len(data)
	for i := 0; i < n; i++ {
		c := data[i]
		switch c {
		case '\n':
			line++
			dots = 0
		case '#':
			for i+1 < n && data[i+1] != '\n' {
				i++
			}
		case '[', '{':
			depth++
			dots = 0
			if depth > max {
				return line, fmt.Errorf("lists and tables nested more than %d deep (pyattach's settings need 2)", max)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
			dots = 0
		case '=', ',':
			dots = 0
		case '.':
			dots++
			if dots >= max {
				return line, fmt.Errorf("a dotted key of more than %d parts (pyattach's settings need 2)", max)
			}
		case '"', '\'':
			quote := c
			if i+2 < n && data[i+1] == quote && data[i+2] == quote {
				// Multi-line string: up to the closing triple quote,
				// which may be followed by two more quotes of content.
				i += 3
				for ; i < n; i++ {
					if data[i] == '\n' {
						line++
					}
					if quote == '"' && data[i] == '\\' {
						if i+1 < n && data[i+1] == '\n' {
							line++
						}
						i++
						continue
					}
					if data[i] == quote && i+2 < n && data[i+1] == quote && data[i+2] == quote {
						i += 2
						for k := 0; k < 2 && i+1 < n && data[i+1] == quote; k++ {
							i++
						}
						break
					}
				}
				continue
			}
			// One-line string: up to the closing quote or the line's end.
			for i++; i < n && data[i] != quote && data[i] != '\n'; i++ {
				if quote == '"' && data[i] == '\\' && i+1 < n && data[i+1] != '\n' {
					i++
				}
			}
			if i < n && data[i] == '\n' {
				i-- // let the loop count the line
			}
		}
	}
	return 0, nil
}
