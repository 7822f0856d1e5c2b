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
		want dbgTarget
	}{
		{[]string{"-p", "1234"}, dbgTarget{PID: 1234}},
		{[]string{"--pid=1234", "-batch", "-ex", "py-bt"}, dbgTarget{PID: 1234}},
		{[]string{"-batch", "-ex", "py-bt", "--pid", "77"}, dbgTarget{PID: 77}},
		{[]string{".venv/bin/python", "1234"}, dbgTarget{PID: 1234, Program: ".venv/bin/python"}},
		{[]string{".venv/bin/python", "core.1234"}, dbgTarget{Core: "core.1234", Program: ".venv/bin/python"}},
		{[]string{"-c", "core.1234", "-batch", "-ex", "py-bt"}, dbgTarget{Core: "core.1234"}},
		{[]string{"--core=core.9", "-q"}, dbgTarget{Core: "core.9"}},
		{[]string{"-c", "4321"}, dbgTarget{PID: 4321}},
		{[]string{"-batch", "-ex", "run", "-ex", "py-bt", "--args", ".venv/bin/python", "app.py", "-p", "3"},
			dbgTarget{Program: ".venv/bin/python", Args: []string{"app.py", "-p", "3"}, Launch: true}},
		{[]string{"-x", "cmds.gdb", "./python"}, dbgTarget{Program: "./python", Launch: true}},
		{[]string{"-ex", "-p", "-p", "5"}, dbgTarget{PID: 5}},
		{[]string{"-q"}, dbgTarget{}},
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
		want dbgTarget
	}{
		{[]string{"-p", "1234"}, dbgTarget{PID: 1234}},
		{[]string{"--attach-pid", "88", "-b", "-o", "bt"}, dbgTarget{PID: 88}},
		{[]string{"-c", "core.1", "/usr/bin/python3.11"}, dbgTarget{Core: "core.1", Program: "/usr/bin/python3.11"}},
		{[]string{"--core", "core.1"}, dbgTarget{Core: "core.1"}},
		{[]string{"-o", "run", "--", ".venv/bin/python", "app.py"}, dbgTarget{Program: ".venv/bin/python", Args: []string{"app.py"}, Launch: true}},
		{[]string{".venv/bin/python"}, dbgTarget{Program: ".venv/bin/python", Launch: true}},
		{[]string{"-f", "./python", "--", "x.py"}, dbgTarget{Program: "./python", Args: []string{"x.py"}, Launch: true}},
	} {
		got, err := parseLLDBArgs(tc.args)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseLLDBArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}
