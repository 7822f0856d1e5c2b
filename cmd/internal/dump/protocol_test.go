//go:build linux

package dump

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/target"
)

// scriptedReader is a direct reader that says lines and checks the
// answers pyattach gives, as pyattach_proc.py would: said lines go out
// in order; after each, if want has an entry, the answer must be it.
type scriptedReader struct {
	inR   *io.PipeReader
	inW   *io.PipeWriter
	outR  *io.PipeReader
	outW  *io.PipeWriter
	done  chan struct{}
	heard []string
	// seen is what stopped() said each time pyattach answered "stopped".
	seen    []byte
	stopped func() byte
	// views are what followed each "resumed".
	views []string
}

func startScripted(output string, say, want []string, stopped func() byte) *scriptedReader {
	r := &scriptedReader{done: make(chan struct{}), stopped: stopped}
	r.inR, r.inW = io.Pipe()
	r.outR, r.outW = io.Pipe()
	go func() {
		defer close(r.done)
		defer r.outW.Close()
		in := bufio.NewScanner(r.inR)
		for i, l := range say {
			if _, err := io.WriteString(r.outW, l+"\n"); err != nil {
				return
			}
			if i < len(want) && want[i] != "" {
				if !in.Scan() {
					return
				}
				heard, rest, _ := strings.Cut(in.Text(), " ")
				r.heard = append(r.heard, heard)
				if heard == "resumed" {
					r.views = append(r.views, rest)
				}
				if heard == "stopped" {
					r.seen = append(r.seen, r.stopped())
				}
			}
		}
		os.WriteFile(output, []byte(`{"threads": [], "cost": {"reads": 1, "bytes": 8, "seconds": 0}}`), 0o600)
	}()
	return r
}

func (r *scriptedReader) Stdin() io.WriteCloser { return r.inW }
func (r *scriptedReader) Stdout() io.Reader     { return r.outR }
func (r *scriptedReader) Stderr() string        { return "" }
func (r *scriptedReader) Kill()                 { r.inR.Close(); r.outR.Close() }
func (r *scriptedReader) Wait() error           { <-r.done; return nil }

// sleepCall reports whether nr (decimal) is a call sleep(1) waits in:
// nanosleep, clock_nanosleep, or the restart of either after a stop.
func sleepCall(nr string) bool {
	n, err := strconv.Atoi(nr)
	return err == nil && (n == syscall.SYS_NANOSLEEP || n == syscall.SYS_CLOCK_NANOSLEEP || n == syscall.SYS_RESTART_SYSCALL)
}

// stopState is the state letter of /proc/PID/stat ('t': stopped by a
// tracer).
func stopState(t *testing.T, pid int) byte {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return s[strings.LastIndexByte(s, ')')+2]
}

// TestDirectProtocol: pyattach stops the process when the walker asks
// ("stop"), answers "stopped", resumes it on "detach" and answers
// "resumed"; with NoBlock a walker asking to stop is refused and the
// process is never stopped; asking more than maxStops times is
// refused, the process left running.
func TestDirectProtocol(t *testing.T) {
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	pid := sleeper.Process.Pid
	// Until it waits in nanosleep (what the views are checked against).
	// Only that call's number counts: while sleep(1) starts, a page
	// fault's error code sits where the call's number is and reads as
	// one.
	for deadline := time.Now().Add(time.Minute); ; {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "syscall"))
		if f := strings.Fields(string(b)); len(f) > 1 && sleepCall(f[0]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep(1) is not in a system call: %s", b)
		}
		runtime.Gosched()
	}
	tg := &Target{PID: pid, procRoot: "/proc", Res: &target.Result{}}

	run := func(opts Options, say, want []string) (*scriptedReader, Timings, error) {
		out := filepath.Join(t.TempDir(), "out.json")
		var r *scriptedReader
		svc := &Services{
			Python: func() (string, error) { return "python3", nil },
			StartReader: func(string, ...string) (Proc, error) {
				r = startScripted(out, say, want, func() byte { return stopState(t, pid) })
				return r, nil
			},
			Stderr: io.Discard,
		}
		var tm Timings
		_, err := tg.readDirect(context.Background(), opts, svc, 0x1000, 0, t.TempDir(), out, nil, nil, &tm)
		return r, tm, err
	}

	r, tm, err := run(Options{}, []string{"ready", "stop", "detach", "stop", "detach"}, []string{"go", "stopped", "resumed", "stopped", "resumed"})
	if err != nil || tm.Stops != 2 || strings.Join(r.heard, ",") != "go,stopped,resumed,stopped,resumed" || string(r.seen) != "tt" {
		t.Errorf("blocking: err %v, %d stops, answers %q, process states when told stopped %q (want tt)", err, tm.Stops, r.heard, r.seen)
	}
	if s := stopState(t, pid); s == 't' {
		t.Errorf("the process is left stopped (state %c)", s)
	}
	// With "resumed", the system call each thread was in, from its
	// registers: sleep(1) waits in one.
	for _, v := range r.views {
		var views map[string][2]*uint64
		if err := json.Unmarshal([]byte(v), &views); err != nil || views[strconv.Itoa(pid)][0] == nil || !sleepCall(strconv.FormatUint(*views[strconv.Itoa(pid)][0], 10)) {
			t.Errorf("resumed %s: want the sleeping thread %d in nanosleep (%v)", v, pid, err)
		}
	}

	_, tm, err = run(Options{NoBlock: true}, []string{"ready", "stop", "detach"}, []string{"go", "stopped", "resumed"})
	if err == nil || !strings.Contains(err.Error(), `said "stop" out of turn`) || tm.Stops != 0 {
		t.Errorf("--no-block, a walker asking to stop: err %v, %d stops; want refused, none", err, tm.Stops)
	}

	var say, want []string
	say, want = append(say, "ready"), append(want, "go")
	for range maxStops + 1 {
		say, want = append(say, "stop", "detach"), append(want, "stopped", "resumed")
	}
	_, tm, err = run(Options{}, say, want)
	if err == nil || tm.Stops != maxStops {
		t.Errorf("%d stops asked: err %v, %d stops; want refused after %d", maxStops+1, err, tm.Stops, maxStops)
	}
	if s := stopState(t, pid); s == 't' {
		t.Errorf("the process is left stopped (state %c)", s)
	}
}
