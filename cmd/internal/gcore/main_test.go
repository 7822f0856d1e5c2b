package gcore

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// TestMain makes the test binary a core writer when PYATTACH_TEST_HELPER
// is "gcore": `PYATTACH_TEST_HELPER=gcore gcore.test PID FILE` writes a
// core of PID to FILE and prints Stats (scripts/bench.sh times it so).
func TestMain(m *testing.M) {
	testenv.HelperMain(m, "gcore", helperGcore)
}

func helperGcore() int {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: PYATTACH_TEST_HELPER=gcore gcore.test PID FILE")
		return 2
	}
	pid, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "gcore: bad PID %q\n", os.Args[1])
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := Take(ctx, pid, os.Args[2], Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "gcore: %v\n", err)
		return 1
	}
	fmt.Println(st)
	for _, s := range st.Skipped {
		fmt.Printf("  skipped %#x-%#x %s %q: %s\n", s.Start, s.End, s.Perms, s.Path, s.Reason)
	}
	return 0
}
