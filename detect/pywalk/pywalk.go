package pywalk

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
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
	// ProcModule is the direct reader of `pyattach dump`: no debugger, a
	// system python3 over /proc/PID/mem.
	ProcModule = "pyattach_proc"
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

// Digest names the content of Files: a short hash of their names and
// bytes, so that each build's walker can live in its own directory.
func Digest(files map[string][]byte) string {
	sizes := make(map[string]int64, len(files))
	for k, b := range files {
		sizes[k] = int64(len(b))
	}
	return hashFiles(sizes, func(h io.Writer, name string) { h.Write(files[name]) })
}

// FilesDigest is Digest(Files()), the files hashed where they are
// embedded, not copied out first: every dump and init file names the
// walker's directory by it, and the copies cost more than the hash.
func FilesDigest() string {
	entries, _ := fs.ReadDir(pyFiles, "py")
	sizes := map[string]int64{"offsets.json": int64(len(pyoffsets.Raw()))}
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			sizes[e.Name()] = info.Size()
		}
	}
	buf := make([]byte, 32<<10)
	return hashFiles(sizes, func(h io.Writer, name string) {
		if name == "offsets.json" {
			h.Write(pyoffsets.Raw())
			return
		}
		if f, err := pyFiles.Open("py/" + name); err == nil {
			io.CopyBuffer(h, f, buf)
			f.Close()
		}
	})
}

// hashFiles is the digest of files by name (sizes: each one's size):
// in name order, "NAME\0SIZE\0" and its bytes, which write gives.
func hashFiles(sizes map[string]int64, write func(h io.Writer, name string)) string {
	names := make([]string, 0, len(sizes))
	for k := range sizes {
		names = append(names, k)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", n, sizes[n])
		write(h, n)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
