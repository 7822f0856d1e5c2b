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
	"unicode/utf8"

	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/lldbgen"
	"github.com/pyattach/pyattach/venv/environ"
)

// InitCmd is `pyattach init`.
type InitCmd struct {
	Dir    string `arg:"" optional:"" type:"path" help:"The project directory (default: the current one)."`
	GDB    bool   `name:"gdb" help:"Write DIR/.gdbinit (the default when no kind is chosen)."`
	LLDB   bool   `name:"lldb" help:"Write DIR/.lldbinit."`
	VSCode bool   `name:"vscode" help:"Add attach configurations (cppdbg and CodeLLDB) to DIR/.vscode/launch.json."`
	Python string `help:"The project's interpreter (default: DIR/.venv/bin/python or DIR/venv/bin/python)." placeholder:"PATH"`
	Trust  bool   `help:"Add the one line that lets gdb load DIR/.gdbinit to your gdb init file (~/.config/gdb/gdbinit, or ~/.gdbinit when gdb reads that); with --lldb, the line that makes lldb read DIR/.lldbinit when it starts in DIR to ~/.lldbinit."`
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
	if err := checkProjectDir(dir); err != nil {
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
			"name the interpreter: pyattach init --python PATH %s", shquote.Quote(dir))
	}
	// The files are read by a debugger that is given a process, core or
	// program later, of whatever interpreter: they hold only what does not
	// depend on one (the plan of a debugger started without a target).
	// The .gdbinit then runs pyattach for each target gdb loads; lldb's
	// walker reads the version from memory.
	p, _, err := buildPlan(app.Ctx, dbgTarget{}, g, app, cfg)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	p.Target = "any process, core or program the debugger loads in " + dir
	gdbinit := filepath.Join(dir, ".gdbinit")
	lldbinit := filepath.Join(dir, ".lldbinit")

	// Everything is worked out before anything is written: a name that
	// cannot be written exactly refuses the whole init.
	const renameHint = "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)"
	var gdbText, lldbText []byte
	if c.GDB || c.VSCode {
		exe, err := initPyattachExe()
		if err != nil {
			return err
		}
		gp := p
		gp.Walker, gp.Findings = nil, nil // set up per target by the hook
		var b bytes.Buffer
		if err := gdbgen.Write(&b, gp); err != nil {
			return withHint(fmt.Errorf("init: %w", err), renameHint)
		}
		hook, err := gdbgen.ProjectInit(exe, shquote.Quote(dir))
		if err != nil {
			return withHint(fmt.Errorf("init: %w", err), "install pyattach under a plain absolute path (go install, or the release binary in /usr/local/bin)")
		}
		b.WriteString("\n" + hook)
		gdbText = b.Bytes()
	}
	if c.LLDB || c.VSCode {
		var b bytes.Buffer
		if err := lldbgen.Write(&b, p); err != nil {
			return withHint(fmt.Errorf("init: %w", err), renameHint)
		}
		lldbText = b.Bytes()
	}
	var launch launchCommands
	if c.VSCode {
		if launch, err = vscodeCommands(python, gdbinit, lldbinit); err != nil {
			return withHint(fmt.Errorf("init --vscode: %w", err),
				"VS Code's debuggers cannot be given this path exactly; move or rename the directory, or run init without --vscode")
		}
	}
	lt, err := c.lldbTrust(dir, lldbinit, app)
	if err != nil {
		return err
	}
	var trustLine, userInit, userTarget string
	var trustErr error
	const userInitHint = "gdb runs that file as you: fix its owner or mode, or add this line to your gdb init file yourself: %s"
	if c.GDB || c.VSCode {
		trustLine, trustErr = safePathLine(dir)
		if c.Trust {
			if trustErr != nil {
				return withHint(fmt.Errorf("init --trust: %w", trustErr),
					"gdb cannot be told to trust exactly this file; move or rename the directory (a name without ':' or line breaks)")
			}
			if err := saferead.CheckTrusted(dir, os.Geteuid()); err != nil {
				return withHint(fmt.Errorf("init --trust: %w", err),
					"gdb would run whatever another user writes to %s; make the directory yours and not writable by others (chmod go-w), or do not trust it", gdbinit)
			}
		}
		if userInit, err = userGDBInit(app.Env, app.Cwd); err != nil && c.Trust {
			return withHint(fmt.Errorf("init --trust: %w", err), "set HOME to your home directory")
		}
		if c.Trust {
			if userTarget, err = userInitTarget(userInit, os.Geteuid()); err != nil {
				return withHint(fmt.Errorf("init --trust: %w", err), userInitHint, trustLine)
			}
		}
	}

	if gdbText != nil {
		if err := writeFileAtomic(gdbinit, gdbText, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(app.Stdout, "wrote %s\n", gdbinit)
	}
	if lldbText != nil {
		if err := writeFileAtomic(lldbinit, lldbText, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(app.Stdout, "wrote %s\n", lldbinit)
	}
	if c.VSCode {
		lj := filepath.Join(dir, ".vscode", "launch.json")
		if err := os.Mkdir(filepath.Dir(lj), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("init: %w", err)
		}
		if err := mergeLaunchJSON(lj, python, launch, app); err != nil {
			return fmt.Errorf("init: %w", err)
		}
		fmt.Fprintf(app.Stdout, "updated %s\n", lj)
	}
	if c.GDB || c.VSCode {
		switch {
		case c.Trust:
			added, err := addTrustLine(userInit, userTarget, trustLine, "add-auto-load-safe-path "+gdbinit, "", os.Geteuid(), app)
			if err != nil {
				return withHint(fmt.Errorf("init --trust: %w", err), userInitHint, trustLine)
			}
			if added {
				fmt.Fprintf(app.Stdout, "trusted %s in %s\n", gdbinit, userInit)
			} else {
				fmt.Fprintf(app.Stdout, "%s already trusts %s\n", userInit, gdbinit)
			}
		case trustErr != nil:
			fmt.Fprintf(app.Stderr, "warning: gdb loads %s only when trusted, and it cannot be trusted exactly (%v); move or rename the directory, or load it explicitly: gdb -x %s\n",
				gdbinit, trustErr, shquote.Quote(gdbinit))
		case userInit != "" && hasLine(userInit, trustLine):
			// Trusted already: nothing is left to do.
		default:
			if userInit == "" {
				userInit = "~/.config/gdb/gdbinit"
			}
			fmt.Fprintf(app.Stdout, "gdb loads %s only when trusted; add this line to %s (or run again with --trust):\n  %s\n", gdbinit, userInit, trustLine)
		}
	}
	if c.LLDB {
		return lt.finish(c.Trust, dir, lldbinit, app)
	}
	return nil
}

// lldbTrustPlan is what init works out for lldb's reading of the
// project .lldbinit before anything is written.
type lldbTrustPlan struct {
	line   string // lldbgen.ProjectTrust's line, "" when err is set
	err    error  // why the line cannot be written
	user   string // the user init file lldb reads
	target string // the file to rewrite for it (--trust)
}

// lldbTrust works out the ~/.lldbinit line for c.LLDB, and refuses what
// --trust cannot do, as for gdb. Nothing is written.
func (c *InitCmd) lldbTrust(dir, lldbinit string, app *App) (lldbTrustPlan, error) {
	var lt lldbTrustPlan
	if !c.LLDB {
		return lt, nil
	}
	user, uerr := userLLDBInit(app.Env, app.Cwd)
	if uerr == nil && (sameFile(user, lldbinit) || sameFile(filepath.Join(filepath.Dir(user), ".lldbinit"), lldbinit)) {
		return lt, withHint(fmt.Errorf("init --lldb: %s is lldb's user init file, not a project's", lldbinit),
			"run init in the project's directory, not your home directory")
	}
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		lt.line, err = lldbgen.ProjectTrust(real)
	}
	lt.err = err
	lt.user = user
	if !c.Trust {
		return lt, nil
	}
	if lt.err != nil {
		return lt, withHint(fmt.Errorf("init --trust: %w", lt.err),
			"lldb cannot be told to read exactly this file; move or rename the directory (see the reason above)")
	}
	if err := saferead.CheckTrusted(dir, os.Geteuid()); err != nil {
		return lt, withHint(fmt.Errorf("init --trust: %w", err),
			"lldb would run whatever another user writes to %s; make the directory yours and not writable by others (chmod go-w), or do not trust it", lldbinit)
	}
	if uerr != nil {
		return lt, withHint(fmt.Errorf("init --trust: %w", uerr), "set HOME to your home directory")
	}
	if lt.target, err = userInitTarget(user, os.Geteuid()); err != nil {
		return lt, withHint(fmt.Errorf("init --trust: %w", err),
			"lldb runs that file as you: fix its owner or mode, or add this line to it yourself: %s", lt.line)
	}
	return lt, nil
}

