package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv/environ"
)

// TrustCmd is `pyattach trust`.
type TrustCmd struct {
	Path   string `arg:"" optional:"" help:"The project directory, or its .pyattach.toml (default: the one pyattach reads in this directory)." placeholder:"DIR|FILE"`
	List   bool   `help:"List the trusted files, and whether each is unchanged since."`
	Remove bool   `help:"Forget the file: its code-carrying settings are ignored again."`
}

// Run trusts, lists or forgets a project file.
func (c *TrustCmd) Run(app *App) error {
	store, err := loadTrustStore(app.dirs())
	if err != nil {
		return withHint(err, "the trust store must be yours and not writable by others; remove it and trust your projects again: rm %s", shquote.Quote(trustStorePath(app.dirs())))
	}
	if c.List {
		if c.Path != "" || c.Remove {
			return withHint(errors.New("trust --list takes no other argument"), "run: pyattach trust --list")
		}
		store.list(app)
		return nil
	}
	file, err := c.projectFile(app)
	if err != nil {
		return err
	}
	if c.Remove {
		if !store.remove(file) && !store.remove(filepath.Join(file, ProjectConfigName)) {
			return withHint(fmt.Errorf("trust --remove: %s is not trusted", file), "list the trusted files with: pyattach trust --list")
		}
		if err := store.save(); err != nil {
			return fmt.Errorf("trust --remove: %w", err)
		}
		fmt.Fprintf(app.Stdout, "no longer trusted: %s\n", file)
		return nil
	}
	if err := saferead.CheckTrusted(file, os.Geteuid()); err != nil {
		return withHint(fmt.Errorf("trust %s: %w", file, err), "%s", trustFix(err, file, app.dirs()))
	}
	data, err := readConfigFile(file)
	if err != nil {
		return err
	}
	if _, err := parseConfig(file, data); err != nil {
		return err
	}
	sum := store.set(file, data)
	if err := store.save(); err != nil {
		return fmt.Errorf("trust %s: %w", file, err)
	}
	fmt.Fprintf(app.Stdout, "trusted %s (sha256 %s)\n", file, sum)
	return nil
}

// trustFix is the hint for a file that fails saferead.CheckTrusted.
func trustFix(err error, file string, dirs environ.Dirs) string {
	var ue *saferead.UntrustedError
	if errors.As(err, &ue) && strings.HasPrefix(ue.Reason, "writable by") {
		return fmt.Sprintf("no one else may be able to change a file that gdb's code comes from: chmod go-w %s, then run pyattach trust again", shquote.Quote(ue.Component))
	}
	return fmt.Sprintf("only a file owned by you or root can be trusted: review it and copy the settings you want into %s, or, if it is yours, chown it to yourself", dirs.ConfigFile())
}

// projectFile is the absolute path of the project file c names.
func (c *TrustCmd) projectFile(app *App) (string, error) {
	if c.Path == "" {
		p := findProjectConfig(app.Cwd, app.Env.Get("HOME"))
		if p == "" {
			return "", withHint(fmt.Errorf("trust: no %s in %s or a parent directory", ProjectConfigName, app.Cwd), "name the project: pyattach trust DIR")
		}
		return p, nil
	}
	p := c.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(app.Cwd, p)
	}
	p = filepath.Clean(p)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		p = filepath.Join(p, ProjectConfigName)
	} else if err != nil && !c.Remove {
		return "", withHint(fmt.Errorf("trust: %w", err), "name a project directory or its %s", ProjectConfigName)
	}
	if _, err := os.Stat(p); err != nil && !c.Remove {
		return "", withHint(fmt.Errorf("trust: %w", err), "name a project directory or its %s", ProjectConfigName)
	}
	return p, nil
}

// trustStorePath is the trust store: one line per trusted file,
// "<sha256 hex> <path as a Go string literal>".
func trustStorePath(dirs environ.Dirs) string { return dirs.Data("trusted") }

// trustStore maps canonical project file paths to the SHA-256 of the
// content that was trusted.
type trustStore struct {
	file    string
	entries map[string]string
}

type trustState int

const (
	trustNo trustState = iota
	trustChanged
	trustYes
)

// loadTrustStore reads the trust store; a missing one is empty. A store
// that another user could change trusts nothing.
func loadTrustStore(dirs environ.Dirs) (*trustStore, error) {
	s := &trustStore{file: trustStorePath(dirs), entries: map[string]string{}}
	if err := saferead.CheckTrusted(s.file, os.Geteuid()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return s, nil
		}
		return nil, fmt.Errorf("trust store: %w", err)
	}
	data, err := readSmallFile(s.file, maxTrustStoreSize)
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxTrustStoreSize+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, quoted, ok := strings.Cut(line, " ")
		p, err := strconv.Unquote(quoted)
		if !ok || err != nil || len(sum) != sha256.Size*2 {
			return nil, fmt.Errorf("trust store %s: line %d is not <sha256> \"<path>\"", s.file, n)
		}
		s.entries[p] = sum
	}
	return s, nil
}

// canonical is the path a project file is recorded under: absolute,
// with symbolic links resolved when it exists.
func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func digest(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// state says whether file p, whose content is data, is trusted.
func (s *trustStore) state(p string, data []byte) trustState {
	sum, ok := s.entries[canonical(p)]
	switch {
	case !ok:
		return trustNo
	case sum != digest(data):
		return trustChanged
	}
	return trustYes
}

// set trusts p with content data and returns its digest.
func (s *trustStore) set(p string, data []byte) string {
	sum := digest(data)
	s.entries[canonical(p)] = sum
	return sum
}

// remove forgets p, by its canonical path or as given.
func (s *trustStore) remove(p string) bool {
	found := false
	for _, k := range []string{canonical(p), filepath.Clean(p)} {
		if _, ok := s.entries[k]; ok {
			delete(s.entries, k)
			found = true
		}
	}
	return found
}

func (s *trustStore) paths() []string {
	out := make([]string, 0, len(s.entries))
	for p := range s.entries {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// list prints every trusted file and its state now.
func (s *trustStore) list(app *App) {
	if len(s.paths()) == 0 {
		fmt.Fprintln(app.Stdout, "no project file is trusted; trust one with: pyattach trust [DIR]")
		return
	}
	for _, p := range s.paths() {
		state := "trusted"
		data, err := readConfigFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			state = "missing"
		case err != nil:
			state = "unreadable"
		case digest(data) != s.entries[p]:
			state = "changed"
		}
		fmt.Fprintf(app.Stdout, "%-8s %s\n", state, p)
	}
}

// save writes the store atomically, in a directory only the user can
// enter.
func (s *trustStore) save() error {
	var b strings.Builder
	b.WriteString("# pyattach trust store: project files whose code-carrying settings are used (pyattach trust --help)\n")
	for _, p := range s.paths() {
		fmt.Fprintf(&b, "%s %s\n", s.entries[p], strconv.Quote(p))
	}
	dir, err := safefs.PrivateDir(filepath.Dir(filepath.Dir(s.file)), filepath.Base(filepath.Dir(s.file)))
	if err != nil {
		return err
	}
	return safefs.WriteFile(filepath.Join(dir, filepath.Base(s.file)), []byte(b.String()), 0o600)
}
