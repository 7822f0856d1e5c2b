//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A small Debug Adapter Protocol client for the tests, driving an
// adapter on its stdin and stdout as an editor does: Content-Length
// framed JSON, requests numbered from 1, responses and events read in
// the background and kept in arrival order. It is meant to be replaced
// by the proxy's own test client (cmd/internal/dap/daptest) once that
// exists; the tests use only call, send, response, event and since.

// dapWait bounds each wait for a message (a hang guard, not a timing
// check): gdb reading python3.14's DWARF on a loaded 2-CPU machine
// takes seconds, never minutes.
const dapWait = 3 * time.Minute

// dapMsg is one message from the adapter.
type dapMsg struct {
	Seq        int             `json:"seq"`
	Type       string          `json:"type"`
	Command    string          `json:"command"`
	RequestSeq int             `json:"request_seq"`
	Success    bool            `json:"success"`
	Message    string          `json:"message"`
	Event      string          `json:"event"`
	Body       json.RawMessage `json:"body"`
	at         time.Time
	raw        string
}

type dapClient struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	in     io.WriteCloser
	stderr bytes.Buffer

	mu   sync.Mutex
	seq  int
	got  []dapMsg
	sent map[int]time.Time
	eof  error
	more chan struct{}
	done chan struct{} // closed when stdout ends
}

// startDAP runs cmd as an adapter on stdio (in its own process group,
// killed when the test ends) and returns a client for it. When the test
// fails, the transcript and the adapter's stderr are logged.
func startDAP(t testing.TB, name string, cmd *exec.Cmd) *dapClient {
	t.Helper()
	c := &dapClient{t: t, name: name, cmd: cmd, sent: map[int]time.Time{}, more: make(chan struct{}, 1), done: make(chan struct{})}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.stderr}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.in = in
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go c.read(out)
	t.Cleanup(func() {
		c.in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s: transcript:\n%s\nstderr:\n%s", name, c.transcript(0, 2000), c.stderrText())
		}
	})
	return c
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (c *dapClient) stderrText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// read parses the adapter's stdout until it ends.
func (c *dapClient) read(out io.Reader) {
	tp := textproto.NewReader(bufio.NewReader(out))
	var err error
	for {
		var h textproto.MIMEHeader
		h, err = tp.ReadMIMEHeader()
		if err != nil {
			break
		}
		var n int
		n, err = strconv.Atoi(h.Get("Content-Length"))
		if err != nil || n < 0 || n > 64<<20 {
			err = fmt.Errorf("bad Content-Length %q", h.Get("Content-Length"))
			break
		}
		b := make([]byte, n)
		if _, err = io.ReadFull(tp.R, b); err != nil {
			break
		}
		m := dapMsg{at: time.Now(), raw: string(b)}
		if err = json.Unmarshal(b, &m); err != nil {
			err = fmt.Errorf("bad message %q: %v", b, err)
			break
		}
		c.mu.Lock()
		c.got = append(c.got, m)
		c.mu.Unlock()
		c.notify()
	}
	c.mu.Lock()
	c.eof = err
	c.mu.Unlock()
	close(c.done)
	c.notify()
}

func (c *dapClient) notify() {
	select {
	case c.more <- struct{}{}:
	default:
	}
}

// send writes a request and returns its seq.
func (c *dapClient) send(command string, args any) int {
	c.t.Helper()
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.sent[seq] = time.Now()
	c.mu.Unlock()
	m := map[string]any{"seq": seq, "type": "request", "command": command}
	if args != nil {
		m["arguments"] = args
	}
	b, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(b), b); err != nil {
		c.t.Fatalf("%s: sending %s: %v\nstderr:\n%s", c.name, command, err, c.stderrText())
	}
	return seq
}

