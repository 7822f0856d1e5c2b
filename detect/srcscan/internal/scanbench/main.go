// Command scanbench scans the files named on its command line with
// srcscan and prints how many source files each names. scripts/bench.sh
// times it against readelf --debug-dump=line.
package main

import (
	"fmt"
	"os"

	"github.com/pyattach/pyattach/detect/srcscan"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: scanbench FILE...")
		os.Exit(2)
	}
	status := 0
	for _, name := range os.Args[1:] {
		res, err := srcscan.ScanFile(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "scanbench: %s: %v\n", name, err)
			status = 1
			continue
		}
		fmt.Printf("%s: %d units, %d files\n", name, len(res.Units), len(res.Files))
	}
	os.Exit(status)
}
