package dump

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/proc"
)

// The header of one process of dump --subprocesses: its command line,
// escaped, and its parent when it is below the target.
func TestRenderTreeHeader(t *testing.T) {
	walker := `{"threads": [{"tid": 43, "name": "MainThread", "frames": []}]}`
	tp := &TreeProcess{PID: 43, Parent: 42, Cmdline: []string{"python3", "-c", "import x\x1b[2J\nfake"}}
	_, text, _ := render(t, Header{PID: 43, Version: "3.11.99", Cmdline: tp.Shown(), Parent: tp.Parent}, false, walker)
	checkText(t, text, `Process 43 (child of 42): python3 -c 'import x\x1b[2J\nfake'
Python 3.11.99, 1 threads

Thread 43 "MainThread":
Unable to locate python frame
`)
	_, text, _ = render(t, Header{PID: 42, Version: "3.11.99", Cmdline: (&TreeProcess{Comm: "gunicorn: master"}).Shown()}, false, walker)
	if first, _, _ := strings.Cut(text, "\n"); first != "Process 42: [gunicorn: master]" {
		t.Errorf("first line %q", first)
	}
}

func TestNameLines(t *testing.T) {
	in := "pyattach: warning: thread 5: bad\ngdb says pyattach: x\npyattach: walk stopped: budget; output is partial\nno newline"
	want := "pyattach: process 7: warning: thread 5: bad\ngdb says pyattach: x\npyattach: process 7: walk stopped: budget; output is partial\nno newline"
	if got := string(nameLines([]byte(in), 7)); got != want {
		t.Errorf("nameLines:\n%s\nwant:\n%s", got, want)
	}
	if got := nameLines(nil, 7); len(got) != 0 {
		t.Errorf("nameLines(nil) = %q", got)
	}
}

// The array keeps each object's escapes (\u2028 written by EscapeJSON)
// and is one valid, indented JSON value; no process gives [].
func TestWriteArray(t *testing.T) {
	var b bytes.Buffer
	if err := writeArray(&b, [][]byte{[]byte("{\n  \"pid\": 1,\n  \"s\": \"a\\u2028b\"\n}\n"), []byte(`{"pid":2}`)}); err != nil {
		t.Fatal(err)
	}
	want := "[\n  {\n    \"pid\": 1,\n    \"s\": \"a\\u2028b\"\n  },\n  {\n    \"pid\": 2\n  }\n]\n"
	if b.String() != want {
		t.Errorf("writeArray:\n%s\nwant:\n%s", b.String(), want)
	}
	var v []map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || len(v) != 2 || v[0]["s"] != "a\u2028b" {
		t.Errorf("decoded %v, %v", v, err)
	}
	b.Reset()
	if err := writeArray(&b, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("writeArray(nil) = %q, %v", b.String(), err)
	}
}

// TreeOutput adds ppid and cmdline to the per-process object.
func TestTreeOutputJSON(t *testing.T) {
	b, err := json.Marshal(TreeOutput{Output: Output{PID: 43, Python: Python{Version: "3.12.1"}, Threads: []Thread{}}, PPID: 42, Cmdline: []string{"python3", "w.py"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"pid":43,"python":{"version":"3.12.1"},"threads":[],"ppid":42,"cmdline":["python3","w.py"]}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
}

// exited: gone, a zombie, another process with the PID (another start
// time), or gone already when listed (Start 0).
func TestExited(t *testing.T) {
	root := t.TempDir()
	stat := func(pid, state, start string) {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		line := pid + " (x) " + state + " 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + start + " 0 0\n"
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat("10", "S", "500")
	stat("11", "Z", "500")
	pr := proc.New(root)
	for _, tt := range []struct {
		d    proc.Descendant
		want bool
	}{
		{proc.Descendant{PID: 10, Start: 500}, false},
		{proc.Descendant{PID: 10, Start: 499}, true},
		{proc.Descendant{PID: 10}, true},
		{proc.Descendant{PID: 11, Start: 500}, true},
		{proc.Descendant{PID: 12, Start: 500}, true},
	} {
		if got := exited(pr, tt.d); got != tt.want {
			t.Errorf("exited(%+v) = %v, want %v", tt.d, got, tt.want)
		}
	}
}

// A core is refused before anything is read.
func TestRunTreeNotPID(t *testing.T) {
	err := RunTree(context.Background(), Options{Target: "core.42"}, &Services{ProcRoot: t.TempDir()})
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindTarget || !strings.Contains(err.Error(), `"core.42" is not a PID`) {
		t.Errorf("RunTree(core.42): %v", err)
	}
}
