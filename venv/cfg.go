package venv

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNotVenv means a directory holds none of pyvenv.cfg,
	// lib/pythonX.Y/orig-prefix.txt or conda-meta/.
	ErrNotVenv = errors.New("not a virtual environment")
	// ErrMalformedCfg means a pyvenv.cfg could not be parsed. The error
	// is a *CfgError naming the file and line.
	ErrMalformedCfg = errors.New("malformed pyvenv.cfg")
	// ErrNoPython means an environment has no bin/python, bin/python3 or
	// bin/python2 (or it is a dangling symlink).
	ErrNoPython = errors.New("no python executable in environment")
	// ErrNoMatch means no candidate interpreter has the build-id of a
	// copy. The error is a *NoMatchError.
	ErrNoMatch = errors.New("no interpreter with the same build-id")
	// ErrSymlinkLoop means a symlink chain does not end.
	ErrSymlinkLoop = errors.New("too many levels of symbolic links")
)

// MaxCfgSize bounds the size of a pyvenv.cfg. Real ones are a few hundred
// bytes.
const MaxCfgSize = 1 << 20

// Cfg is the content of a pyvenv.cfg.
type Cfg struct {
	// Home is the directory of the base interpreter ("home").
	Home string `json:"home"`
	// Executable is the base interpreter's path ("executable"; CPython
	// 3.11+ writes it).
	Executable string `json:"executable,omitempty"`
	// BaseExecutable is "base-executable" (virtualenv 20 writes it).
	BaseExecutable string `json:"base_executable,omitempty"`
	// Command is the command line that created the venv ("command").
	Command string `json:"command,omitempty"`
	// Version is "version" or, failing that, "version_info" (uv,
	// virtualenv), normalised to X.Y.Z ("3.12.1.final.0" -> "3.12.1"),
	// or X.Y when the file gives only two parts. It is "" when absent or
	// not a version.
	Version string `json:"version,omitempty"`
	// IncludeSystemSitePackages is "include-system-site-packages". Like
	// CPython's site.py, it is true when the key is absent and otherwise
	// true only for the value "true" (any case).
	IncludeSystemSitePackages bool `json:"include_system_site_packages"`
	// Raw holds every key (lowercased) and value (trimmed) as written;
	// the last of repeated keys wins, as in site.py.
	Raw map[string]string `json:"raw"`
}

// CfgError is a malformed pyvenv.cfg. It matches ErrMalformedCfg with
// errors.Is.
type CfgError struct {
	// File is the file's path; "" when parsed from a reader.
	File string
	// Line is the 1-based line number; 0 when the error concerns the
	// whole input (too large).
	Line int
	// Msg says what is wrong.
	Msg string
}

func (e *CfgError) Error() string {
	where := e.File
	if where == "" {
		where = "pyvenv.cfg"
	}
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, e.Line)
	}
	return fmt.Sprintf("%s: %v: %s", where, ErrMalformedCfg, e.Msg)
}

// Unwrap returns ErrMalformedCfg.
func (e *CfgError) Unwrap() error { return ErrMalformedCfg }

// ParsePyvenvCfg parses a pyvenv.cfg the way CPython's site.py (and
// getpath) do: `key = value` lines, split at the first '=' with the key
// lowercased and both sides trimmed; a line without '=' or with an empty
// key is ignored, as site.py ignores it. Such lines are real: `python3 -m
// venv` writes the venv's path into its "command" line unescaped, so a
// path holding a newline continues on a line of its own. Lines end with
// "\n", "\r\n" or "\r" (Python's universal newlines); a leading UTF-8
// byte order mark is ignored.
//
// The errors, *CfgError, are for what CPython refuses too (bytes that
// are not UTF-8 make site.py fail to start), and input larger than
// MaxCfgSize.
func ParsePyvenvCfg(r io.Reader) (Cfg, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxCfgSize+1))
	if err != nil {
		return Cfg{}, fmt.Errorf("read pyvenv.cfg: %w", err)
	}
	if len(b) > MaxCfgSize {
		return Cfg{}, &CfgError{Msg: fmt.Sprintf("larger than %d bytes", MaxCfgSize)}
	}
	if i := invalidUTF8(b); i >= 0 {
		return Cfg{}, &CfgError{Line: lineOf(b, i), Msg: "not valid UTF-8 (CPython's site.py refuses it)"}
	}
	s := strings.TrimPrefix(string(b), "\uFEFF")

	cfg := Cfg{Raw: map[string]string{}}
	for s != "" {
		var line string
		line, s = nextLine(s)
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" {
			continue // site.py ignores it
		}
		cfg.Raw[k] = strings.TrimSpace(v)
	}

	cfg.Home = cfg.Raw["home"]
	cfg.Executable = cfg.Raw["executable"]
	cfg.BaseExecutable = cfg.Raw["base-executable"]
	cfg.Command = cfg.Raw["command"]
	cfg.Version = normalizeVersion(cfg.Raw["version"])
	if cfg.Version == "" {
		cfg.Version = normalizeVersion(cfg.Raw["version_info"])
	}
	cfg.IncludeSystemSitePackages = true
	if v, ok := cfg.Raw["include-system-site-packages"]; ok {
		cfg.IncludeSystemSitePackages = strings.EqualFold(v, "true")
	}
	return cfg, nil
}

// ReadCfgFile parses the named pyvenv.cfg. A *CfgError carries the name.
func ReadCfgFile(name string) (Cfg, error) {
	f, err := saferead.Open(name)
	if err != nil {
		return Cfg{}, err
	}
	defer f.Close()
	cfg, err := ParsePyvenvCfg(f)
	var ce *CfgError
	if errors.As(err, &ce) {
		ce.File = name
		return Cfg{}, ce
	}
	if err != nil {
		return Cfg{}, fmt.Errorf("read %s: %w", name, err)
	}
	return cfg, nil
}

// nextLine splits s after its first "\r\n", "\n" or "\r" and returns the
// line without its end and the rest.
func nextLine(s string) (line, rest string) {
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, ""
	}
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		return s[:i], s[i+2:]
	}
	return s[:i], s[i+1:]
}

// invalidUTF8 returns the offset of the first byte of b that is not
// part of valid UTF-8, or -1.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// lineOf returns the 1-based line number of byte offset off in b.
func lineOf(b []byte, off int) int {
	n := 1
	for i := 0; i < off; i++ {
		switch b[i] {
		case '\n':
			n++
		case '\r':
			if i+1 < off && b[i+1] == '\n' {
				i++
			}
			n++
		}
	}
	return n
}

// quoteShort quotes s, cut to 60 bytes on a rune boundary.
func quoteShort(s string) string {
	const max = 60
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", s[:cut])
}

// normalizeVersion turns "3.12.1", "3.12.1.final.0", "3.13.0rc1" or
// "3.12" into "3.12.1", "3.12.1", "3.13.0", "3.12": the release numbers
// pyversion reads. It returns "" for anything pyversion does not parse
// or that has no minor.
func normalizeVersion(v string) string {
	p, err := pyversion.Parse(strings.TrimSpace(v))
	if err != nil || !p.HasMinor() {
		return ""
	}
	return p.Release()
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
