package pywalk

import (
	"embed"
	"io/fs"
	"sort"

	"github.com/pyattach/pyattach/detect/pyoffsets"
)

//go:embed py/*.py
var pyFiles embed.FS

// Module names of the adapters, as the debuggers import them.
const (
	GDBModule  = "pyattach_gdb"
	LLDBModule = "pyattach_lldb"
)

// Files returns the walker's files by base name: the Python modules and
// offsets.json, the tables they read. A debugger loads them from one
// directory.
func Files() map[string][]byte {
	out := map[string][]byte{"offsets.json": pyoffsets.Raw()}
	entries, _ := fs.ReadDir(pyFiles, "py")
	for _, e := range entries {
		b, err := pyFiles.ReadFile("py/" + e.Name())
		if err == nil {
			out[e.Name()] = b
		}
	}
	return out
}

// Names returns the names of Files, sorted.
func Names() []string {
	var n []string
	for k := range Files() {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
