package main

import (
	"reflect"
	"testing"

	"github.com/alecthomas/kong"
)

// kong's own mappers turn bytes that are not UTF-8 into U+FFFD; with
// rawArgOptions every kind of string argument keeps its bytes.
func TestSecurityRawArgsKeepBytes(t *testing.T) {
	parse := func(args ...string) *CLI {
		t.Helper()
		var cli CLI
		p, err := kong.New(&cli, append(rawArgOptions(), kong.Exit(func(int) { t.Fatal("exit") }))...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Parse(args); err != nil {
			t.Fatalf("parse %q: %v", args, err)
		}
		return &cli
	}
	cli := parse("--debug-dir", "/d\xff", "--debug-dir=/e\xfe", "--source", "n=/s\xff", "--script", "/o\xff.gdb",
		"--config", "/c\xff.toml", "gdb", "-batch", "--args", "/p\xff", "a\xffb", "")
	if want := []string{"/d\xff", "/e\xfe"}; !reflect.DeepEqual(cli.DebugDir, want) {
		t.Errorf("DebugDir = %q, want %q", cli.DebugDir, want)
	}
	if cli.Source[0] != "n=/s\xff" || cli.Script != "/o\xff.gdb" || cli.Config != "/c\xff.toml" {
		t.Errorf("Source %q Script %q Config %q", cli.Source, cli.Script, cli.Config)
	}
	if want := []string{"-batch", "--args", "/p\xff", "a\xffb", ""}; !reflect.DeepEqual(cli.GDB.Args, want) {
		t.Errorf("gdb args = %q, want %q", cli.GDB.Args, want)
	}
	if cli := parse("debuginfo", "/t\xff"); cli.Debuginfo.Target != "/t\xff" {
		t.Errorf("debuginfo target = %q", cli.Debuginfo.Target)
	}
	if cli := parse("init", "/i\xff"); cli.Init.Dir != "/i\xff" {
		t.Errorf("init dir = %q", cli.Init.Dir)
	}
	// "path" still makes a relative name absolute.
	if cli := parse("--script", "rel", "gdb"); cli.Script == "rel" || cli.Script[0] != '/' {
		t.Errorf("--script rel = %q, want an absolute path", cli.Script)
	}
}

func TestWriteJSONRefusesInvalidUTF8(t *testing.T) {
	type inner struct{ P string }
	for _, v := range []any{
		struct{ A []string }{[]string{"ok", "b\xff"}},
		map[string]string{"k\xff": "v"},
		map[string]*inner{"k": {P: "\xfe"}},
	} {
		if err := writeJSON(new(nopWriter), v); err == nil || hintFor(err) == "" {
			t.Errorf("writeJSON(%q) = %v, want an error with a hint", v, err)
		}
	}
	if err := writeJSON(new(nopWriter), struct {
		B []byte
		s string
	}{[]byte{0xff}, "\xff"}); err != nil {
		t.Errorf("bytes (base64) and unexported fields: %v", err)
	}
}

type nopWriter struct{}

func (*nopWriter) Write(b []byte) (int, error) { return len(b), nil }
