package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pyattach/pyattach/gdbgen"
	"github.com/pyattach/pyattach/lldbgen"
)

// GDBCmd is `pyattach [FLAGS] gdb GDB_ARGS...`.
type GDBCmd struct {
	Args []string `arg:"" optional:"" help:"gdb's own command line, passed through unchanged."`
}

// Help is shown by `pyattach --help`.
func (c *GDBCmd) Help() string {
	return `Put pyattach in front of any gdb command line. pyattach reads the target
from it as gdb would (-p PID, --pid=PID, PROGRAM PID, PROGRAM CORE, -c CORE,
--core=CORE, --args PROGRAM ARGS...), finds the real interpreter, its debug
files and the matching CPython extension, and starts gdb with a script
that loads them first. pyattach's own flags go before "gdb".

Examples:
  pyattach gdb -p 1234
  pyattach gdb -p 1234 -batch -ex py-bt
  pyattach gdb -c core.1234 -batch -ex py-bt
  pyattach gdb -batch -ex run -ex py-bt --args .venv/bin/python app.py
  pyattach --print gdb -p 1234           # show the script and command line
  pyattach --fast gdb -p 1234            # load only what Python frames need`
}

// LLDBCmd is `pyattach [FLAGS] lldb LLDB_ARGS...`.
type LLDBCmd struct {
	Args []string `arg:"" optional:"" help:"lldb's own command line, passed through unchanged."`
}

// Help is shown by `pyattach --help`.
func (c *LLDBCmd) Help() string {
	return `Put pyattach in front of any lldb command line (-p PID, --attach-pid PID,
-c/--core CORE, -- PROGRAM ARGS..., a program path). On Debian, whose lldb
14 reports a wrong Python path, pyattach also sets PYTHONPATH so that
lldb's "script" command works.

Examples:
  pyattach lldb -p 1234
  pyattach lldb -p 1234 -b -o bt
  pyattach --print lldb -- .venv/bin/python app.py`
}

// scriptPathHint is the fix when the debugger cannot be told the script's
// file name exactly.
const scriptPathHint = "the script's file name cannot be passed to the debugger exactly; set XDG_CACHE_HOME to a plain absolute directory, or write the script elsewhere with --script FILE"

