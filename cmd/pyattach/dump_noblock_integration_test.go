//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// churnApp's thread "churn" changes its stack all the time: round r
// calls a(40, r), which recurses to a(0, r) and returns. A real stack
// of it is a(n, r), a(n+1, r), ... a(40, r) innermost first: one r,
// n counting up by one. Each frame holds 120 locals, so that the stack
// spans many pages of memory, read at different times by a reader that
// does not stop the process: a stack pieced together from two moments
// shows two values of r, or a gap in n.
var churnApp = func() string {
	var b strings.Builder
	b.WriteString("import threading, time\ndef a(n, r):\n")
	for i := range 120 {
		fmt.Fprintf(&b, "    v%d = r\n", i)
	}
	b.WriteString(`    if n:
        a(n - 1, r)
def churn():
    r = 0
    while True:
        r += 1
        a(40, r)
threading.Thread(target=churn, name="churn", daemon=True).start()
print("ready", flush=True)
time.sleep(600)
`)
	return b.String()
}()

// stoppedTimes is dump -v's count of the stops of the process.
var stoppedTimes = regexp.MustCompile(`; stopped [1-4] times \(\d+ threads\)`)

type churnDump struct {
	Threads []struct {
		Name      *string `json:"name"`
		Unsettled int     `json:"unsettled"`
		Frames    []struct {
			Function string            `json:"function"`
			Locals   map[string]string `json:"locals"`
		} `json:"frames"`
	} `json:"threads"`
}

// checkChurn reads dump --json --locals output: the churn thread's
// stack must be one that existed (see churnApp), or be marked
// unsettled with no frames; every other thread (asleep) is settled.
// It returns whether the churn thread was unsettled.
func checkChurn(t *testing.T, what, out string) bool {
	t.Helper()
	var d churnDump
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	unsettled, seen := false, false
	for _, th := range d.Threads {
		if th.Name == nil || *th.Name != "churn" {
			if th.Unsettled != 0 || len(th.Frames) == 0 {
				t.Errorf("%s: a sleeping thread is unsettled (%d) or has no frames", what, th.Unsettled)
			}
			continue
		}
		seen = true
		if th.Unsettled != 0 {
			if len(th.Frames) != 0 {
				t.Errorf("%s: the unsettled churn thread has frames", what)
			}
			unsettled = true
			continue
		}
		var rs []string
		want := -1
		for _, f := range th.Frames {
			if f.Function != "a" {
				continue
			}
			n, err := strconv.Atoi(f.Locals["n"])
			if err != nil {
				t.Errorf("%s: a frame of a() has no n: %v", what, f.Locals)
				return false
			}
			if want >= 0 && n != want {
				t.Errorf("%s: a torn stack printed as real: n goes to %d where %d was due", what, n, want)
			}
			want = n + 1
			if len(rs) == 0 || rs[len(rs)-1] != f.Locals["r"] {
				rs = append(rs, f.Locals["r"])
			}
		}
		if len(rs) > 1 {
			t.Errorf("%s: a torn stack printed as real: frames of rounds %v", what, rs)
		}
	}
	if !seen {
		t.Errorf("%s: no churn thread", what)
	}
	return unsettled
}

// TestDumpNoBlockTorn: dump --no-block never prints a stack that never
// existed: against a thread whose stack changes all the time, each dump
// shows a real stack of it or says it is unsettled. dump (which stops
// the process while it copies the pages) always shows a real stack,
// never unsettled, and -v says how often it stopped the process.
func TestDumpNoBlockTorn(t *testing.T) {
	env := scriptEnv(t.TempDir())
	for _, py := range []testenv.Python{testenv.Debian(t), testenv.Pyenv(t, "3.13"), testenv.Pyenv(t, "3.10")} {
		t.Run(py.Version, func(t *testing.T) {
			pid := testenv.StartPython(t, py.Exe, churnApp)
			arg := strconv.Itoa(pid)
			unsettled := 0
			for i := range 10 {
				out, stderr := pyattachOK(t, "dump --no-block", pyattachBin(t), env, "dump", "-v", "--no-block", "--json", "--locals", arg)
				if checkChurn(t, fmt.Sprintf("dump --no-block #%d", i), out) {
					unsettled++
				}
				if !strings.Contains(stderr, "(the process was not stopped)") {
					t.Errorf("dump --no-block -v does not say the process was not stopped:\n%s", stderr)
				}
			}
			t.Logf("%s: the churn thread was unsettled in %d of 10 dumps --no-block", py.Version, unsettled)
			for i := range 3 {
				out, stderr := pyattachOK(t, "dump", pyattachBin(t), env, "dump", "-v", "--json", "--locals", arg)
				if checkChurn(t, fmt.Sprintf("dump #%d", i), out) {
					t.Errorf("dump (stopping the process) says a stack is unsettled")
				}
				if !stoppedTimes.MatchString(stderr) {
					t.Errorf("dump -v does not say how often it stopped the process:\n%s", stderr)
				}
			}
			checkRunning(t, "after the dumps", pid)
		})
	}
}

// thousandApp runs 1,000 threads, each waiting 5 frames deep in its
// own function.
const thousandApp = `import threading, time
gate = threading.Barrier(1001)
def down(n):
    if n:
        return down(n - 1)
    gate.wait()
    time.sleep(600)
for i in range(1000):
    threading.Thread(target=down, args=(5,), name="w%d" % i, daemon=True).start()
gate.wait()
print("ready", flush=True)
time.sleep(600)
`

// TestDumpThousandThreads: a process of 1,001 threads is dumped within
// the default budget, every thread with its stack, the process stopped
// once; -v reports the cost.
func TestDumpThousandThreads(t *testing.T) {
	env := scriptEnv(t.TempDir())
	pid := testenv.StartPython(t, testenv.Debian(t).Exe, thousandApp)
	out, stderr := pyattachOK(t, "dump of 1,001 threads", pyattachBin(t), env, "dump", "-v", "--json", strconv.Itoa(pid))
	var d churnDump
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, th := range d.Threads {
		if th.Name != nil && strings.HasPrefix(*th.Name, "w") {
			named++
			if len(th.Frames) < 6 || th.Frames[0].Function != "down" {
				t.Errorf("thread %s: %d frames, innermost %v; want down() 6 deep", *th.Name, len(th.Frames), th.Frames)
				break
			}
		}
	}
	if len(d.Threads) != 1001 || named != 1000 {
		t.Errorf("%d threads, %d of them workers; want 1,001 and 1,000", len(d.Threads), named)
	}
	if !stoppedTimes.MatchString(stderr) || !strings.Contains(stderr, "memory reads") {
		t.Errorf("dump -v does not report the stops and the cost:\n%s", stderr)
	}
	checkRunning(t, "after the dump", pid)
}
