package debuginfo

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/target"
)

// GDBAutoLoadDir is where Debian, Ubuntu and Fedora's gdb auto-loads
// scripts from: <datadir>/auto-load/<objfile path>-gdb.py.
const GDBAutoLoadDir = "/usr/share/gdb/auto-load"

// ExtensionOnHost is where this machine opens ext, an extension found
// for res: for a process in another root, the file under its root when
// the extension was found there (named as the process sees it).
func ExtensionOnHost(res *target.Result, ext string) string {
	if res.Container && !strings.HasPrefix(ext, res.Root) {
		if _, err := os.Stat(filepath.Join(res.Root, ext)); err == nil {
			return filepath.Join(res.Root, ext)
		}
	}
	return ext
}

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
