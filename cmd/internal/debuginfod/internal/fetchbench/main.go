// Command fetchbench fetches build-ids in parallel with the debuginfod
// package, for scripts/bench_debuginfod.sh to compare with a loop of
// debuginfod-find. It reads the environment as debuginfod-find does
// (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, ...), prints one cached path a
// line, and fails when any build-id fails.
//
//	fetchbench [-kind debuginfo] [-parallel 8] BUILDID...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/pyattach/pyattach/cmd/internal/debuginfod"
)

func main() {
	kind := flag.String("kind", debuginfod.KindDebuginfo, "debuginfo or executable")
	parallel := flag.Int("parallel", debuginfod.DefaultParallel, "build-ids fetched at once")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	c := debuginfod.FromEnv(os.Environ(), os.Stderr)
	c.Parallel = *parallel
	failed := false
	for _, r := range c.Fetch(ctx, *kind, flag.Args()) {
		if r.Err != nil {
			fmt.Fprintf(os.Stderr, "fetchbench: %v\n", r.Err)
			failed = true
			continue
		}
		fmt.Println(r.Path)
	}
	if failed {
		os.Exit(1)
	}
}
