package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/lldbgen"
)

// InitCmd is `pyattach init`.
type InitCmd struct {
	Dir    string `arg:"" optional:"" type:"path" help:"The project directory (default: the current one)."`
	GDB    bool   `name:"gdb" help:"Write DIR/.gdbinit (the default when no kind is chosen)."`
	LLDB   bool   `name:"lldb" help:"Write DIR/.lldbinit."`
	VSCode bool   `name:"vscode" help:"Add attach configurations (cppdbg and CodeLLDB) to DIR/.vscode/launch.json."`
	Python string `help:"The project's interpreter (default: DIR/.venv/bin/python or DIR/venv/bin/python)." placeholder:"PATH"`
	Trust  bool   `help:"Add the one line that lets gdb load DIR/.gdbinit to ~/.config/gdb/gdbinit."`
}

// Help is shown by `pyattach init --help`.
func (c *InitCmd) Help() string {
	return `Writes debugger init files for a project, so that a plain "gdb -p PID" or
"lldb -p PID" started in it has py-bt, the debug files and source maps.
gdb loads a project's .gdbinit only when it is trusted; --trust adds
exactly one add-auto-load-safe-path line for it to ~/.config/gdb/gdbinit.

Examples:
  pyattach init --gdb --trust
  pyattach init --gdb --lldb --vscode ~/src/myproject
  pyattach init --python /opt/app/bin/python3 .`
}

