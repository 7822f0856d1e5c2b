package lldbgen

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/plan/pyquote"
)

// Script holds lldb command files for one Plan.
type Script struct {
	// Before is sourced with -S before the target is created: settings
	// that new targets and modules read, and the Python extension.
	Before string
	// After is sourced with -s once the target exists (after --core or
	// --pid): commands that need the target's modules. It is "" when
	// there are none.
	After string
}

// ErrUnsafePath is wrapped by every error about a path that an lldb
// command cannot carry exactly.
var ErrUnsafePath = errors.New("path cannot be written into an lldb command file")

// PathError says which path of a Plan was refused, and why.
type PathError struct {
	// What names the path's role, such as "debug directory".
	What string
	// Path is the path as the Plan holds it.
	Path string
	// Reason says what lldb would do with it.
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.What, e.Path, e.Reason)
}

// Unwrap returns ErrUnsafePath.
func (e *PathError) Unwrap() error { return ErrUnsafePath }

// Generate returns the lldb commands for p. It refuses (with a
// *PathError) any path that lldb would not read back byte for byte,
// rather than writing an approximation.
func Generate(p plan.Plan) (Script, error) {
	c, err := build(p)
	if err != nil {
		return Script{}, err
	}
	var s Script
	var b strings.Builder
	header(&b, p, "before the target is created (lldb -O 'command source FILE')")
	b.WriteString(c.before)
	s.Before = b.String()
	if c.after != "" {
		b.Reset()
		header(&b, p, "after the target is created (lldb -o 'command source FILE')")
		b.WriteString(c.after)
		s.After = b.String()
	}
	return s, nil
}

