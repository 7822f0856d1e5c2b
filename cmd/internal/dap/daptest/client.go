// Package daptest is a small DAP client for tests: it drives an adapter
// (pyattach's proxy, or a plain gdb -i=dap or lldb-dap) as an editor
// does. Only tests import it.
package daptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/dap"
)

// Client speaks DAP to an adapter's stdin and stdout.
type Client struct {
	w       *dap.Writer
	Timeout time.Duration // per request and per awaited event (default 2 minutes)

	mu     sync.Mutex
	seq    int64
	waits  map[int64]chan dap.Message
	events []dap.Message
	evCond chan struct{} // closed and replaced at each event
	err    error         // the reader's end
	// Reverse answers the adapter's requests (runInTerminal...); nil:
	// an error response.
	Reverse func(req dap.Message) (body any, err error)
	// Log, when set, receives every message, both ways.
	Log func(dir string, m dap.Message)
}

// New starts reading the adapter's output r; w is its input.
func New(w io.Writer, r io.Reader) *Client {
	c := &Client{w: dap.NewWriter(w), Timeout: 2 * time.Minute, waits: map[int64]chan dap.Message{}, evCond: make(chan struct{})}
	go c.read(bufio.NewReader(r))
	return c
}

func (c *Client) read(r *bufio.Reader) {
	for {
		m, err := dap.ReadMessage(r)
		if err != nil {
			c.mu.Lock()
			c.err = err
			for _, ch := range c.waits {
				close(ch)
			}
			c.waits = map[int64]chan dap.Message{}
			close(c.evCond)
			c.evCond = make(chan struct{})
			c.mu.Unlock()
			return
		}
		if c.Log != nil {
			c.Log("<-", m)
		}
		switch m.Str("type") {
		case "response":
			rs, _ := m.Int("request_seq")
			c.mu.Lock()
			ch := c.waits[rs]
			delete(c.waits, rs)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case "event":
			c.mu.Lock()
			c.events = append(c.events, m)
			close(c.evCond)
			c.evCond = make(chan struct{})
			c.mu.Unlock()
		case "request":
			go c.reverse(m)
		}
	}
}

func (c *Client) reverse(req dap.Message) {
	resp := dap.Message{}
	resp.Set("type", "response")
	resp["request_seq"] = req["seq"]
	resp.Set("command", req.Str("command"))
	var body any
	err := fmt.Errorf("not supported")
	if c.Reverse != nil {
		body, err = c.Reverse(req)
	}
	resp.Set("success", err == nil)
	if err != nil {
		resp.Set("message", err.Error())
	} else if body != nil {
		resp.Set("body", body)
	}
	c.send(resp)
}

func (c *Client) send(m dap.Message) int64 {
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	m.Set("seq", seq)
	if c.Log != nil {
		c.Log("->", m)
	}
	_ = c.w.Write(m)
	return seq
}

// Send sends a request and returns a channel of its response (closed
// without one when the adapter's output ends).
func (c *Client) Send(command string, args any) (int64, <-chan dap.Message) {
	m := dap.Message{}
	m.Set("type", "request")
	m.Set("command", command)
	if args != nil {
		m.Set("arguments", args)
	}
	ch := make(chan dap.Message, 1)
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.waits[seq] = ch
	c.mu.Unlock()
	m.Set("seq", seq)
	if c.Log != nil {
		c.Log("->", m)
	}
	_ = c.w.Write(m)
	return seq, ch
}

// Wait waits for the response on ch.
func (c *Client) Wait(command string, ch <-chan dap.Message) (dap.Message, error) {
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: the adapter ended: %v", command, c.readErr())
		}
		return m, nil
	case <-time.After(c.Timeout):
		return nil, fmt.Errorf("%s: no response in %v", command, c.Timeout)
	}
}

func (c *Client) readErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Request sends a request and waits for its response, which must be
// a success; its body is returned.
func (c *Client) Request(command string, args any) (dap.Message, error) {
	m, err := c.Raw(command, args)
	if err != nil {
		return nil, err
	}
	if !m.Bool("success") {
		return m.Obj("body"), fmt.Errorf("%s failed: %s", command, m.Str("message"))
	}
	body := m.Obj("body")
	if body == nil {
		body = dap.Message{}
	}
	return body, nil
}

// Raw sends a request and returns its whole response.
func (c *Client) Raw(command string, args any) (dap.Message, error) {
	_, ch := c.Send(command, args)
	return c.Wait(command, ch)
}

// Event waits for the next event named name after the first skip
// events of all so far (see Events), returning it and its index.
func (c *Client) Event(name string, after int) (dap.Message, int, error) {
	return c.EventWithin(name, after, c.Timeout)
}

// EventWithin is Event waiting at most d.
func (c *Client) EventWithin(name string, after int, d time.Duration) (dap.Message, int, error) {
	deadline := time.After(d)
	for {
		c.mu.Lock()
		for i := after; i < len(c.events); i++ {
			if c.events[i].Str("event") == name {
				m := c.events[i]
				c.mu.Unlock()
				return m, i + 1, nil
			}
		}
		cond, err := c.evCond, c.err
		c.mu.Unlock()
		if err != nil {
			return nil, 0, fmt.Errorf("event %s: the adapter ended: %v", name, err)
		}
		select {
		case <-cond:
		case <-deadline:
			return nil, 0, fmt.Errorf("no %s event in %v", name, d)
		}
	}
}

// Events is every event so far.
func (c *Client) Events() []dap.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]dap.Message(nil), c.events...)
}

// Output is the text of every output event so far.
func (c *Client) Output() string {
	var b strings.Builder
	for _, e := range c.Events() {
		if e.Str("event") == "output" {
			b.WriteString(e.Obj("body").Str("output"))
		}
	}
	return b.String()
}

// Frame is a stackTrace frame, decoded.
type Frame struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Line   int64  `json:"line"`
	Hint   string `json:"presentationHint"`
	IP     string `json:"instructionPointerReference"`
	Source *struct {
		Name string `json:"name"`
		Path string `json:"path"`
		Ref  int64  `json:"sourceReference"`
	} `json:"source"`
}

// Var is a variables entry, decoded.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type"`
	Ref   int64  `json:"variablesReference"`
}

// Decode decodes field k of m into out.
func Decode(m dap.Message, k string, out any) error {
	return json.Unmarshal(m[k], out)
}

// StackTrace is thread tid's frames from start, levels of them (0:
// all), and totalFrames.
func (c *Client) StackTrace(tid, start, levels int64) ([]Frame, int64, error) {
	b, err := c.Request("stackTrace", map[string]any{"threadId": tid, "startFrame": start, "levels": levels})
	if err != nil {
		return nil, 0, err
	}
	var fs []Frame
	if err := Decode(b, "stackFrames", &fs); err != nil {
		return nil, 0, err
	}
	total, _ := b.Int("totalFrames")
	return fs, total, nil
}

// Variables lists reference ref's variables.
func (c *Client) Variables(ref int64) ([]Var, error) {
	b, err := c.Request("variables", map[string]any{"variablesReference": ref})
	if err != nil {
		return nil, err
	}
	var vs []Var
	err = Decode(b, "variables", &vs)
	return vs, err
}

// Scope is a scopes entry, decoded.
type Scope struct {
	Name string `json:"name"`
	Ref  int64  `json:"variablesReference"`
}

// Scopes lists frame id's scopes.
func (c *Client) Scopes(frame int64) ([]Scope, error) {
	b, err := c.Request("scopes", map[string]any{"frameId": frame})
	if err != nil {
		return nil, err
	}
	var ss []Scope
	err = Decode(b, "scopes", &ss)
	return ss, err
}
