package config

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
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv/environ"
)

// TrustStorePath is the trust store: one line per trusted file,
// "<sha256 hex> <path as a Go string literal>".
func TrustStorePath(dirs environ.Dirs) string { return dirs.Data("trusted") }

// TrustStore maps canonical project file paths to the SHA-256 of the
// content that was trusted.
type TrustStore struct {
	file    string
	entries map[string]string
}

// TrustState is whether a project file is trusted as it is now.
type TrustState int

const (
	TrustNo TrustState = iota
	TrustChanged
	TrustYes
)

// LoadTrustStore reads the trust store; a missing one is empty. A store
// that another user could change trusts nothing.
func LoadTrustStore(dirs environ.Dirs) (*TrustStore, error) {
	s := &TrustStore{file: TrustStorePath(dirs), entries: map[string]string{}}
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

// State says whether file p, whose content is data, is trusted.
func (s *TrustStore) State(p string, data []byte) TrustState {
	sum, ok := s.entries[canonical(p)]
	switch {
	case !ok:
		return TrustNo
	case sum != digest(data):
		return TrustChanged
	}
	return TrustYes
}

// Set trusts p with content data and returns its digest.
func (s *TrustStore) Set(p string, data []byte) string {
	sum := digest(data)
	s.entries[canonical(p)] = sum
	return sum
}

// Remove forgets p, by its canonical path or as given.
func (s *TrustStore) Remove(p string) bool {
	found := false
	for _, k := range []string{canonical(p), filepath.Clean(p)} {
		if _, ok := s.entries[k]; ok {
			delete(s.entries, k)
			found = true
		}
	}
	return found
}

// Paths are the trusted files, sorted.
func (s *TrustStore) Paths() []string {
	out := make([]string, 0, len(s.entries))
	for p := range s.entries {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Listed is a trusted file and its state now: "trusted", "changed",
// "missing" or "unreadable".
type Listed struct{ Path, State string }

// List is every trusted file, sorted, with its state now.
func (s *TrustStore) List() []Listed {
	var out []Listed
	for _, p := range s.Paths() {
		state := "trusted"
		data, err := ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			state = "missing"
		case err != nil:
			state = "unreadable"
		case digest(data) != s.entries[p]:
			state = "changed"
		}
		out = append(out, Listed{p, state})
	}
	return out
}

// Save writes the store atomically, in a directory only the user can
// enter.
func (s *TrustStore) Save() error {
	var b strings.Builder
	b.WriteString("# pyattach trust store: project files whose code-carrying settings are used (pyattach trust --help)\n")
	for _, p := range s.Paths() {
		fmt.Fprintf(&b, "%s %s\n", s.entries[p], strconv.Quote(p))
	}
	dir, err := safefs.PrivateDir(filepath.Dir(filepath.Dir(s.file)), filepath.Base(filepath.Dir(s.file)))
	if err != nil {
		return err
	}
	return safefs.WriteFile(filepath.Join(dir, filepath.Base(s.file)), []byte(b.String()), 0o600)
}
