package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/dap"
)

func TestDAPInterpreter(t *testing.T) {
	for args, want := range map[string]bool{
		"-i=dap":                    true,
		"--interpreter=dap":         true,
		"-i dap":                    true,
		"--interpreter dap -nx":     true,
		"-nx -interpreter=dap":      true,
		"-i=mi":                     false,
		"-p 1":                      false,
		"--args python -i=dap":      false,
		"-ex dap":                   false,
		"-- -i=dap":                 false,
		"":                          false,
		"-i":                        false,
		"--interpreter=dap-special": false,
	} {
		if got := dapInterpreter(strings.Fields(args)); got != want {
			t.Errorf("%q: %v, want %v", args, got, want)
		}
	}
}

func TestDAPTarget(t *testing.T) {
	for in, want := range map[string]string{
		`{"pid": 1234}`:                         "pid=1234 core= program= args=[] launch=false",
		`{"pid": "1234"}`:                       "pid=1234 core= program= args=[] launch=false",
		`{"coreFile": "/c", "program": "/p"}`:   "pid=0 core=/c program=/p args=[] launch=false",
		`{"program": "/p", "args": ["a", "b"]}`: "launch: pid=0 core= program=/p args=[a b] launch=true",
		`{"pid": -1}`:                           "error",
		`{"pid": "x"}`:                          "error",
		`{"pid": 1.5}`:                          "error",
		`{"pid": [1]}`:                          "error",
		`{}`:                                    "error",
		`{"program": "/p", "args": "a b"}`:      "launch: error",
		`{"pid": null, "coreFile": "/c", "program": "/p"}`: "pid=0 core=/c program=/p args=[] launch=false",
	} {
		cmd := "attach"
		if strings.HasPrefix(want, "launch: ") {
			cmd, want = "launch", strings.TrimPrefix(want, "launch: ")
		}
		var m dap.Message
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Fatal(err)
		}
		tg, err := dapTarget(cmd, m)
		got := "error"
		if err == nil {
			got = "pid=" + itoa(tg.PID) + " core=" + tg.Core + " program=" + tg.Program + " args=[" + strings.Join(tg.Args, " ") + "] launch=" + boolStr(tg.Launch)
		}
		if got != want {
			t.Errorf("%s %s: %s (%v), want %s", cmd, in, got, err, want)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// lldb-dap on PATH first, else the newest lldb-dap-NN, else the newest
// lldb-vscode-NN; --lldb-dap must name an executable.
func TestFindLLDBDAP(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	mk := func(dir, name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := []string{"PATH=" + d1 + ":" + d2}
	if _, err := findLLDBDAP(env, ""); err == nil {
		t.Fatal("found an adapter in empty directories")
	}
	mk(d1, "lldb-vscode-14", 0o755)
	want := mk(d2, "lldb-vscode-15", 0o755)
	if got, _ := findLLDBDAP(env, ""); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	mk(d1, "lldb-dap-9", 0o755)
	mk(d1, "lldb-dap-20", 0o644) // not executable
	mk(d1, "lldb-dap-x", 0o755)
	want = mk(d2, "lldb-dap-19", 0o755)
	if got, _ := findLLDBDAP(env, ""); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	want = mk(d2, "lldb-dap", 0o755)
	if got, _ := findLLDBDAP(env, ""); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, err := findLLDBDAP(env, filepath.Join(d1, "lldb-dap-9")); err != nil || got != filepath.Join(d1, "lldb-dap-9") {
		t.Errorf("--lldb-dap: %s %v", got, err)
	}
	if _, err := findLLDBDAP(env, filepath.Join(d1, "lldb-dap-20")); err == nil || hintFor(err) == "" {
		t.Errorf("--lldb-dap of a file that is not executable: %v", err)
	}
}

// `pyattach lldb-dap --help` is pyattach's page, not the adapter's
// help read as DAP.
func TestLLDBDAPHelp(t *testing.T) {
	for _, args := range [][]string{{"lldb-dap", "--help"}, {"lldb-dap", "-h"}} {
		var stdout, stderr strings.Builder
		if code := Main(args, nil, &stdout, &stderr, testEnv(t)); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "--lldb-dap PATH") {
			t.Errorf("%v:\n%s", args, stdout.String())
		}
	}
}
