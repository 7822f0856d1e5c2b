// Command gen writes offsets.json: one table per minor version and
// layout flags, each generated from the first build of that kind that
// Discover finds (pyenv's before the system's), then DiscoverRoots (the
// Debian roots scripts/make-roots.sh makes: 3.14, 3.15 and the debug
// builds no other source has), so the same machine always gives the same
// file.
//
//	go run ./internal/gen -o offsets.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pyattach/pyattach/detect/pyoffsets"
)

func main() {
	out := flag.String("o", "offsets.json", "file to write")
	pyenv := flag.String("pyenv-root", "", "pyenv's root (default $PYENV_ROOT, else ~/.pyenv)")
	debugDir := flag.String("debug-dir", "/usr/lib/debug", "where separate debug files are")
	roots := flag.String("roots", pyoffsets.RootsDir(), `make-roots.sh's roots ("" for none)`)
	flag.Parse()
	root := *pyenv
	if root == "" {
		root = os.Getenv("PYENV_ROOT")
	}
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".pyenv")
	}
	var f pyoffsets.File
	seen := map[string]bool{}
	sources := pyoffsets.Discover(root, *debugDir)
	if *roots != "" {
		sources = append(sources, pyoffsets.DiscoverRoots(*roots)...)
	}
	for _, s := range sources {
		if seen[s.Key()] {
			continue
		}
		m, err := pyoffsets.Generate(s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gen: skipping %s: %v\n", s.Path, err)
			continue
		}
		seen[s.Key()] = true
		f.Tables = append(f.Tables, pyoffsets.Table{
			Key:    s.Key(),
			From:   pyoffsets.From{Version: s.Version, File: filepath.Base(s.Path), BuildID: s.BuildID},
			Fields: m,
		})
		fmt.Fprintf(os.Stderr, "gen: %s from %s %s (%d fields)\n", s.Key(), s.Kind, s.Version, len(m))
	}
	pyoffsets.SortTables(f.Tables)
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	b = append(b, '\n')
	// A source file of the module, not one of pyattach's own files
	// (cmd/internal/safefs): a rename is enough so that a killed run never
	// leaves offsets.json cut short.
	tmp := *out + ".tmp"
	err = os.WriteFile(tmp, b, 0o644)
	if err == nil {
		err = os.Rename(tmp, *out)
	}
	if err != nil {
		os.Remove(tmp)
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