// Write writes one lldb init file for p, as a project's .lldbinit.
//
// lldb reads ./.lldbinit only when ~/.lldbinit tells it to (ProjectTrust's
// line, or the global `settings set target.load-cwd-lldbinit true`;
// otherwise it warns and skips it), and reads it before any target exists. The settings and the
// extension import work there; `target symbols add` needs a target, so
// those commands are written as comments to run by hand once the target
// exists (`pyattach lldb` runs them itself). Nothing is written when p
// holds a refused path.
func Write(w io.Writer, p plan.Plan) error {
	c, err := build(p)
	if err != nil {
		return err
	}
	var b strings.Builder
	header(&b, p, "lldb init file: lldb reads it only when ~/.lldbinit says so: pyattach init --lldb --trust adds that line")
	b.WriteString(c.before)
	if len(c.afterCmds) > 0 {
		b.WriteString("# These need a target, which an init file runs before; after\n")
		b.WriteString("# `target create` or `process attach`, run:\n")
		for _, cmd := range c.afterCmds {
			b.WriteString("#   " + cmd + "\n")
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// Env returns environ with the PYTHONPATH lldb needs: p.LLDBPythonPath
// first, then any PYTHONPATH environ already had. Without
// LLDBPythonPath it returns a copy of environ. Later duplicates of
// PYTHONPATH are dropped (the last one is the one a process sees). Call
// Generate first: it refuses an LLDBPythonPath that PYTHONPATH cannot
// hold.
func Env(p plan.Plan, environ []string) []string {
	out := make([]string, 0, len(environ)+1)
	if p.LLDBPythonPath == "" {
		return append(out, environ...)
	}
	old := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PYTHONPATH="); ok {
			old = v
			continue
		}
		out = append(out, kv)
	}
	v := p.LLDBPythonPath
	if old != "" {
		// An empty PYTHONPATH stays out: an empty entry would put the
		// working directory on lldb's Python path.
		v += ":" + old
	}
	return append(out, "PYTHONPATH="+v)
}

// commands is a Plan checked and rendered.
type commands struct {
	before    string
	after     string
	afterCmds []string
}

func build(p plan.Plan) (commands, error) {
	var c commands
	var b strings.Builder

	if p.LLDBPythonPath != "" {
		if _, err := cleanPath("lldb Python path", p.LLDBPythonPath); err != nil {
			return c, err
		}
		if strings.Contains(p.LLDBPythonPath, ":") {
			return c, &PathError{"lldb Python path", p.LLDBPythonPath, "PYTHONPATH splits at ':'"}
		}
	}

	if len(p.Foreign) > 0 {
		// Before any target exists: lldb runs the Python scripts a
		// symbol file (a dSYM bundle) names when this is true or warns.
		for _, why := range p.Foreign {
			comment(&b, why)
		}
		comment(&b, "the target's files are not yours: lldb loads no script from its symbol files")
		b.WriteString("settings set -- target.load-script-from-symbol-file false\n")
	}
	if p.Fast {
		b.WriteString("# Fast: symbol tables are read on first use (lldb has no per-library switch).\n")
		b.WriteString("settings set -- target.preload-symbols false\n")
	}
	if err := appendPaths(&b, "target.debug-file-search-paths", "debug directory", p.DebugDirs); err != nil {
		return c, err
	}
	if p.Sysroot != "" && p.LLDBRoot == "" {
		comment(&b, "sysroot "+p.Sysroot+": lldb 14 has no sysroot for a local process; its libraries are read at the paths the process maps")
	}
	if p.LLDBCoreSysroot != "" {
		q, err := cleanPath("core sysroot", p.LLDBCoreSysroot)
		if err != nil {
			return c, err
		}
		if !utf8.ValidString(q) {
			return c, &PathError{"core sysroot", p.LLDBCoreSysroot, "is not valid UTF-8; lldb hands it to Python as text"}
		}
		comment(&b, "The core's libraries, read under this directory by the paths the loader recorded: lldb would take this machine's files of those names.")
		comment(&b, "(platform select --sysroot DIR remote-linux, without its report)")
		b.WriteString("script lldb.debugger.SetCurrentPlatform(\"remote-linux\"); lldb.debugger.SetCurrentPlatformSDKRoot(" + pyquote.String(q) + ")\n")
	}
	if err := appendPaths(&b, "target.exec-search-paths", "library directory", p.SolibSearchPath); err != nil {
		return c, err
	}
	if p.LLDBRoot != "" {
		if err := rootTarget(&b, p); err != nil {
			return c, err
		}
	}
	comment(&b, "debuginfod: lldb 14 has no debuginfod client; pyattach fetched what it could into the directories above")
	if p.LLDBExtension != "" {
		q, err := quotedPath("lldb extension", p.LLDBExtension)
		if err != nil {
			return c, err
		}
		if err := checkModuleName(p.LLDBExtension); err != nil {
			return c, err
		}
		b.WriteString("command script import -- " + q + "\n")
	}
	if w := p.Walker; w != nil {
		mod := path.Join(w.Dir, "pyattach_lldb.py")
		q, err := quotedPath("walker", mod)
		if err != nil {
			return c, err
		}
		if err := checkModuleName(mod); err != nil {
			return c, err
		}
		if w.Root != "" && !utf8.ValidString(w.Root) {
			return c, &PathError{"walker root", w.Root, "is not valid UTF-8; lldb hands it to Python as text"}
		}
		comment(&b, "pyattach's Python stack walker: py-bt and py-bt all, from memory alone (it answers py-bt, also over cpython_lldb's)")
		b.WriteString("command script import -- " + q + "\n")
		b.WriteString("script pyattach_lldb.setup(version=" + pyquote.String(w.Version) + ", flags=" + pyquote.String(w.ABIFlags) + ", root=" + pyquote.String(w.Root) + w.Creds.PyArg() + ")\n")
		comment(&b, "thread names as the target set them, escaped in thread-format and thread-stop-format (thread list, stop reports)")
		b.WriteString("script pyattach_lldb.escape_thread_names(lldb.debugger)\n")
		comment(&b, "Python frames in bt: each _PyEval_EvalFrameDefault frame shows the Python frames it runs (pyattach-bt-filter off: lldb's own frame-format)")
		b.WriteString("script pyattach_lldb.bt_frames(lldb.debugger)\n")
	}
	if len(p.SourceMap) > 0 {
		args := make([]string, 0, 2*len(p.SourceMap))
		for _, r := range p.SourceMap {
			from, err := quotedPath("source-map prefix", r.From)
			if err != nil {
				return c, err
			}
			to, err := quotedPath("source-map directory", r.To)
			if err != nil {
				return c, err
			}
			args = append(args, from, to)
		}
		b.WriteString("# Last: lldb refuses a pair whose directory does not exist, which ends this file.\n")
		b.WriteString("settings append target.source-map " + strings.Join(args, " ") + "\n")
	}
	c.before = b.String()

	b.Reset()
	for _, f := range p.SymbolFiles {
		q, err := quotedPath("symbol file", f.File)
		if err != nil {
			return c, err
		}
		cmd := "target symbols add -- " + q
		switch {
		case f.Module != "" && f.UUID != "":
			comment(&b, "for "+f.Module+" (.dSYM matched by UUID "+f.UUID+")")
		case f.Module != "" && f.ByContent:
			// No build-id: lldb would match the file by name only.
			comment(&b, "for "+f.Module+" (no build-id: the same loadable segments)")
			// A module path lldb cannot be given keeps the plain command.
			if mod, err := quotedPath("module", f.Module); err == nil {
				cmd = "target symbols add --shlib " + mod + " -- " + q
			}
		case f.Module != "":
			comment(&b, "for "+f.Module+" (matched by build-id)")
		}
		b.WriteString(cmd + "\n")
		c.afterCmds = append(c.afterCmds, cmd)
	}
	if p.Walker != nil {
		comment(&b, "lldb 22+: the Python frames as frames of their own (lldb's scripted frame provider), in the target now that it exists; older lldb keeps the frame-format")
		cmd := "script pyattach_lldb.bt_frames(lldb.debugger)"
		b.WriteString(cmd + "\n")
		c.afterCmds = append(c.afterCmds, cmd)
	}
	c.after = b.String()
	return c, nil
}

// rootTarget writes the commands for a process whose files lldb reads
// under p.LLDBRoot: its debug directories there, the target made from
// its own executable (without dependents, which lldb would read at this
// machine's paths) and named by the path the process reports, and "/"
// mapped to the root, so that the libraries
// the process names are opened there (lldb opens the mapped path as it
// is; the kernel resolves it in the process's namespace).
// appendPaths appends each of dirs to lldb's setting, quoted; what names
// them in the error for one that cannot be passed safely.
func appendPaths(b *strings.Builder, setting, what string, dirs []string) error {
	for _, d := range dirs {
		q, err := quotedPath(what, d)
		if err != nil {
			return err
		}
		b.WriteString("settings append " + setting + " " + q + "\n")
	}
	return nil
}

func rootTarget(b *strings.Builder, p plan.Plan) error {
	if p.PID == 0 {
		return &PathError{"process root", p.LLDBRoot, "is only for an attached process"}
	}
	if _, err := cleanPath("executable", p.LLDBExe); err != nil {
		return err
	}
	if !path.IsAbs(p.LLDBExe) {
		return &PathError{"executable", p.LLDBExe, "is not an absolute path as the process sees it"}
	}
	if !utf8.ValidString(p.LLDBExe) {
		return &PathError{"executable", p.LLDBExe, "is not valid UTF-8; lldb hands it to Python as text"}
	}
	root, err := quotedPath("process root", p.LLDBRoot)
	if err != nil {
		return err
	}
	for _, d := range p.LLDBDebugDirs {
		q, err := quotedPath("debug directory", d)
		if err != nil {
			return err
		}
		b.WriteString("settings append target.debug-file-search-paths " + q + "\n")
	}
	exe, err := quotedPath("executable", path.Join(p.LLDBRoot, p.LLDBExe))
	if err != nil {
		return err
	}
	comment(b, "The process's own files, read under its root: lldb would open this machine's files of the same names.")
	b.WriteString("target create --no-dependents -- " + exe + "\n")
	// After the attach, lldb replaces a program whose path is not the one
	// the process reports ("Executable module changed") with the file of
	// that name here, when there is one; its platform path is that one.
	// (target create --remote-file would copy the file there when
	// missing: the host platform's "upload".)
	b.WriteString("script lldb.debugger.GetSelectedTarget().GetModuleAtIndex(0).SetPlatformFileSpec(lldb.SBFileSpec(" + pyquote.String(path.Clean(p.LLDBExe)) + ", False))\n")
	b.WriteString("target modules search-paths add \"/\" " + root + "\n")
	return nil
}

func header(b *strings.Builder, p plan.Plan, role string) {
	comment(b, "Generated by pyattach; regenerate rather than edit.")
	comment(b, role)
	if p.Target != "" {
		comment(b, "target: "+p.Target)
	}
	for _, f := range p.Findings {
		comment(b, f)
	}
}

// comment writes s as one comment line, with every character that could
// end the line or confuse a terminal written as a Go escape.
func comment(b *strings.Builder, s string) {
	b.WriteString("# ")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteString("\n")
}

// quotedPath checks p and returns it as one double-quoted lldb argument.
func quotedPath(what, p string) (string, error) {
	c, err := cleanPath(what, p)
	if err != nil {
		return "", err
	}
	return quote(c), nil
}

// cleanPath returns p as lldb will store it, or why p cannot be given.
func cleanPath(what, p string) (string, error) {
	if p == "" {
		return "", &PathError{what, p, "empty"}
	}
	for _, r := range p {
		if unicode.IsControl(r) && r != '\t' {
			return "", &PathError{what, p, "holds a newline or control character, which cannot be written into an lldb command"}
		}
	}
	if strings.HasPrefix(p, "~") {
		return "", &PathError{what, p, "lldb would expand the leading '~' to a home directory"}
	}
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return "", &PathError{what, p, "lldb removes \"..\" lexically, which can name another file than the kernel resolves; give the resolved path"}
		}
	}
	return path.Clean(p), nil
}

