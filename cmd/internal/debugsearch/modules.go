package debugsearch

import (
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/target"
)

// GDBAutoLoadDir is where Debian, Ubuntu and Fedora's gdb auto-loads
// scripts from: <datadir>/auto-load/<objfile path>-gdb.py.
const GDBAutoLoadDir = "/usr/share/gdb/auto-load"

// SourceModule reports whether a module's sources matter for Python
// frames: the interpreter, libpython and extension modules.
func SourceModule(path string, res *target.Result) bool {
	if res != nil && (path == res.Exe || path == res.Interpreter || path == res.Libpython) {
		return true
	}
	base := filepath.Base(path)
	return strings.Contains(path, "/site-packages/") || strings.Contains(path, "/dist-packages/") ||
		strings.Contains(path, "/lib-dynload/") || strings.Contains(base, ".cpython-") || strings.HasSuffix(base, ".abi3.so")
}
