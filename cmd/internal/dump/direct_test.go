package dump

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"

	"github.com/pyattach/pyattach/cmd/internal/ptrace"
	"github.com/pyattach/pyattach/detect/unwind"
)

// TestReader: auto is the direct reader for a live process (with
// --native where detect/unwind knows the architecture) and gdb
// otherwise; direct refuses a core; an unknown name is refused.
func TestReader(t *testing.T) {
	live, core := &Target{PID: 42}, &Target{Core: "core.42"}
	// --native: the direct reader where Go unwinds C stacks.
	nativeReader, nativeDirect, nativeKind := ReaderGDB, "", KindReader
	if unwind.HostArch() != 0 {
		nativeReader, nativeDirect, nativeKind = ReaderDirect, ReaderDirect, 0
	}
	for _, c := range []struct {
		t      *Target
		reader string
		native bool
		want   string
		kind   Kind
	}{
		{live, "", false, ReaderDirect, 0},
		{live, ReaderAuto, false, ReaderDirect, 0},
		{live, ReaderAuto, true, nativeReader, 0},
		{core, ReaderAuto, false, ReaderGDB, 0},
		{live, ReaderGDB, false, ReaderGDB, 0},
		{live, ReaderDirect, false, ReaderDirect, 0},
		{live, ReaderDirect, true, nativeDirect, nativeKind},
		{core, ReaderDirect, false, "", KindReader},
		{live, "lldb", false, "", KindReader},
	} {
		got, err := c.t.Reader(Options{Reader: c.reader, Native: c.native})
		var e *Error
		if got != c.want || (c.kind != 0) != (err != nil) || err != nil && (!errors.As(err, &e) || e.Kind != c.kind) {
			t.Errorf("reader %q (pid %d, native %v) = %q, %v; want %q, kind %d", c.reader, c.t.PID, c.native, got, err, c.want, c.kind)
		}
	}
	for _, c := range []struct {
		t      *Target
		opts   Options
		reader string
	}{
		{live, Options{NoBlock: true}, ReaderDirect},
		{live, Options{NoBlock: true, Reader: ReaderDirect}, ReaderDirect},
		{live, Options{NoBlock: true, Reader: ReaderGDB}, ""},
		{live, Options{NoBlock: true, Native: true}, ""},
		{core, Options{NoBlock: true}, ""},
	} {
		got, err := c.t.Reader(c.opts)
		var e *Error
		if got != c.reader || c.reader == "" && (!errors.As(err, &e) || e.Kind != KindReader || !strings.Contains(err.Error(), "--no-block")) {
			t.Errorf("--no-block %+v (pid %d) = %q, %v; want %q", c.opts, c.t.PID, got, err, c.reader)
		}
	}
	if !fallback(fmt.Errorf("x: %w", ErrNoSystemPython)) || !fallback(&ptrace.Error{PID: 1, Err: errors.New("EPERM")}) || fallback(errors.New("other")) {
		t.Errorf("fallback: gdb is used for no trusted python3 and a refused ptrace only")
	}
}

// TestSystemPython: the first candidate only root can change is taken;
// one in a directory others may write is refused, and none found says
// why.
func TestSystemPython(t *testing.T) {
	testenv.NeedRoot(t, "the candidates must be root's")
	dir := t.TempDir()
	for _, d := range []string{"open", "safe"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "python3"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "open"), 0o777); err != nil {
		t.Fatal(err)
	}
	old := SystemPythons
	defer func() { SystemPythons = old }()
	SystemPythons = []string{filepath.Join(dir, "missing", "python3"), filepath.Join(dir, "open", "python3"), filepath.Join(dir, "safe", "python3")}
	if got, err := SystemPython(); err != nil || got != SystemPythons[2] {
		t.Errorf("SystemPython() = %q, %v; want %s", got, err, SystemPythons[2])
	}
	SystemPythons = SystemPythons[:2]
	if got, err := SystemPython(); !errors.Is(err, ErrNoSystemPython) {
		t.Errorf("SystemPython() = %q, %v; want ErrNoSystemPython", got, err)
	}
}
