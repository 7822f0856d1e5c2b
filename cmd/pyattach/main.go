// Command pyattach makes native debugging of Python processes with gdb
// and lldb work the first time. See README.md.
package main

import (
	"os"

	// Maps in, early, the pages every command touches (see the package).
	_ "github.com/pyattach/pyattach/cmd/internal/prefault"
	"github.com/pyattach/pyattach/venv/environ"
)

func main() {
	environ.Host = hostLayout()
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
}