// Run writes the files.
func (c *InitCmd) Run(g *Globals, app *App, cfg *Config) error {
	dir := c.Dir
	if dir == "" {
		dir = app.Cwd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if !c.GDB && !c.LLDB && !c.VSCode {
		c.GDB = true
	}
	python := c.Python
	if python == "" {
		for _, v := range []string{".venv", "venv"} {
			p := filepath.Join(dir, v, "bin", "python")
			if _, err := os.Stat(p); err == nil {
				python = p
				break
			}
		}
	}
	if python == "" {
		return withHint(fmt.Errorf("init %s: no .venv/bin/python or venv/bin/python there", dir),
			"name the interpreter: pyattach init --python PATH %s", shellQuote(dir))
	}
	// The files are read by a debugger that is given the program or PID
	// later: the plan is that of a launch of the project's interpreter.
	p, _, err := buildPlan(app.Ctx, dbgTarget{Program: python, Launch: true}, g, app, cfg)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	p.Target = python
	gdbinit := filepath.Join(dir, ".gdbinit")
	lldbinit := filepath.Join(dir, ".lldbinit")
	if c.GDB || c.VSCode {
		var b bytes.Buffer
		if err := gdbgen.Write(&b, p); err != nil {
			return withHint(fmt.Errorf("init: %w", err), "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
		}
		if err := writeFileAtomic(gdbinit, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(app.Stdout, "wrote %s\n", gdbinit)
	}
	if c.LLDB || c.VSCode {
		var b bytes.Buffer
		if err := lldbgen.Write(&b, p); err != nil {
			return withHint(fmt.Errorf("init: %w", err), "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
		}
		if err := writeFileAtomic(lldbinit, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(app.Stdout, "wrote %s\n", lldbinit)
	}
	if c.VSCode {
		lj := filepath.Join(dir, ".vscode", "launch.json")
		if err := mergeLaunchJSON(lj, python, gdbinit, lldbinit, app); err != nil {
			return fmt.Errorf("init: %w", err)
		}
		fmt.Fprintf(app.Stdout, "updated %s\n", lj)
	}
	if c.GDB || c.VSCode {
		line := "add-auto-load-safe-path " + gdbinit
		home := envValue(app.Env, "HOME")
		userInit := filepath.Join(home, ".config", "gdb", "gdbinit")
		if c.Trust {
			added, err := appendLineOnce(userInit, line)
			if err != nil {
				return fmt.Errorf("init --trust: %w", err)
			}
			if added {
				fmt.Fprintf(app.Stdout, "trusted %s in %s\n", gdbinit, userInit)
			} else {
				fmt.Fprintf(app.Stdout, "%s already trusts %s\n", userInit, gdbinit)
			}
		} else {
			fmt.Fprintf(app.Stdout, "gdb loads %s only when trusted; add this line to %s (or run again with --trust):\n  %s\n", gdbinit, userInit, line)
		}
	}
	return nil
}

// appendLineOnce adds line to file unless a line equal to it is there;
// the file is rewritten through a temporary file, its other lines kept.
func appendLineOnce(file, line string) (bool, error) {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == line {
			return false, nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, []byte("# added by pyattach init --trust\n"+line+"\n")...)
	mode := os.FileMode(0o644)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	return true, writeFileAtomic(file, data, mode)
}

// launchConfigNames are the configurations pyattach owns in launch.json.
var launchConfigNames = map[string]bool{"pyattach: attach with gdb": true, "pyattach: attach with lldb": true}

// mergeLaunchJSON adds pyattach's attach configurations to a VS Code
// launch.json, replacing earlier ones of the same names and keeping every
// other entry. VS Code allows comments and trailing commas there; they
// are read, but comments cannot be kept: a copy of the old file is left
// as launch.json.bak when it had any.
func mergeLaunchJSON(file, python, gdbinit, lldbinit string, app *App) error {
	doc := map[string]any{"version": "0.2.0", "configurations": []any{}}
	old, err := os.ReadFile(file)
	hadComments := false
	if err == nil {
		clean, comments := stripJSONC(old)
		hadComments = comments
		if err := json.Unmarshal(clean, &doc); err != nil {
			return withHint(fmt.Errorf("%s is not valid JSON: %w", file, err), "fix it, or move it away and run pyattach init --vscode again")
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
				map[string]any{"description": "py-bt, debug files and source maps found by pyattach", "text": "source " + gdbinit, "ignoreFailures": false},
			},
		},
		map[string]any{
			"name":         "pyattach: attach with lldb",
			"type":         "lldb",
			"request":      "attach",
			"program":      python,
			"pid":          "${command:pickMyProcess}",
			"initCommands": []any{"command source " + lldbinit},
		},
	)
	doc["configurations"] = configs
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	out = append(out, '\n')
	if hadComments {
		if err := writeFileAtomic(file+".bak", old, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(app.Stderr, "warning: %s had comments, which JSON cannot keep; the old file is %s.bak\n", file, file)
	}
	return writeFileAtomic(file, out, 0o644)
}

// stripJSONC removes // and /* */ comments and trailing commas outside
// strings, and reports whether there were comments.
func stripJSONC(b []byte) ([]byte, bool) {
	noComments, comments := removeJSONComments(b)
	return removeTrailingCommas(noComments), comments
}

// scanJSON calls f for every byte outside JSON strings; f returns how
// many bytes it consumed (0 to copy the byte as it is) and what to write.
func scanJSON(b []byte, f func(i int) (int, []byte)) []byte {
	var out []byte
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out = append(out, c)
			continue
		}
		if n, repl := f(i); n > 0 {
			out = append(out, repl...)
			i += n - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

func removeJSONComments(b []byte) ([]byte, bool) {
	comments := false
	out := scanJSON(b, func(i int) (int, []byte) {
		if b[i] != '/' || i+1 >= len(b) {
			return 0, nil
		}
		switch b[i+1] {
		case '/':
			comments = true
			j := i
			for j < len(b) && b[j] != '\n' {
				j++
			}
			return j - i, nil
		case '*':
			comments = true
			j := i + 2
			for j+1 < len(b) && !(b[j] == '*' && b[j+1] == '/') {
				j++
			}
			return min(j+2, len(b)) - i, []byte(" ")
		}
		return 0, nil
	})
	return out, comments
}

func removeTrailingCommas(b []byte) []byte {
	return scanJSON(b, func(i int) (int, []byte) {
		if b[i] != ',' {
			return 0, nil
		}
		j := i + 1
		for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
			j++
		}
		if j < len(b) && (b[j] == ']' || b[j] == '}') {
			return 1, nil
		}
		return 0, nil
	})
}