// finish adds the line (trust) or says what is still needed; nothing
// once the user init file has the line.
func (lt lldbTrustPlan) finish(trust bool, dir, lldbinit string, app *App) error {
	switch {
	case trust:
		added, err := addTrustLine(lt.user, lt.target, lt.line, "", ": lldb reads "+lldbinit+" when it starts in "+dir, os.Geteuid(), app)
		if err != nil {
			return withHint(fmt.Errorf("init --trust: %w", err),
				"lldb runs that file as you: fix its owner or mode, or add this line to it yourself: %s", lt.line)
		}
		if added {
			fmt.Fprintf(app.Stdout, "trusted %s in %s (lldb reads it when started in %s)\n", lldbinit, lt.user, dir)
		} else {
			fmt.Fprintf(app.Stdout, "%s already trusts %s\n", lt.user, lldbinit)
		}
	case lt.err != nil:
		fmt.Fprintf(app.Stderr, "warning: lldb reads %s only when told to, and it cannot be told exactly (%v); move or rename the directory, or load it explicitly: lldb -S %s\n",
			lldbinit, lt.err, shquote.Quote(lldbinit))
	case lt.user != "" && hasLine(lt.user, lt.line):
		// Trusted already.
	default:
		fmt.Fprintf(app.Stdout, "lldb does not read %s by itself (it warns about it at every start); to have lldb read it when started there, run: pyattach init --lldb --trust %s\n",
			lldbinit, shquote.Quote(dir))
	}
	return nil
}

