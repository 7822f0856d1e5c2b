package main

import (
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/alecthomas/kong"
)

// parseWhole parses args with the whole model, as Main did before
// parseArgs.
func parseWhole(t *testing.T, args []string) (CLI, string, error) {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, testParseOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		return cli, "", err
	}
	return cli, kctx.Command(), nil
}

func testParseOptions() []kong.Option {
	return append(rawArgOptions(), kong.Name("pyattach"), kong.Vars{"version": versionLine()}, kong.Writers(io.Discard, io.Discard),
		kong.Exit(func(c int) { panic(exitError(c)) }), kong.Bind(&App{}))
}

// TestParseArgsOneCommand: a command line parsed with the model of its
// command alone gives the same values and command as with the whole
// model; one that the small model cannot parse gets the whole model's
// error.
func TestParseArgsOneCommand(t *testing.T) {
	for name := range fastCommands {
		if _, ok := oneCommand(name); !ok {
			t.Errorf("fastCommands names %q, which CLI has no command of", name)
		}
	}
	for _, args := range [][]string{
		{"resolve", "123"},
		{"resolve", "--json", "./app.py"},
		{"--offline", "--debug-dir", "/d1", "--debug-dir=/d2", "resolve", "123"},
		{"--config", "/x.toml", "--source", "echion=/src", "dump", "--native", "-v", "123"},
		{"--fast", "gdb", "-p", "12", "-batch", "-ex", "py-bt"},
		{"--print", "lldb", "--", "-p", "12"},
		{"debuginfo", "--json", "12"},
		{"__hook", "--help-me"},
		{"--config", "resolve", "dump", "12"}, // a flag's value named like a command
		{"--debug-dir", "gdb", "resolve", "12"},
		{"resolve"},                     // a missing argument
		{"resolve", "1", "2"},           // one too many
		{"dump", "--no-such-flag", "1"}, // an unknown flag
		{"resolve", "--jsno", "1"},      // a misspelt one
		{"--version", "resolve", "1"},
	} {
		t.Run(fmt.Sprint(args), func(t *testing.T) {
			want, wantCmd, wantErr := parseWholeOrExit(t, args)
			var got CLI
			gotCmd, gotErr := "", error(nil)
			func() {
				defer func() {
					if r := recover(); r != nil {
						gotErr = fmt.Errorf("exit %v", r)
					}
				}()
				kctx, err := parseArgs(&got, args, testParseOptions())
				if err != nil {
					gotErr = err
					return
				}
				gotCmd = kctx.Command()
			}()
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, the whole model's %v", gotErr, wantErr)
			}
			if gotCmd != wantCmd {
				t.Fatalf("command %q, the whole model's %q", gotCmd, wantCmd)
			}
			// The globals and the command's own values are the whole
			// model's (other commands' fields keep their zero values: no
			// default is applied to a command that does not run).
			fields := []string{"Globals", "Version"}
			if one, ok := oneCommand(firstWord(args)); ok && gotErr == nil {
				fields = nil
				for i := 0; i < one.Elem().NumField(); i++ {
					fields = append(fields, one.Elem().Type().Field(i).Name)
				}
			}
			for _, f := range fields {
				g, w := reflect.ValueOf(got).FieldByName(f).Interface(), reflect.ValueOf(want).FieldByName(f).Interface()
				if !reflect.DeepEqual(g, w) {
					t.Errorf("%s: %+v, the whole model's %+v", f, g, w)
				}
			}
		})
	}
}

// parseWholeOrExit is parseWhole with kong's exit (--version) as an
// error.
func parseWholeOrExit(t *testing.T, args []string) (cli CLI, cmd string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("exit %v", r)
		}
	}()
	return parseWhole(t, args)
}
