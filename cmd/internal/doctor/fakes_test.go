package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
)

// The targets these tests build by hand carry made-up patch releases
// (3.11.99, 3.12.99): they are inputs to the checks, not this machine's
// interpreters, which the integration tests in cmd/pyattach discover.

// fakeRunner answers commands with canned output, chosen by the first
// rule whose words all occur in "name arg...". It records every call
// and fails the test when a command runs without a deadline.
type fakeRunner struct {
	t     *testing.T
	rules []rule
	mu    sync.Mutex
	calls []string
}

type rule struct {
	match []string
	out   string
	err   error
}

func (f *fakeRunner) run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	line := strings.Join(append([]string{name}, args...), " ")
	if _, ok := ctx.Deadline(); !ok {
		f.t.Errorf("%s runs without a deadline", line)
	}
	f.mu.Lock()
	f.calls = append(f.calls, line)
	f.mu.Unlock()
	for _, r := range f.rules {
		all := true
		for _, w := range r.match {
			all = all && strings.Contains(line, w)
		}
		if all {
			return r.out, r.err
		}
	}
	return "", errors.New("exit status 127")
}

// fakeDebuggers finds the named debuggers at the given paths only.
func fakeDebuggers(paths map[string]string) func(names ...string) (string, error) {
	return func(names ...string) (string, error) {
		for _, n := range names {
			if p, ok := paths[n]; ok {
				return p, nil
			}
		}
		return "", errors.New(names[0] + " is not installed")
	}
}

// newServices returns Services on an empty proc root and host root, with
// no debuggers and a runner that knows no command.
func newServices(t *testing.T, rules ...rule) (*Services, *fakeRunner) {
	t.Helper()
	dir := t.TempDir()
	fr := &fakeRunner{t: t, rules: rules}
	s := &Services{
		ProcRoot:     filepath.Join(dir, "proc"),
		HostRoot:     filepath.Join(dir, "host"),
		Env:          []string{"PATH=/nonexistent"},
		Euid:         1000,
		UID:          1000,
		CacheDir:     filepath.Join(dir, "cache"),
		Run:          fr.run,
		FindDebugger: fakeDebuggers(nil),
		Resolve: func(context.Context, string) (*target.Result, error) {
			return nil, errors.New("no target in this test")
		},
		DebugInfo: func(context.Context, string, *target.Result) (*debugsearch.Info, error) {
			return &debugsearch.Info{}, nil
		},
	}
	for _, d := range []string{s.ProcRoot, s.HostRoot, s.CacheDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s, fr
}

// writeFile writes a file and its directories.
func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// want fails the test unless c has the status and its summary (and fix,
// when fix is not "") contain the given text.
func want(t *testing.T, name string, c Check, status, summary, fix string) {
	t.Helper()
	if c.Status != status || !strings.Contains(c.Summary, summary) || fix != "" && !strings.Contains(c.Fix, fix) {
		t.Errorf("%s: got %s %q (fix %q), want %s %q (fix %q)", name, c.Status, c.Summary, c.Fix, status, summary, fix)
	}
}

// byID returns the checks with the id.
func byID(checks []Check, id string) []Check {
	var out []Check
	for _, c := range checks {
		if c.ID == id {
			out = append(out, c)
		}
	}
	return out
}

// one returns the single check with the id.
func one(t *testing.T, checks []Check, id string) Check {
	t.Helper()
	cs := byID(checks, id)
	if len(cs) != 1 {
		t.Fatalf("%d checks %s in %+v", len(cs), id, checks)
	}
	return cs[0]
}

func itoa(n int) string { return strconv.Itoa(n) }

// newResult is a static interpreter of Python 3.12 named by path.
func newResult() *target.Result {
	return &target.Result{Target: "app/python3.12", TargetKind: "path", Exe: "/opt/py/bin/python3.12", Interpreter: "/opt/py/bin/python3.12",
		Static: true, Python: target.Python{Version: "3.12.99"}}
}
