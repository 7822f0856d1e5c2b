// Command gcorebench writes a core of a live process with gcore.Take and
// prints what it did (how long the process was stopped, threads,
// segments, sizes, the mappings left out and why). scripts/bench.sh
// times it beside gdb's gcore; it is not part of pyattach's command line.
//
//	gcorebench [-v] PID FILE
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/pyattach/pyattach/cmd/internal/gcore"
)

func main() {
	args := os.Args[1:]
	verbose := len(args) > 0 && args[0] == "-v"
	if verbose {
		args = args[1:]
	}
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gcorebench [-v] PID FILE")
		os.Exit(2)
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil || pid <= 0 {
		fmt.Fprintf(os.Stderr, "gcorebench: bad PID %q\n", args[0])
		os.Exit(2)
	}
	// SIGINT and SIGTERM cancel: the process is let go, no file is left.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := gcore.Take(ctx, pid, args[1], gcore.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "gcorebench: %v\n", err)
		if errors.Is(err, gcore.ErrUnsupported) {
			fmt.Fprintf(os.Stderr, "  hint: take the core with gdb instead: gdb -batch -p %d -ex 'gcore FILE'\n", pid)
		}
		stop()
		os.Exit(1)
	}
	fmt.Println(st)
	if verbose {
		for _, s := range st.Skipped {
			fmt.Printf("  left out %#x-%#x %s %s: %s\n", s.Start, s.End, s.Perms, strconv.Quote(s.Path), s.Reason)
		}
	}
}
