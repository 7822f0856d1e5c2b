//go:build linux

package dump

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
				r.heard = append(r.heard, in.Text())
				if in.Text() == "stopped" {
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
		_, err := tg.readDirect(context.Background(), opts, svc, 0x1000, 0, t.TempDir(), out, nil, &tm)
		return r, tm, err
	}

	r, tm, err := run(Options{}, []string{"ready", "stop", "detach", "stop", "detach"}, []string{"go", "stopped", "resumed", "stopped", "resumed"})
	if err != nil || tm.Stops != 2 || strings.Join(r.heard, ",") != "go,stopped,resumed,stopped,resumed" || string(r.seen) != "tt" {
		t.Errorf("blocking: err %v, %d stops, answers %q, process states when told stopped %q (want tt)", err, tm.Stops, r.heard, r.seen)
	}
	if s := stopState(t, pid); s == 't' {
		t.Errorf("the process is left stopped (state %c)", s)
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
