// Package dap is pyattach's Debug Adapter Protocol front end: a proxy
// between an editor (on stdio) and the debugger's own adapter (gdb
// -i=dap, lldb-dap) that puts the Python frames, their sources and
// their locals among the C frames the adapter lists.
//
// Messages are kept as maps of raw JSON values (Message): the proxy
// decodes only the fields it reads or rewrites, so that every field it
// does not know passes through byte for byte.
package dap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Bounds of one message. An editor's requests are small; an adapter's
// responses may carry a file's text or a long stack.
const (
	// MaxHeader bounds one message's header (all its lines).
	MaxHeader = 4096
	// MaxBody bounds one message's JSON body.
	MaxBody = 64 << 20
)

// ErrFraming is wrapped by every error about a message's framing or
// JSON.
var ErrFraming = errors.New("malformed DAP message")

// Message is one DAP message, each top-level field as raw JSON.
type Message map[string]json.RawMessage

// ReadMessage reads one message: header lines ending in "\r\n", one of
// them Content-Length, an empty line, then that many bytes of a JSON
// object. io.EOF is returned as it is when the stream ends before a
// message starts.
func ReadMessage(r *bufio.Reader) (Message, error) {
	length := -1
	read := 0
	for first := true; ; first = false {
		line, err := readLine(r, MaxHeader-read)
		if err != nil {
			if first && err == io.EOF && len(line) == 0 {
				return nil, io.EOF
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%w: header: %v", ErrFraming, err)
		}
		read += len(line)
		s := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
		if s == "" {
			break
		}
		name, val, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("%w: header line %q has no ':'", ErrFraming, s)
		}
		if !strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			continue
		}
		if length >= 0 {
			return nil, fmt.Errorf("%w: two Content-Length headers", ErrFraming)
		}
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: Content-Length %q is not a length", ErrFraming, strings.TrimSpace(val))
		}
		if n > MaxBody {
			return nil, fmt.Errorf("%w: Content-Length %d is over %d", ErrFraming, n, MaxBody)
		}
		length = n
	}
	if length < 0 {
		return nil, fmt.Errorf("%w: no Content-Length header", ErrFraming)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: body: %v", ErrFraming, err)
	}
	var m Message
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: body: %v", ErrFraming, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: body is not a JSON object", ErrFraming)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: body holds more than one JSON value", ErrFraming)
	}
	return m, nil
}

// readLine reads up to and including '\n', at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		if len(line) >= limit {
			return line, fmt.Errorf("header longer than %d bytes", MaxHeader)
		}
		b, err := r.ReadByte()
		if err != nil {
			return line, err
		}
		line = append(line, b)
		if b == '\n' {
			return line, nil
		}
	}
}

// Writer writes whole messages, one at a time, to w.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write frames and writes m.
func (w *Writer) Write(m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(b.Bytes())
	return err
}

// Accessors of a message's fields: each returns the zero value when the
// field is missing or of another type.

// Str is field k as a string.
func (m Message) Str(k string) string {
	var s string
	if v, ok := m[k]; ok {
		_ = json.Unmarshal(v, &s)
	}
	return s
}

// Int is field k as an integer (ok false when missing or not one).
func (m Message) Int(k string) (int64, bool) {
	v, ok := m[k]
	if !ok {
		return 0, false
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, false
	}
	return n, true
}

// Bool is field k as a boolean.
func (m Message) Bool(k string) bool {
	var b bool
	if v, ok := m[k]; ok {
		_ = json.Unmarshal(v, &b)
	}
	return b
}

// Obj is field k as a Message (nil when missing or not an object).
func (m Message) Obj(k string) Message {
	v, ok := m[k]
	if !ok {
		return nil
	}
	var o Message
	if err := json.Unmarshal(v, &o); err != nil {
		return nil
	}
	return o
}

// Set sets field k to v's JSON.
func (m Message) Set(k string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain values are set
	}
	m[k] = b
}

// Clone is a shallow copy of m (the raw values are never changed in
// place).
func (m Message) Clone() Message {
	c := make(Message, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
