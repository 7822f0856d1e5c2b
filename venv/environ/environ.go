package environ

import (
	"path/filepath"
	"strings"
)

// Env is an environment: KEY=value strings, as os.Environ returns them.
// Entries without "=" are ignored; when a key repeats, the last one
// counts. A nil Env has no variables at all.
type Env []string

// Lookup returns the value of key and whether it is set (perhaps to "").
func (e Env) Lookup(key string) (string, bool) {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Get returns the value of key, "" when it is unset.
func (e Env) Get(key string) string {
	v, _ := e.Lookup(key)
	return v
}

// With returns a copy of e with key set to value; e is not changed.
func (e Env) With(key, value string) Env {
	out := make(Env, len(e), len(e)+1)
	copy(out, e)
	return append(out, key+"="+value)
}

// List returns the non-empty entries of a colon-separated list variable
// such as PATH or LD_LIBRARY_PATH.
func (e Env) List(key string) []string {
	var out []string
	for _, d := range filepath.SplitList(e.Get(key)) {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// Home returns $HOME, "" when it is unset.
func (e Env) Home() string { return e.Get("HOME") }
