package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/proc"
)

// TestNeedsLinux: on macOS a PID is refused before /proc is looked at,
// with one error line and a hint that names what works there (files),
// and the process's executable when macOS could name it.
func TestNeedsLinux(t *testing.T) {
	t.Parallel()
	_, err := target.Resolve(context.Background(), "4242", target.Options{ProcRoot: t.TempDir(), GOOS: "darwin"})
	var b bytes.Buffer
	report(&b, err)
	want := "pyattach: error: process 4242: reading a running process needs Linux (/proc and ptrace); this system is darwin\n" +
		"  hint: on darwin pyattach works on files: pass the program, a virtualenv or a core file instead (pyattach resolve .venv, pyattach lldb PROGRAM -c CORE)\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	report(&b, &proc.NeedsLinuxError{PID: 4242, GOOS: "darwin", Exe: "/Users/me/My App/.venv/bin/python"})
	want = "pyattach: error: process 4242: reading a running process needs Linux (/proc and ptrace); this system is darwin\n" +
		"  hint: on darwin pyattach works on files: the process runs '/Users/me/My App/.venv/bin/python', so try: pyattach resolve '/Users/me/My App/.venv/bin/python', or pyattach lldb '/Users/me/My App/.venv/bin/python'\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