func isPIDArg(s string) bool { return allDigits(s) && s != "" }

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Run starts gdb with pyattach's script.
func (c *GDBCmd) Run(g *Globals, app *App, cfg *Config) error {
	t, err := parseGDBArgs(c.Args, isPIDArg)
	if err != nil {
		return withHint(err, "pyattach passes everything after \"gdb\" to gdb; check gdb's own options with: gdb --help")
	}
	p, _, err := buildPlan(context.Background(), t, g, app, cfg)
	if err != nil {
		return fmt.Errorf("gdb: %w", err)
	}
	sc, err := gdbgen.Generate(p)
	if err != nil {
		return withHint(fmt.Errorf("gdb: %w", err), "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
	}
	gdb, err := findDebugger(app.Env, "gdb")
	if err != nil {
		return err
	}
	early, late, err := scriptPaths(g.Script, "gdb", sc.Early, sc.Late)
	if err != nil {
		return err
	}
	// gdb opens -ix and -x files by name as given, after tilde expansion
	// (a "~" after a blank too): refuse a name it would read as another.
	for _, f := range []string{early, late} {
		if f == "" {
			continue
		}
		if _, err := gdbgen.SourceLine(f); err != nil {
			return withHint(fmt.Errorf("gdb: %w", err), scriptPathHint)
		}
	}
	argv := []string{gdb, "-ix", early}
	if late != "" {
		argv = append(argv, "-x", late)
	}
	argv = append(argv, c.Args...)
	if g.Print {
		fmt.Fprintf(app.Stdout, "# %s (gdb -ix)\n%s", early, sc.Early)
		if late != "" {
			fmt.Fprintf(app.Stdout, "# %s (gdb -x)\n%s", late, sc.Late)
		}
		fmt.Fprintf(app.Stdout, "# command line\n%s\n", shellJoin(argv))
		return nil
	}
	return execDebugger(gdb, argv, app.Env)
}

// Run starts lldb with pyattach's script.
func (c *LLDBCmd) Run(g *Globals, app *App, cfg *Config) error {
	t, err := parseLLDBArgs(c.Args)
	if err != nil {
		return withHint(err, "pyattach passes everything after \"lldb\" to lldb; check lldb's own options with: lldb --help")
	}
	if err := checkLLDBArgs(c.Args); err != nil {
		return withHint(err, "lldb pastes the program and its arguments into its own commands; start the program yourself and attach with: pyattach lldb -p PID")
	}
	p, _, err := buildPlan(context.Background(), t, g, app, cfg)
	if err != nil {
		return fmt.Errorf("lldb: %w", err)
	}
	lldb, err := findDebugger(app.Env, "lldb", "lldb-14", "lldb-15", "lldb-16", "lldb-17", "lldb-18", "lldb-19")
	if err != nil {
		return err
	}
	p.LLDBPythonPath = lldbPythonPath(lldb)
	sc, err := lldbgen.Generate(p)
	if err != nil {
		return withHint(fmt.Errorf("lldb: %w", err), "the debugger cannot read this path back exactly; move or rename the file or directory (see the reason above)")
	}
	before, after, err := scriptPaths(g.Script, "lldb", sc.Before, sc.After)
	if err != nil {
		return err
	}
	// lldb's driver pastes -S/-s file names into a command between single
	// quotes, unescaped; -O/-o carry a command quoted exactly instead.
	srcBefore, err := lldbgen.SourceCommand(before)
	if err != nil {
		return withHint(fmt.Errorf("lldb: %w", err), scriptPathHint)
	}
	argv := []string{lldb, "-O", srcBefore}
	if after != "" {
		srcAfter, err := lldbgen.SourceCommand(after)
		if err != nil {
			return withHint(fmt.Errorf("lldb: %w", err), scriptPathHint)
		}
		argv = append(argv, "-o", srcAfter)
	}
	argv = append(argv, c.Args...)
	env := lldbgen.Env(p, app.Env)
	if g.Print {
		fmt.Fprintf(app.Stdout, "# %s (lldb -O)\n%s", before, sc.Before)
		if after != "" {
			fmt.Fprintf(app.Stdout, "# %s (lldb -o)\n%s", after, sc.After)
		}
		fmt.Fprintf(app.Stdout, "# command line\n")
		if p.LLDBPythonPath != "" {
			fmt.Fprintf(app.Stdout, "PYTHONPATH=%s ", shellQuote(envValue(env, "PYTHONPATH")))
		}
		fmt.Fprintf(app.Stdout, "%s\n", shellJoin(argv))
		return nil
	}
	return execDebugger(lldb, argv, env)
}

// lldbPythonPath returns the directory holding lldb's Python package when
// `lldb -P` names one that does not (Debian's lldb 14), else "".
func lldbPythonPath(lldb string) string {
	out, err := exec.Command(lldb, "-P").Output()
	if err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "lldb", "__init__.py")); err == nil {
			return ""
		}
	}
	real, err := filepath.EvalSymlinks(lldb)
	if err != nil {
		return ""
	}
	// /usr/lib/llvm-14/bin/lldb -> /usr/lib/llvm-14/lib/python3*/dist-packages
	root := filepath.Dir(filepath.Dir(real))
	matches, _ := filepath.Glob(filepath.Join(root, "lib", "python3*", "*-packages", "lldb", "__init__.py"))
	if len(matches) == 0 {
		return ""
	}
	return filepath.Dir(filepath.Dir(matches[0]))
}

// scriptPaths writes the two parts of a script and returns their paths:
// to FILE and FILE.late (or FILE.after) with --script, else into the
// cache, named by the hash of their content.
func scriptPaths(script, kind, first, second string) (string, string, error) {
	var p1, p2 string
	suffix := map[string]string{"gdb": ".late", "lldb": ".after"}[kind]
	if script != "" {
		p1 = script
		if second != "" {
			p2 = script + suffix
		}
	} else {
		sum := sha256.Sum256([]byte(first + "\x00" + second))
		base := filepath.Join(cacheDir(), "scripts", kind+"-"+hex.EncodeToString(sum[:8]))
		p1 = base + ".early." + kind
		if kind == "lldb" {
			p1 = base + ".before.lldb"
		}
		if second != "" {
			p2 = base + suffix + "." + kind
		}
	}
	if err := writeFileAtomic(p1, []byte(first), 0o644); err != nil {
		return "", "", err
	}
	if p2 != "" {
		if err := writeFileAtomic(p2, []byte(second), 0o644); err != nil {
			return "", "", err
		}
	}
	return p1, p2, nil
}

// writeFileAtomic writes data to a temporary file beside name and renames
// it into place, so that name is never half-written.
func writeFileAtomic(name string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, perm)
	}
	if werr == nil {
		werr = os.Rename(tmp, name)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, werr)
	}
	return nil
}

// execDebugger replaces pyattach with the debugger, so that the terminal,
// signals and the exit code are the debugger's own.
func execDebugger(path string, argv, env []string) error {
	err := syscall.Exec(path, argv, env)
	return fmt.Errorf("start %s: %w", path, err)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
