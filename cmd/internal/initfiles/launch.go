package initfiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/lldbgen"
)

// InvalidJSONError is a launch.json that cannot be read, even as JSONC.
type InvalidJSONError struct {
	File string
	Err  error
}

func (e *InvalidJSONError) Error() string {
	return fmt.Sprintf("%s is not valid JSON: %v", e.File, e.Err)
}

func (e *InvalidJSONError) Unwrap() error { return e.Err }

// LaunchCommands are the debugger commands launch.json hands to each
// debugger, and the pyattach that runs the debug adapters.
type LaunchCommands struct {
	GDBSetup string // cppdbg setupCommands text
	LLDBInit string // CodeLLDB initCommands entry
	Pyattach string // pyattach's binary, the debugAdapterExecutable
}

// VSCodeCommands writes the commands that load the project's init files,
// each quoted for the debugger that reads it, and refuses a path VS Code
// would rewrite: it replaces ${...} in launch.json strings with its
// variables (${command:...} runs a command), with no escape. pyattach is
// the binary the DAP configurations run.
func VSCodeCommands(python, gdbinit, lldbinit, pyattach string) (LaunchCommands, error) {
	paths := []string{python, gdbinit, lldbinit, pyattach}
	// JSON strings are Unicode: a path with bytes that are not UTF-8
	// would be written as another path (U+FFFD).
	for _, p := range paths {
		if !utf8.ValidString(p) {
			return LaunchCommands{}, fmt.Errorf("%q is not valid UTF-8, which launch.json cannot carry", p)
		}
	}
	for _, s := range paths {
		if strings.Contains(s, "${") {
			return LaunchCommands{}, fmt.Errorf("%q holds \"${\", which VS Code replaces with a variable in launch.json", s)
		}
	}
	g, err := gdbgen.SourceLine(gdbinit)
	if err != nil {
		return LaunchCommands{}, err
	}
	l, err := lldbgen.SourceCommand(lldbinit)
	if err != nil {
		return LaunchCommands{}, err
	}
	return LaunchCommands{GDBSetup: g, LLDBInit: l, Pyattach: pyattach}, nil
}

// The configurations pyattach owns in launch.json, by name.
const (
	ConfigGDB     = "pyattach: attach with gdb"
	ConfigLLDB    = "pyattach: attach with lldb"
	ConfigLLDBDAP = "pyattach: attach with lldb-dap"
	ConfigGDBDAP  = "pyattach: attach with gdb (DAP)"
)

var launchConfigNames = map[string]bool{ConfigGDB: true, ConfigLLDB: true, ConfigLLDBDAP: true, ConfigGDBDAP: true}

// MISetup are the MI commands the cppdbg configuration runs after the
// project's .gdbinit, in this order: gdb's frame filters in MI stack
// listings (Python frames and their locals), one MI frame per C frame
// ($pyattach_mi: MI front ends need a level for every frame), and
// pretty-printers for variable objects.
var MISetup = []string{"-enable-frame-filters", "set $pyattach_mi = 1", "-enable-pretty-printing"}

// LaunchConfigs are pyattach's attach configurations: cppdbg (gdb's MI),
// CodeLLDB, and the LLDB DAP extension running pyattach as the debug
// adapter, for lldb-dap and for gdb's DAP.
func LaunchConfigs(python string, cmds LaunchCommands) []any {
	setup := []any{
		map[string]any{"description": "py-bt, debug files and source maps found by pyattach", "text": cmds.GDBSetup, "ignoreFailures": false},
		map[string]any{"description": "Python frames in the call stack", "text": MISetup[0], "ignoreFailures": false},
		map[string]any{"description": "one call stack entry per eval loop call (the innermost Python frame)", "text": MISetup[1], "ignoreFailures": false},
		map[string]any{"description": "Python locals as their reprs", "text": MISetup[2], "ignoreFailures": false},
	}
	return []any{
		map[string]any{
			"name":          ConfigGDB,
			"type":          "cppdbg",
			"request":       "attach",
			"program":       python,
			"processId":     "${command:pickProcess}",
			"MIMode":        "gdb",
			"setupCommands": setup,
		},
		map[string]any{
			"name":         ConfigLLDB,
			"type":         "lldb",
			"request":      "attach",
			"program":      python,
			"pid":          "${command:pickMyProcess}",
			"initCommands": []any{cmds.LLDBInit},
		},
		map[string]any{
			"name":                   ConfigLLDBDAP,
			"type":                   "lldb-dap",
			"request":                "attach",
			"program":                python,
			"pid":                    "${command:pickProcess}",
			"debugAdapterExecutable": cmds.Pyattach,
			"debugAdapterArgs":       []any{"lldb-dap"},
		},
		map[string]any{
			"name":                   ConfigGDBDAP,
			"type":                   "lldb-dap",
			"request":                "attach",
			"program":                python,
			"pid":                    "${command:pickProcess}",
			"debugAdapterExecutable": cmds.Pyattach,
			"debugAdapterArgs":       []any{"gdb", "-i=dap"},
		},
	}
}

// MergeLaunchJSON adds pyattach's attach configurations (LaunchConfigs)
// to a VS Code launch.json, replacing earlier ones of the same names and
// keeping every other entry. VS Code allows comments and trailing commas
// there: the file is edited in place (MergeJSONC), so they stay as they
// were.
func MergeLaunchJSON(file, python string, cmds LaunchCommands) error {
	configs := LaunchConfigs(python, cmds)
	old, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		out, err := json.MarshalIndent(map[string]any{"version": "0.2.0", "configurations": configs}, "", "  ")
		if err != nil {
			return err
		}
		return writeFile(file, append(out, '\n'), 0o644)
	}
	if err != nil {
		return err
	}
	clean, _ := StripJSONC(old)
	var doc map[string]any
	if err := json.Unmarshal(clean, &doc); err != nil {
		return &InvalidJSONError{File: file, Err: err}
	}
	if c, ok := doc["configurations"]; ok {
		if _, ok := c.([]any); !ok {
			return fmt.Errorf("%s: \"configurations\" is not a list", file)
		}
	}
	owned := func(raw []byte) bool {
		clean, _ := StripJSONC(raw)
		var m map[string]any
		return json.Unmarshal(clean, &m) == nil && launchConfigNames[fmt.Sprint(m["name"])]
	}
	out, err := MergeJSONC(old, "configurations", owned, configs)
	if err != nil {
		return &InvalidJSONError{File: file, Err: err}
	}
	return writeFile(file, out, 0o644)
}
