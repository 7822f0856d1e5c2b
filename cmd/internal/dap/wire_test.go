package dap

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func read(s string) (Message, error) {
	return ReadMessage(bufio.NewReader(strings.NewReader(s)))
}

func TestReadMessage(t *testing.T) {
	m, err := read("Content-Length: 45\r\n\r\n{\"seq\":1,\"type\":\"request\",\"x\":{\"a\":[1,2.50]}}")
	if err != nil {
		t.Fatal(err)
	}
	// Unknown fields are kept byte for byte.
	if string(m["x"]) != `{"a":[1,2.50]}` || m.Str("type") != "request" {
		t.Fatalf("%v", m)
	}
	var b bytes.Buffer
	if err := NewWriter(&b).Write(m); err != nil {
		t.Fatal(err)
	}
	m2, err := read(b.String())
	if err != nil || string(m2["x"]) != `{"a":[1,2.50]}` {
		t.Fatalf("round trip: %v %v", m2, err)
	}
	// Other headers are ignored; two messages in a row.
	two := "X-Other: 1\r\ncontent-length:2\r\n\r\n{}Content-Length: 2\r\n\r\n{}"
	r := bufio.NewReader(strings.NewReader(two))
	for i := 0; i < 2; i++ {
		if _, err := ReadMessage(r); err != nil {
			t.Fatal(i, err)
		}
	}
	if _, err := ReadMessage(r); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	for _, bad := range []string{
		"Content-Length: 3\r\n\r\n{}",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: x\r\n\r\n",
		"Content-Length: 99999999999999999999\r\n\r\n",
		"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
		"\r\n{}",
		"no colon\r\n\r\n",
		"Content-Length: 2\r\n\r\n[]",
		"Content-Length: 4\r\n\r\nnull",
		"Content-Length: 4\r\n\r\n{}{}",
		"Content-Length: 2\r\n",
		"Content-Length: 1000000000\r\n\r\n{}",
		strings.Repeat("a", MaxHeader+10),
		"X: " + strings.Repeat("a", MaxHeader) + "\r\n\r\n",
	} {
		if _, err := read(bad); err == nil || !errors.Is(err, ErrFraming) {
			t.Errorf("%.60q: %v", bad, err)
		}
	}
}

func FuzzReadMessage(f *testing.F) {
	for _, s := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 45\r\n\r\n{\"seq\":1,\"type\":\"request\",\"x\":{\"a\":[1,2.50]}}",
		"content-length:2\r\nX: y\r\n\r\n{}Content-Length: 2\r\n\r\n{}",
		"Content-Length: 9\r\n\r\n{\"a\":nul",
		"Content-Length: -5\r\n\r\n",
		"\r\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for i := 0; i < 10; i++ {
			m, err := ReadMessage(r)
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrFraming) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				return
			}
			if m == nil {
				t.Fatal("nil message without error")
			}
			// What was read writes back and reads again the same.
			var b bytes.Buffer
			if err := NewWriter(&b).Write(m); err != nil {
				t.Fatal(err)
			}
			m2, err := ReadMessage(bufio.NewReader(&b))
			if err != nil || len(m2) != len(m) {
				t.Fatalf("round trip: %v", err)
			}
			_, _ = m.Int("seq")
			_ = m.Str("type")
			_ = m.Obj("arguments")
		}
	})
}
