package target

// Benchmarks of Resolve on live Python processes. They run only with
// -bench, e.g.
//
//	go test ./cmd/internal/target -run '^$' -bench . -benchtime 20x
//
// They need /usr/bin/python3.11 and, for the many-libraries case, gcc;
// without them they skip, unless CI=true, where they fail.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/idcache"
	"github.com/pyattach/pyattach/detect/testenv"
)

const benchPython = testenv.DebianPath

// benchLibCounts are the sub-benchmarks of BenchmarkResolvePIDManyLibs:
// how many tiny shared objects the process loads.
var benchLibCounts = []int{50, 150, 300, 450}

// benchStartPython starts python3.11 -c prog args..., waits until it
// prints "ready" and kills it when the benchmark ends.
func benchStartPython(b *testing.B, prog string, args ...string) int {
	b.Helper()
	cmd := exec.Command(benchPython, append([]string{"-c", prog}, args...)...)
	cmd.Stderr = os.Stderr
	if line := testenv.Start(b, cmd); strings.TrimSpace(line) != "ready" {
		b.Fatalf("python printed %q before it was ready", line)
	}
	return cmd.Process.Pid
}

// benchResolve runs Resolve on pid in the benchmark loop and reports
// the time per mapped module as well.
func benchResolve(b *testing.B, pid int) {
	b.Helper()
	// As pyattach runs: modules' build-ids come from the cache once read.
	opts := Options{ProcRoot: "/proc", Env: os.Environ(), IDCache: idcache.Open("")}
	tgt := strconv.Itoa(pid)
	res, err := Resolve(context.Background(), tgt, opts)
	if err != nil {
		b.Fatalf("Resolve(%s): %v", tgt, err)
	}
	modules := len(res.Modules)
	for b.Loop() {
		if _, err := Resolve(context.Background(), tgt, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(modules), "modules")
	if modules > 0 && b.N > 0 {
		perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(perOp/float64(modules), "ns/module")
	}
}

// benchSleeper is a Python program that is ready once it sleeps a few
// frames deep.
const benchSleeper = `
import time
def inner():
    print("ready", flush=True)
    time.sleep(3600)
def middle():
    inner()
def outer():
    middle()
outer()
`

func BenchmarkResolvePID(b *testing.B) {
	testenv.Need(b, benchPython)
	benchResolve(b, benchStartPython(b, benchSleeper))
}

// benchLoader loads argv[2] libraries libpyattachbenchNNNN.so from the
// directory argv[1] and sleeps.
const benchLoader = `
import ctypes, sys, time
d, n = sys.argv[1], int(sys.argv[2])
libs = [ctypes.CDLL("%s/libpyattachbench%04d.so" % (d, i)) for i in range(n)]
assert libs[-1]["f%d" % (n - 1)]() == n - 1
print("ready", flush=True)
time.sleep(3600)
`

func BenchmarkResolvePIDManyLibs(b *testing.B) {
	testenv.Need(b, benchPython)
	gcc := testenv.Need(b, "gcc")
	most := 0
	for _, n := range benchLibCounts {
		most = max(most, n)
	}
	dir := benchLibs(b, gcc, most)
	for _, n := range benchLibCounts {
		b.Run(fmt.Sprintf("libs=%d", n), func(b *testing.B) {
			benchResolve(b, benchStartPython(b, benchLoader, dir, strconv.Itoa(n)))
		})
	}
}

// benchLibs makes sure dir holds libpyattachbench0000.so up to n-1, each
// a gcc-built shared object with one function fN returning N (so every
// one has its own build-id). They are kept under the user's cache
// directory, or a temporary directory when there is none; each file is
// independent of n, so a larger n only adds files.
func benchLibs(b *testing.B, gcc string, n int) string {
	b.Helper()
	dir := ""
	if c, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(c, "pyattach-bench", "solibs-v1")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			dir = ""
		}
	}
	if dir == "" {
		dir = b.TempDir()
	}
	var todo []int
	for i := 0; i < n; i++ {
		if _, err := os.Stat(benchLibPath(dir, i)); err != nil {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return dir
	}
	start := time.Now()
	work := make(chan int)
	errs := make(chan error, len(todo))
	var wg sync.WaitGroup
	for w := 0; w < max(2, 2*runtime.NumCPU()); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				errs <- benchBuildLib(gcc, dir, i)
			}
		}()
	}
	for _, i := range todo {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("built %d shared objects in %s under %s", len(todo), time.Since(start).Round(time.Millisecond), dir)
	return dir
}

func benchLibPath(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("libpyattachbench%04d.so", i))
}

// benchBuildLib compiles one library to a temporary name and renames it
// into place, so that concurrent runs never see a partial file.
func benchBuildLib(gcc, dir string, i int) error {
	dst := benchLibPath(dir, i)
	tmp := fmt.Sprintf("%s.%d.tmp", dst, os.Getpid())
	cmd := exec.Command(gcc, "-shared", "-fPIC", "-nostdlib", "-O0", "-pipe",
		"-Wl,--build-id=sha1", "-x", "c", "-", "-o", tmp)
	cmd.Stdin = strings.NewReader(fmt.Sprintf("int f%d(void) { return %d; }\n", i, i))
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("gcc for %s: %v\n%s", dst, err, out)
	}
	return os.Rename(tmp, dst)
}
