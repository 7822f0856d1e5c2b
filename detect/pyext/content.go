package pyext

import (
	"bytes"
	"io"
	"path"
	"regexp"
	"strings"
	"sync"
)

// sniffSize is how much of a file is read to decide what it is.
const sniffSize = 64 << 10

// libpythonMarker is defined by every libpython.py since CPython 2.7,
// within its first few kilobytes (the rest of the file is ~70 KB).
var libpythonMarker = []byte("class PyObjectPtr")

// looksLikeLibpython reports whether head (the start of a file) is
// CPython's gdb extension.
func looksLikeLibpython(head []byte) bool {
	return bytes.Contains(head, libpythonMarker) && bytes.Contains(head, []byte("gdb"))
}

// readHead reads up to sniffSize bytes from r.
func readHead(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, sniffSize))
}

// stubMaxSize is the largest file treated as a stub: a stub is a few
// lines, never a copy of the extension.
const stubMaxSize = 8 << 10

var (
	// A quoted path of a .py file: exec(open("...").read()),
	// execfile('...'), runpy.run_path("..."), gdb.execute("source ...").
	stubPyLiteral = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["']((?:source\s+)?[^"'\n]+\.py)["']`) })
	// sys.path.insert(0, "/dir") or sys.path.append("/dir").
	stubSysPath = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`sys\.path\.(?:insert\(\s*\d+\s*,|append\()\s*["']([^"'\n]+)["']`)
	})
	// import libpython, from libpython import *.
	stubImport = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\s*(?:from\s+([A-Za-z_][A-Za-z0-9_.]*)\s+import|import\s+([A-Za-z_][A-Za-z0-9_.]*))`)
	})
)

// stubTargets returns the files a small stub points at, as paths
// relative to dir (the stub's directory) when they are not absolute, in
// the order they appear. Only literal paths are understood.
func stubTargets(head []byte, dir string) []string {
	if len(head) > stubMaxSize {
		return nil
	}
	var out []string
	seen := make(map[string]bool)
	add := func(p string) {
		if !path.IsAbs(p) {
			p = path.Join(dir, p)
		}
		p = path.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, m := range stubPyLiteral().FindAllSubmatch(head, -1) {
		s := string(m[1])
		if rest, ok := strings.CutPrefix(s, "source"); ok {
			s = strings.TrimSpace(rest)
		}
		add(s)
	}
	var dirs []string
	for _, m := range stubSysPath().FindAllSubmatch(head, -1) {
		dirs = append(dirs, string(m[1]))
	}
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	for _, m := range stubImport().FindAllSubmatch(head, -1) {
		mod := string(m[1])
		if mod == "" {
			mod = string(m[2])
		}
		switch strings.SplitN(mod, ".", 2)[0] {
		case "gdb", "sys", "os", "runpy", "importlib", "io", "__future__":
			continue
		}
		for _, d := range dirs {
			add(path.Join(d, strings.ReplaceAll(mod, ".", "/")+".py"))
		}
	}
	return out
}
