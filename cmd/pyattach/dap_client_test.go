//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/dap"
	"github.com/pyattach/pyattach/cmd/internal/dap/daptest"
)

// dapClient runs an adapter process on stdio and drives it with
// daptest's client, as an editor does; it keeps a transcript (logged
// when the test fails) and fails the test on any error.

// dapWait bounds each wait for a message (a hang guard, not a timing
// check): gdb reading python3.14's DWARF on a loaded 2-CPU machine
// takes seconds, never minutes.
const dapWait = 3 * time.Minute

type dapClient struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	c    *daptest.Client
	done chan struct{} // closed when the adapter's stdout ends

	mu     sync.Mutex
	stderr bytes.Buffer
	log    []string
	start  time.Time
}

// startDAPClient runs cmd as an adapter on stdio (in its own process group,
// killed when the test ends) and returns a client for it.
func startDAPClient(t testing.TB, name string, cmd *exec.Cmd) *dapClient {
	t.Helper()
	d := &dapClient{t: t, name: name, cmd: cmd, done: make(chan struct{}), start: time.Now()}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Stderr = &dapLockedWriter{mu: &d.mu, w: &d.stderr}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d.in = in
	ready := make(chan struct{})
	d.c = daptest.New(in, &dapEndReader{r: out, ready: ready, done: d.done})
	d.c.Timeout = dapWait
	d.c.Log = d.record
	close(ready)
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		d.in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-d.done:
			cmd.Wait()
		case <-time.After(dapWait):
			t.Errorf("%s: its stdout stays open after it was killed", name)
		}
		if t.Failed() {
			t.Logf("%s: transcript:\n%s\nstderr:\n%s", name, d.transcript(0, 1500), d.stderrText())
		}
	})
	return d
}

// dapEndReader closes done when r ends, and reads nothing before ready.
type dapEndReader struct {
	r           io.Reader
	ready, done chan struct{}
	once        sync.Once
}

func (e *dapEndReader) Read(p []byte) (int, error) {
	<-e.ready
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.done) })
	}
	return n, err
}

type dapLockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *dapLockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (d *dapClient) record(dir string, m dap.Message) {
	b, _ := json.Marshal(m)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log = append(d.log, fmt.Sprintf("%7.3fs %s %s", time.Since(d.start).Seconds(), dir, b))
}

func (d *dapClient) stderrText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stderr.String()
}

// transcript is the messages both ways from index from on (negative:
// from the end), each cut to limit bytes, one a line.
func (d *dapClient) transcript(from, limit int) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if from < 0 {
		from = max(len(d.log)+from, 0)
	}
	var b strings.Builder
	for _, s := range d.log[min(from, len(d.log)):] {
		if len(s) > limit {
			s = s[:limit] + "…"
		}
		fmt.Fprintf(&b, "%s\n", s)
	}
	return b.String()
}

func (d *dapClient) fail(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("%s: %s\nlast messages:\n%s\nstderr:\n%s", d.name, fmt.Sprintf(format, args...), d.transcript(-20, 1000), d.stderrText())
}

// send sends a request; response waits for its answer.
func (d *dapClient) send(command string, args any) (string, <-chan dap.Message) {
	_, ch := d.c.Send(command, args)
	return command, ch
}

func (d *dapClient) response(command string, ch <-chan dap.Message) dap.Message {
	d.t.Helper()
	m, err := d.c.Wait(command, ch)
	if err != nil {
		d.fail("%v", err)
	}
	return m
}

// call sends a request, waits for its response, fails the test unless
// it succeeded, and decodes its body into body (when not nil).
func (d *dapClient) call(command string, args, body any) {
	d.t.Helper()
	m := d.response(d.send(command, args))
	if !m.Bool("success") {
		raw, _ := json.Marshal(m)
		d.fail("%s %s failed: %s", command, dapJSON(args), raw)
	}
	if body != nil {
		b, _ := json.Marshal(m.Obj("body"))
		if err := json.Unmarshal(b, body); err != nil {
			d.fail("%s: body: %v\n%s", command, err, b)
		}
	}
}

// event waits for an event named name after the first after events and
// returns it with the index to wait after for the next one.
func (d *dapClient) event(name string, after int) (dap.Message, int) {
	d.t.Helper()
	m, next, err := d.c.Event(name, after)
	if err != nil {
		d.fail("%v", err)
	}
	return m, next
}

// finish closes the adapter's stdin and waits for its stdout to end and
// for it to exit (an adapter exits after disconnect); it returns how
// the adapter exited.
func (d *dapClient) finish() error {
	d.t.Helper()
	d.in.Close()
	select {
	case <-d.done:
	case <-time.After(dapWait):
		d.fail("still writing %v after its stdin was closed", dapWait)
	}
	return d.cmd.Wait()
}

func dapJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Decoded bodies: the fields the tests read.

type dapcThread struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type dapcSource struct {
	Name            string `json:"name"`
	Path            string `json:"path"`
	SourceReference int    `json:"sourceReference"`
}

type dapcFrame struct {
	ID                 int         `json:"id"`
	Name               string      `json:"name"`
	Line               int         `json:"line"`
	Source             *dapcSource `json:"source"`
	PresentationHint   string      `json:"presentationHint"`
	InstructionPointer string      `json:"instructionPointerReference"`
}

type dapcScope struct {
	Name               string `json:"name"`
	VariablesReference int    `json:"variablesReference"`
	PresentationHint   string `json:"presentationHint"`
}

type dapcVariable struct {
	Name               string `json:"name"`
	Value              string `json:"value"`
	Type               string `json:"type"`
	VariablesReference int    `json:"variablesReference"`
}