// wait returns the index of the first message from index from on that
// ok accepts, waiting for it.
func (c *dapClient) wait(what string, from int, ok func(dapMsg) bool) int {
	c.t.Helper()
	deadline := time.NewTimer(dapWait)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.got); i++ {
			if ok(c.got[i]) {
				c.mu.Unlock()
				return i
			}
		}
		eof := c.eof
		n := len(c.got)
		c.mu.Unlock()
		if eof != nil {
			c.t.Fatalf("%s: waiting for %s: the adapter's stdout ended (%v)\nlast messages:\n%s\nstderr:\n%s", c.name, what, eof, c.transcript(n-20, 1000), c.stderrText())
		}
		select {
		case <-c.more:
		case <-deadline.C:
			c.t.Fatalf("%s: no %s after %v\nlast messages:\n%s\nstderr:\n%s", c.name, what, dapWait, c.transcript(n-20, 1000), c.stderrText())
		}
	}
}

// response waits for the response to request seq.
func (c *dapClient) response(seq int) dapMsg {
	c.t.Helper()
	i := c.wait(fmt.Sprintf("response to request %d", seq), 0, func(m dapMsg) bool {
		return m.Type == "response" && m.RequestSeq == seq
	})
	return c.msg(i)
}

// event waits for an event named name that arrives at index from or
// later (since() gives an index) and returns it.
func (c *dapClient) event(name string, from int) dapMsg {
	c.t.Helper()
	i := c.wait("event "+name, from, func(m dapMsg) bool { return m.Type == "event" && m.Event == name })
	return c.msg(i)
}

// since is the index the next message will have.
func (c *dapClient) since() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

func (c *dapClient) msg(i int) dapMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got[i]
}

// between returns the messages from index from up to (not including) to.
func (c *dapClient) between(from, to int) []dapMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]dapMsg(nil), c.got[from:to]...)
}

// call sends a request, waits for its response, fails the test unless
// it succeeded, and decodes its body into body (when not nil).
func (c *dapClient) call(command string, args, body any) dapMsg {
	c.t.Helper()
	r := c.response(c.send(command, args))
	if !r.Success {
		c.t.Fatalf("%s: %s %s failed: %s", c.name, command, jsonText(args), r.raw)
	}
	if body != nil {
		if err := json.Unmarshal(r.Body, body); err != nil {
			c.t.Fatalf("%s: %s: body: %v\n%s", c.name, command, err, r.raw)
		}
	}
	return r
}

// sentAt is when request seq was sent.
func (c *dapClient) sentAt(seq int) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent[seq]
}

// transcript is the messages from index from on, each cut to
// limit bytes, one a line.
func (c *dapClient) transcript(from, limit int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for i := max(from, 0); i < len(c.got); i++ {
		s := c.got[i].raw
		if len(s) > limit {
			s = s[:limit] + "…"
		}
		fmt.Fprintf(&b, "%s\n", s)
	}
	return b.String()
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// DAP bodies the tests read.

type dapThread struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type dapSource struct {
	Name            string `json:"name"`
	Path            string `json:"path"`
	SourceReference int    `json:"sourceReference"`
}

type dapFrame struct {
	ID                 int        `json:"id"`
	Name               string     `json:"name"`
	Line               int        `json:"line"`
	Source             *dapSource `json:"source"`
	PresentationHint   string     `json:"presentationHint"`
	InstructionPointer string     `json:"instructionPointerReference"`
}

type dapScope struct {
	Name               string `json:"name"`
	VariablesReference int    `json:"variablesReference"`
	PresentationHint   string `json:"presentationHint"`
}

type dapVariable struct {
	Name               string `json:"name"`
	Value              string `json:"value"`
	Type               string `json:"type"`
	VariablesReference int    `json:"variablesReference"`
}

// finish closes the adapter's stdin and waits for its stdout to end and
// for it to exit (an adapter exits after disconnect); it returns how
// the adapter exited.
func (c *dapClient) finish() error {
	c.t.Helper()
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(dapWait):
		c.t.Fatalf("%s: still writing %v after its stdin was closed\nstderr:\n%s", c.name, dapWait, c.stderrText())
	}
	return c.cmd.Wait()
}