// userLLDBInit is the user init file lldb 14 reads: ~/.lldbinit-lldb
// when it exists (lldb then ignores ~/.lldbinit), else ~/.lldbinit.
func userLLDBInit(env environ.Env, cwd string) (string, error) {
	home := env.Get("HOME")
	if home == "" {
		return "", errors.New("HOME is not set: no user lldb init file")
	}
	if !filepath.IsAbs(home) {
		home = filepath.Join(cwd, home)
	}
	own := filepath.Join(home, ".lldbinit-lldb")
	if _, err := os.Stat(own); err == nil {
		return own, nil
	}
	return filepath.Join(home, ".lldbinit"), nil
}

// sameFile reports whether a and b name one existing file, or are the
// same path.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// hasLine reports whether the user init file has line as a command.
func hasLine(file, line string) bool {
	data, err := os.ReadFile(file)
	return err == nil && hasCommandLine(data, line)
}

// initPyattachExe is the pyattach binary a project .gdbinit runs for
// each target: this one, by its resolved path. gdb runs it as the user
// who trusted the file, so it must be a file that only its owner (the
// user or root) can change.
func initPyattachExe() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", fmt.Errorf("init: cannot find pyattach's own binary: %w", err)
	}
	if err := saferead.CheckTrusted(exe, os.Geteuid()); err != nil {
		return "", withHint(fmt.Errorf("init: the project .gdbinit would run %s: %w", exe, err),
			"install pyattach where only you or root can change it (chmod go-w on the file and its directories)")
	}
	return exe, nil
}

// checkProjectDir refuses a project directory that is not there: a typo
// should not create a directory.
func checkProjectDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return withHint(fmt.Errorf("init %s: no such directory", dir),
			"check the name, or create the directory first: mkdir -p %s", shquote.Quote(dir))
	case err != nil:
		return fmt.Errorf("init: %w", err)
	case !st.IsDir():
		return withHint(fmt.Errorf("init %s: not a directory", dir), "name the project's directory")
	}
	return nil
}

// safePathLine is the add-auto-load-safe-path line for dir's .gdbinit.
// gdb adds the realpath of each entry as a further pattern, unescaped,
// so the entry names the file by its resolved path: its realpath is then
// itself (or fails, for an escaped entry) and adds nothing.
func safePathLine(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return gdbgen.SafePathLine(filepath.Join(real, ".gdbinit"))
}

// userGDBInit is the one user init file gdb 13 reads:
// $XDG_CONFIG_HOME/gdb/gdbinit (default ~/.config/gdb/gdbinit) when it
// exists, else ~/.gdbinit when that exists. A new file goes in the first
// place; creating it while ~/.gdbinit exists would make gdb stop reading
// ~/.gdbinit.
func userGDBInit(env environ.Env, cwd string) (string, error) {
	home := env.Get("HOME")
	cfgDir := env.Get("XDG_CONFIG_HOME")
	if cfgDir == "" {
		if home == "" {
			return "", errors.New("HOME is not set: no user gdb init file")
		}
		cfgDir = filepath.Join(home, ".config")
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(cwd, p)
	}
	xdg := filepath.Join(abs(cfgDir), "gdb", "gdbinit")
	if _, err := os.Stat(xdg); err == nil {
		return xdg, nil
	}
	if home != "" {
		h := filepath.Join(abs(home), ".gdbinit")
		if _, err := os.Stat(h); err == nil {
			return h, nil
		}
	}
	return xdg, nil
}

