package main

import (
	"reflect"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/target"
)

func TestParseGDBArgs(t *testing.T) {
	isPID := target.IsPID
	for _, tc := range []struct {
		args []string
		want dbgInferior
	}{
		{[]string{"-p", "1234"}, dbgInferior{PID: 1234}},
		{[]string{"--pid=1234", "-batch", "-ex", "py-bt"}, dbgInferior{PID: 1234}},
		{[]string{"-batch", "-ex", "py-bt", "--pid", "77"}, dbgInferior{PID: 77}},
		{[]string{".venv/bin/python", "1234"}, dbgInferior{PID: 1234, Program: ".venv/bin/python"}},
		{[]string{".venv/bin/python", "core.1234"}, dbgInferior{Core: "core.1234", Program: ".venv/bin/python"}},
		{[]string{"-c", "core.1234", "-batch", "-ex", "py-bt"}, dbgInferior{Core: "core.1234"}},
		{[]string{"--core=core.9", "-q"}, dbgInferior{Core: "core.9"}},
		{[]string{"-c", "4321"}, dbgInferior{PID: 4321}},
		{[]string{"-batch", "-ex", "run", "-ex", "py-bt", "--args", ".venv/bin/python", "app.py", "-p", "3"},
			dbgInferior{Program: ".venv/bin/python", Args: []string{"app.py", "-p", "3"}, Launch: true}},
		{[]string{"-x", "cmds.gdb", "./python"}, dbgInferior{Program: "./python", Launch: true}},
		{[]string{"-ex", "-p", "-p", "5"}, dbgInferior{PID: 5}},
		{[]string{"-q"}, dbgInferior{}},
	} {
		got, err := parseGDBArgs(tc.args, isPID)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseGDBArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
	for _, bad := range [][]string{{"-p"}, {"-p", "abc"}, {"--args"}, {"-p", "-1"}} {
		if _, err := parseGDBArgs(bad, isPID); err == nil {
			t.Errorf("parseGDBArgs(%q): no error", bad)
		}
	}
}

func TestParseLLDBArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want dbgInferior
	}{
		{[]string{"-p", "1234"}, dbgInferior{PID: 1234}},
		{[]string{"--attach-pid", "88", "-b", "-o", "bt"}, dbgInferior{PID: 88}},
		{[]string{"-c", "core.1", "/usr/bin/python3.11"}, dbgInferior{Core: "core.1", Program: "/usr/bin/python3.11"}},
		{[]string{"--core", "core.1"}, dbgInferior{Core: "core.1"}},
		{[]string{"-o", "run", "--", ".venv/bin/python", "app.py"}, dbgInferior{Program: ".venv/bin/python", Args: []string{"app.py"}, Launch: true}},
		{[]string{".venv/bin/python"}, dbgInferior{Program: ".venv/bin/python", Launch: true}},
		{[]string{"-f", "./python", "--", "x.py"}, dbgInferior{Program: "./python", Args: []string{"x.py"}, Launch: true}},
	} {
		got, err := parseLLDBArgs(tc.args)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseLLDBArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}
