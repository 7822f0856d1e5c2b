package pywalk

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestFilesShipEveryModule: every walker module a file imports is among
// Files (so it is written to the walker's directory and counted in its
// Digest), and the gdb, lldb and direct adapters reach the core through
// pyattach_walk only (their own modules, pyattach_gdb_*, beside it).
func TestFilesShipEveryModule(t *testing.T) {
	files := Files()
	imports := regexp.MustCompile(`(?m)^\s*(?:from|import)\s+(pyattach_\w+)`)
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".py") {
			continue
		}
		for _, m := range imports.FindAllStringSubmatch(string(files[name]), -1) {
			mod := m[1]
			if _, ok := files[mod+".py"]; !ok {
				t.Errorf("%s imports %s, which Files does not ship", name, mod)
			}
			adapter := strings.TrimSuffix(name, ".py")
			if (adapter == GDBModule || adapter == LLDBModule || adapter == ProcModule) && mod != "pyattach_walk" && !strings.HasPrefix(mod, adapter+"_") {
				t.Errorf("adapter %s imports %s: adapters use the core through pyattach_walk (and their own %s_* modules)", name, mod, adapter)
			}
		}
	}
	if _, ok := files["offsets.json"]; !ok {
		t.Errorf("Files has no offsets.json")
	}
	d := Digest(files)
	for _, name := range names {
		changed := map[string][]byte{}
		for k, v := range files {
			changed[k] = v
		}
		changed[name] = append(append([]byte(nil), files[name]...), '\n')
		if Digest(changed) == d {
			t.Errorf("Digest does not change with %s", name)
		}
	}
}

// TestFilesDigest: the digest hashed where the files are embedded is the
// digest of the files copied out, the name of the walker's directory.
func TestFilesDigest(t *testing.T) {
	if got, want := FilesDigest(), Digest(Files()); got != want {
		t.Errorf("FilesDigest() = %s, Digest(Files()) = %s", got, want)
	}
}
