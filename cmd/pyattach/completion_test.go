package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

func completeModel(t *testing.T) *kong.Node {
	t.Helper()
	var cli CLI
	p, err := kong.New(&cli, append(rawArgOptions(), kong.Name("pyattach"), kong.Vars{"version": "test"})...)
	if err != nil {
		t.Fatal(err)
	}
	return p.Model.Node
}

func TestComplete(t *testing.T) {
	root := completeModel(t)
	pids := func() []candidate {
		return []candidate{{"4242", "python3 app.py"}, {"4343", "python3.12 -m worker"}}
	}
	tests := []struct {
		words []string
		want  []string // candidate values, in order
		files bool
	}{
		{[]string{"res"}, []string{"resolve"}, false},
		{[]string{"symbols", "r"}, []string{"remove"}, false},
		{[]string{"resolve", "--j"}, []string{"--json"}, false},
		{[]string{"dump", "--off"}, []string{"--offline"}, false}, // a global flag, after the command
		{[]string{"gdb", "-p", ""}, []string{"4242", "4343"}, false},
		{[]string{"--offline", "--debug-dir", "/d", "gdb", "-batch", "--pid", "43"}, []string{"4343"}, false},
		{[]string{"gdb", "--pid=42"}, []string{"--pid=4242"}, false},
		{[]string{"lldb", "--attach-pid", ""}, []string{"4242", "4343"}, false},
		{[]string{"lldb", "-c", ""}, nil, true},
		{[]string{"gdb", "-p", "4242", "--"}, nil, false}, // gdb's own flags: not ours
		{[]string{"resolve", ""}, []string{"4242", "4343"}, true},
		{[]string{"dump", "-v", "4"}, []string{"4242", "4343"}, true},
		{[]string{"resolve", "4242", ""}, nil, false},
		{[]string{"--debug-dir", ""}, nil, true},
		{[]string{"--config=/x"}, nil, true},
		{[]string{"completion", "--help=x"}, nil, false},
		{[]string{"--debug-dir=/x", "re"}, []string{"resolve"}, false},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}, false},
		{[]string{"symbols", "install", ""}, nil, true},
		{[]string{"help", "co"}, []string{"completion", "containers", "configuration"}, false},
	}
	for _, tt := range tests {
		got := complete(root, tt.words, pids)
		var vals []string
		for _, c := range got.cands {
			vals = append(vals, c.value)
		}
		if !slices.Equal(vals, tt.want) || got.files != tt.files {
			t.Errorf("complete(%q) = %q files=%v, want %q files=%v", tt.words, vals, got.files, tt.want, tt.files)
		}
	}
}

func TestCompleteHidesHidden(t *testing.T) {
	root := completeModel(t)
	got := complete(root, []string{""}, nil)
	var vals []string
	for _, c := range got.cands {
		vals = append(vals, c.value)
	}
	for _, want := range []string{"resolve", "gdb", "completion", "man"} {
		if !slices.Contains(vals, want) {
			t.Errorf("commands %q lack %q", vals, want)
		}
	}
	if slices.ContainsFunc(vals, func(v string) bool { return strings.HasPrefix(v, "_") }) {
		t.Errorf("commands %q list a hidden one", vals)
	}
	flags := complete(root, []string{"--"}, nil)
	for _, c := range flags.cands {
		if c.value == "--proc-root" {
			t.Errorf("flags list the hidden --proc-root")
		}
	}
}

func TestCompletionScriptsAreComplete(t *testing.T) {
	// Every shell the command accepts has a script.
	root := completeModel(t)
	for _, c := range complete(root, []string{"completion", ""}, nil).cands {
		if completionScripts[c.value] == "" {
			t.Errorf("no completion script for %s", c.value)
		}
	}
}
