package initfiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// debugger.
type LaunchCommands struct {
	GDBSetup string // cppdbg setupCommands text
	LLDBInit string // CodeLLDB initCommands entry
}

// VSCodeCommands writes the commands that load the project's init files,
// each quoted for the debugger that reads it, and refuses a path VS Code
// would rewrite: it replaces ${...} in launch.json strings with its
// variables (${command:...} runs a command), with no escape.
func VSCodeCommands(python, gdbinit, lldbinit string) (LaunchCommands, error) {
	// JSON strings are Unicode: a path with bytes that are not UTF-8
	// would be written as another path (U+FFFD).
	for _, p := range []string{python, gdbinit, lldbinit} {
		if !utf8.ValidString(p) {
			return LaunchCommands{}, fmt.Errorf("%q is not valid UTF-8, which launch.json cannot carry", p)
		}
	}
	for _, s := range []string{python, gdbinit, lldbinit} {
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
	return LaunchCommands{GDBSetup: g, LLDBInit: l}, nil
}

// launchConfigNames are the configurations pyattach owns in launch.json.
var launchConfigNames = map[string]bool{"pyattach: attach with gdb": true, "pyattach: attach with lldb": true}

// MergeLaunchJSON adds pyattach's attach configurations to a VS Code
// launch.json, replacing earlier ones of the same names and keeping every
// other entry. VS Code allows comments and trailing commas there; they
// are read, but comments cannot be kept: a copy of the old file is left
// as launch.json.bak when it had any, and warn says so.
func MergeLaunchJSON(file, python string, cmds LaunchCommands, warn io.Writer) error {
	doc := map[string]any{"version": "0.2.0", "configurations": []any{}}
	old, err := os.ReadFile(file)
	hadComments := false
	if err == nil {
		clean, comments := StripJSONC(old)
		hadComments = comments
		if err := json.Unmarshal(clean, &doc); err != nil {
			return &InvalidJSONError{File: file, Err: err}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var configs []any
	if c, ok := doc["configurations"].([]any); ok {
		for _, e := range c {
			if m, ok := e.(map[string]any); ok && launchConfigNames[fmt.Sprint(m["name"])] {
				continue
			}
			configs = append(configs, e)
		}
	} else if doc["configurations"] != nil {
		return fmt.Errorf("%s: \"configurations\" is not a list", file)
	}
	configs = append(configs,
		map[string]any{
			"name":      "pyattach: attach with gdb",
			"type":      "cppdbg",
			"request":   "attach",
			"program":   python,
			"processId": "${command:pickProcess}",
			"MIMode":    "gdb",
			"setupCommands": []any{
				map[string]any{"description": "py-bt, debug files and source maps found by pyattach", "text": cmds.GDBSetup, "ignoreFailures": false},
			},
		},
		map[string]any{
			"name":         "pyattach: attach with lldb",
			"type":         "lldb",
			"request":      "attach",
			"program":      python,
			"pid":          "${command:pickMyProcess}",
			"initCommands": []any{cmds.LLDBInit},
		},
	)
	doc["configurations"] = configs
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	out = append(out, '\n')
	if hadComments {
		if err := writeFile(file+".bak", old, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(warn, "warning: %s had comments, which JSON cannot keep; the old file is %s.bak\n", file, file)
	}
	return writeFile(file, out, 0o644)
}