// quote writes s as a double-quoted lldb argument that comes back byte
// for byte: backslash and double quote are escaped for the argument
// parser, and a backslash before each backtick keeps lldb from
// evaluating it as an expression (lldb removes that backslash first).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"', '`':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// checkModuleName refuses an extension lldb cannot import exactly: lldb
// runs "import NAME" with NAME pasted in, and passes the directory to
// Python as a str (invalid UTF-8 fails with "Python sys.path handling
// failed").
func checkModuleName(p string) error {
	if !utf8.ValidString(p) {
		return &PathError{"lldb extension", p, "is not valid UTF-8; lldb hands the directory to Python as text and the import fails"}
	}
	name := strings.TrimSuffix(path.Base(path.Clean(p)), ".py")
	if !isIdentifier(name) {
		return &PathError{"lldb extension", p, fmt.Sprintf("module name %q is not a Python identifier; lldb pastes it into an import statement", name)}
	}
	if pythonKeywords[name] {
		return &PathError{"lldb extension", p, fmt.Sprintf("module name %q is a Python keyword", name)}
	}
	return nil
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

var pythonKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true,
	"assert": true, "async": true, "await": true, "break": true,
	"class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true,
	"from": true, "global": true, "if": true, "import": true, "in": true,
	"is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true,
	"while": true, "with": true, "yield": true,
}