// userInitTarget returns the file to rewrite for the user's gdb init
// file: gdb runs it as the user, so it may be reached only through links
// and directories that saferead.CheckTrusted allows (none of another
// user's). A link of the user's own is kept: its target is returned.
// Nothing is written.
func userInitTarget(file string, uid int) (string, error) {
	if _, err := os.Lstat(file); err == nil {
		if err := saferead.CheckTrusted(file, uid); err != nil {
			return "", err
		}
		return filepath.EvalSymlinks(file)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	top := filepath.Dir(file)
	for {
		if _, err := os.Lstat(top); err == nil || filepath.Dir(top) == top {
			break
		}
		top = filepath.Dir(top)
	}
	if err := saferead.CheckTrusted(top, uid); err != nil {
		return "", err
	}
	return file, nil
}

// addTrustLine adds line to target (from userInitTarget; shown as file)
// unless that exact line is there as a command of its own, keeping the
// file's mode. oldLine, when not "", is what older versions wrote (the
// raw path, read by gdb as a pattern): a warning asks to remove it. note
// ends the comment line written before line.
func addTrustLine(file, target, line, oldLine, note string, uid int, app *App) (bool, error) {
	var data []byte
	mode := os.FileMode(0o644)
	st, err := os.Stat(target)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return false, fmt.Errorf("%s is not a regular file", target)
	case err == nil:
		mode = st.Mode().Perm()
		if data, err = os.ReadFile(target); err != nil {
			return false, err
		}
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		if err := saferead.CheckTrusted(dir, uid); err != nil {
			return false, err
		}
	default:
		return false, err
	}
	if hasCommandLine(data, line) {
		return false, nil
	}
	if oldLine != "" && oldLine != line && hasCommandLine(data, oldLine) {
		fmt.Fprintf(app.Stderr, "warning: %s also has the line %q, which gdb reads as a pattern that may trust other files; remove it\n", file, oldLine)
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, []byte("# added by pyattach init --trust"+note+"\n"+line+"\n")...)
	return true, writeFileAtomic(target, data, mode)
}

// hasCommandLine reports whether data has line exactly as one line that
// is not the continuation of a line ending in a backslash.
func hasCommandLine(data []byte, line string) bool {
	cont := false
	for _, l := range strings.Split(string(data), "\n") {
		if !cont && l == line {
			return true
		}
		cont = strings.HasSuffix(l, "\\")
	}
	return false
}

// launchCommands are the debugger commands launch.json hands to each
// debugger.
type launchCommands struct {
	gdbSetup string // cppdbg setupCommands text
	lldbInit string // CodeLLDB initCommands entry
}

// vscodeCommands writes the commands that load the project's init files,
// each quoted for the debugger that reads it, and refuses a path VS Code
// would rewrite: it replaces ${...} in launch.json strings with its
// variables (${command:...} runs a command), with no escape.
func vscodeCommands(python, gdbinit, lldbinit string) (launchCommands, error) {
	// JSON strings are Unicode: a path with bytes that are not UTF-8
	// would be written as another path (U+FFFD).
	for _, p := range []string{python, gdbinit, lldbinit} {
		if !utf8.ValidString(p) {
			return launchCommands{}, fmt.Errorf("%q is not valid UTF-8, which launch.json cannot carry", p)
		}
	}
	for _, s := range []string{python, gdbinit, lldbinit} {
		if strings.Contains(s, "${") {
			return launchCommands{}, fmt.Errorf("%q holds \"${\", which VS Code replaces with a variable in launch.json", s)
		}
	}
	g, err := gdbgen.SourceLine(gdbinit)
	if err != nil {
		return launchCommands{}, err
	}
	l, err := lldbgen.SourceCommand(lldbinit)
	if err != nil {
		return launchCommands{}, err
	}
	return launchCommands{gdbSetup: g, lldbInit: l}, nil
}

// launchConfigNames are the configurations pyattach owns in launch.json.
var launchConfigNames = map[string]bool{"pyattach: attach with gdb": true, "pyattach: attach with lldb": true}

// mergeLaunchJSON adds pyattach's attach configurations to a VS Code
// launch.json, replacing earlier ones of the same names and keeping every
// other entry. VS Code allows comments and trailing commas there; they
// are read, but comments cannot be kept: a copy of the old file is left
// as launch.json.bak when it had any.
func mergeLaunchJSON(file, python string, cmds launchCommands, app *App) error {
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
				map[string]any{"description": "py-bt, debug files and source maps found by pyattach", "text": cmds.gdbSetup, "ignoreFailures": false},
			},
		},
		map[string]any{
			"name":         "pyattach: attach with lldb",
			"type":         "lldb",
			"request":      "attach",
			"program":      python,
			"pid":          "${command:pickMyProcess}",
			"initCommands": []any{cmds.lldbInit},
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