// SourceCommand returns an lldb `command source` command for the file
// name, quoted so that lldb reads it back byte for byte (a backtick is
// not evaluated), or an error naming why it cannot be written.
func SourceCommand(name string) (string, error) {
	q, err := quotedPath("command file", name)
	if err != nil {
		return "", err
	}
	return "command source " + q, nil
}

// QuietSourceCommand returns the command that runs the command file
// name without echoing its commands or their results, errors and what
// Python prints still shown: lldb 14's `command source -s 1` would hide
// errors too, so a file holding only QuietSource(name) is sourced that
// way instead.
func QuietSourceCommand(wrapper string) (string, error) {
	q, err := quotedPath("command file", wrapper)
	if err != nil {
		return "", err
	}
	return "command source -s 1 " + q, nil
}

// QuietSource is the one-line command file that QuietSourceCommand
// sources: it runs name through lldb's Python API with echo and results
// off, errors on.
func QuietSource(name string) (string, error) {
	c, err := cleanPath("command file", name)
	if err != nil {
		return "", err
	}
	return "script o = lldb.SBCommandInterpreterRunOptions(); o.SetEchoCommands(False); o.SetPrintResults(False); " +
		"o.SetPrintErrors(True); o.SetStopOnError(False); o.SetAddToHistory(False); " +
		"lldb.debugger.GetCommandInterpreter().HandleCommandsFromFile(lldb.SBFileSpec(" + pyquote.String(c) + ", False), " +
		"lldb.SBExecutionContext(), o, lldb.SBCommandReturnObject()); del o\n", nil
}

// ProjectTrust returns the line for the user's ~/.lldbinit that makes
// lldb read the project file dir/.lldbinit, and only that file, when it
// starts in dir. lldb 14 reads ./.lldbinit only with the global
// target.load-cwd-lldbinit true, which would run any directory's file;
// otherwise it skips the file and prints a warning at every start. The
// line runs, when lldb's working directory is dir itself (the same
// directory, not a name compared): `settings set
// target.load-cwd-lldbinit false` (no warning, and no second reading of
// the file lldb reads next) and `command source` of dir/.lldbinit. In
// any other directory it does nothing. dir must be absolute and
// resolved (no symbolic link), so that the line names one file; a dir
// that cannot be written so exactly (see cleanPath, and invalid UTF-8,
// which Python cannot be handed as text) is refused.
func ProjectTrust(dir string) (string, error) {
	if !utf8.ValidString(dir) {
		return "", &PathError{"project directory", dir, "is not valid UTF-8; lldb's Python cannot be given it exactly"}
	}
	d, err := cleanPath("project directory", dir)
	if err != nil {
		return "", err
	}
	if !path.IsAbs(d) {
		return "", &PathError{"project directory", dir, "is not absolute"}
	}
	src, err := SourceCommand(path.Join(d, ".lldbinit"))
	if err != nil {
		return "", err
	}
	prog := "import os\n" +
		"try:\n    here = os.path.samefile(\".\", " + pyquote.String(d) + ")\n" +
		"except OSError:\n    here = False\n" +
		"if here:\n" +
		"    for c in (" + pyquote.String("settings set -- target.load-cwd-lldbinit false") + ", " + pyquote.String(src) + "):\n" +
		"        lldb.debugger.HandleCommand(c)\n"
	return "script exec(" + pyquote.String(prog) + ", {\"lldb\": lldb})", nil
}
