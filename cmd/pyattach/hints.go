package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/debuginfod"
	"github.com/pyattach/pyattach/cmd/internal/planner"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/venv"
)

// hinted is an error with the advice the user should act on. Hints are
// added here, at the command boundary, never inside the packages.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

func withHint(err error, format string, args ...any) error {
	return &hinted{err: err, hint: fmt.Sprintf(format, args...)}
}

// report prints an error as "pyattach: error: ..." and a hint line.
// Both may hold what a process controls (its comm, command line or exe,
// a core's file names): a line holding a control character is printed
// escaped (safetext.EscapeControls).
func report(w io.Writer, err error) { reportAs(w, "error", err) }

// warn prints an error that does not stop the command as "pyattach:
// warning: ..." and a hint line.
func warn(w io.Writer, err error) { reportAs(w, "warning", err) }

func reportAs(w io.Writer, kind string, err error) {
	fmt.Fprintf(w, "pyattach: %s: %s\n", kind, safetext.EscapeControls(safetext.Fold(err.Error())))
	if h := hintFor(err); h != "" {
		lines := strings.Split(h, "\n")
		fmt.Fprintf(w, "  hint: %s\n", safetext.EscapeControls(lines[0]))
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "        %s\n", safetext.EscapeControls(l))
		}
	}
}

const targetForms = "give a PID, a core file, a Python executable, a virtualenv directory or a script with a #! line"

// hintFor returns the advice for an error, or "".
func hintFor(err error) string {
	var h *hinted
	if errors.As(err, &h) {
		return h.hint
	}
	var np *target.NotPythonError
	if errors.As(err, &np) {
		if len(np.Children) == 0 {
			return "it has no Python child processes either; check the PID with: ps -ef | grep -i python"
		}
		var b strings.Builder
		b.WriteString("its Python child processes: ")
		for i, c := range np.Children {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d (%s)", c.PID, safetext.Escape(c.Cmdline))
		}
		fmt.Fprintf(&b, "\nresolve one of those instead: pyattach resolve %d", np.Children[0].PID)
		return b.String()
	}
	var core *planner.CoreError
	var nr *saferead.NotRegularError
	if errors.As(err, &nr) {
		what := "a regular file"
		switch {
		case errors.As(err, &core):
			what = "the core file itself, as gcore or the kernel writes it"
		case errors.Is(err, target.ErrNotExecutable):
			what = strings.TrimPrefix(targetForms, "give ")
		}
		return notRegularHint(nr, what)
	}
	if errors.As(err, &core) {
		if core.NotCore() {
			return fmt.Sprintf("the file after -c must be a core dump, as gcore or the kernel writes it; check it with: readelf -h %s", core.Path)
		}
		return fmt.Sprintf("give the program before the core: pyattach gdb PROGRAM %s", core.Path)
	}
	var wd *planner.WalkerDirError
	if errors.As(err, &wd) {
		return "set XDG_DATA_HOME to a directory of your own (export XDG_DATA_HOME=$(mktemp -d))"
	}
	var ce *configError
	if errors.As(err, &ce) {
		if ce.hint != "" {
			return ce.hint
		}
		return "fix or remove " + ce.file + "; its keys are described in: pyattach help configuration"
	}
	var nl *proc.NeedsLinuxError
	if errors.As(err, &nl) {
		return needsLinuxHint(nl)
	}
	var nm *venv.NoMatchError
	switch {
	case errors.As(err, &nm):
		dir := "DIR"
		if nm.Copy != "" {
			dir = venvDirOf(nm.Copy)
		}
		return fmt.Sprintf("the base interpreter was replaced since the venv was made; refresh the venv's copy with:\npython3 -m venv --copies --upgrade %s", dir)
	case errors.Is(err, proc.ErrNoProcess):
		return "the process does not exist or has exited; list Python processes with: ps -ef | grep -i python"
	case errors.Is(err, proc.ErrPermission):
		return "pyattach may not read this process's files. The usual causes:\n" +
			"1. it belongs to another user: run as that user, or with sudo;\n" +
			"2. it is not dumpable (setuid, or PR_SET_DUMPABLE 0): run as root;\n" +
			"3. a container or security module hides it (hidepid on /proc, AppArmor, SELinux): run inside the same container, or grant CAP_SYS_PTRACE (docker run --cap-add=SYS_PTRACE)"
	case errors.Is(err, venv.ErrSymlinkLoop):
		return "a symbolic link points back to itself; inspect the chain with: namei -l PATH"
	case errors.Is(err, venv.ErrMalformedCfg):
		return "pyvenv.cfg holds 'key = value' lines in UTF-8, or CPython cannot start; rewrite it with: python3 -m venv --upgrade VENV_DIR"
	case errors.Is(err, venv.ErrNoPython):
		return "the virtualenv has no bin/python; recreate it with: python3 -m venv --copies VENV_DIR"
	case errors.Is(err, venv.ErrNotVenv):
		return "a venv has pyvenv.cfg, a Python 2 virtualenv lib/python2.7/orig-prefix.txt, a conda env conda-meta/; " + targetForms
	case errors.Is(err, elfinfo.ErrNotELF), errors.Is(err, target.ErrNotExecutable):
		return targetForms
	case errors.Is(err, elfinfo.ErrCorrupt):
		return "the file is truncated or corrupt (still being copied?); check it with: " + readelfFor(err)
	case errors.Is(err, machoinfo.ErrCorrupt):
		return "the Mach-O file is truncated or corrupt (still being copied, or a universal file whose header lies); copy it again from its wheel and check it with: llvm-objdump --macho --private-headers --arch=all FILE"
	case errors.Is(err, target.ErrNotPython):
		return "this is not a CPython interpreter; " + targetForms
	case errors.Is(err, debuginfod.ErrTooLarge):
		return "no real debug file is this large; if you trust the server, raise the limit: export DEBUGINFOD_MAXSIZE=BYTES (0: none)"
	case errors.Is(err, debuginfod.ErrNoSpace):
		return "free space in the debuginfod cache, or move it to a larger file system: export DEBUGINFOD_CACHE_PATH=DIR"
	case errors.Is(err, debuginfod.ErrCut):
		return "the server or the network dropped the answer; run the command again, or ask another server (DEBUGINFOD_URLS)"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory; " + targetForms
	case errors.Is(err, fs.ErrPermission):
		return "permission denied; run as the file's owner, or with sudo"
	}
	return ""
}

// notRegularHint is the advice for an input that is not a regular file
// (a FIFO, a device, a socket, a directory): what to give instead
// (what: "the core file itself"), and, for a FIFO, how to save what it
// carries.
func notRegularHint(nr *saferead.NotRegularError, what string) string {
	if nr.Mode&fs.ModeNamedPipe != 0 {
		return fmt.Sprintf("pyattach reads only regular files; give %s, or save what the pipe carries to a file first: cat %s > FILE", what, shquote.Quote(nr.Path))
	}
	return fmt.Sprintf("pyattach reads only regular files; give %s", what)
}

// readelfFor returns the readelf command that shows the part of the file
// a *elfinfo.FormatError in err points at.
func readelfFor(err error) string {
	var fe *elfinfo.FormatError
	if !errors.As(err, &fe) || fe.Kind != elfinfo.ErrCorrupt {
		return "readelf -h FILE"
	}
	switch s := fe.Section; {
	case s == "PT_NOTE" || s == "notes" || s == "NT_FILE" || strings.HasPrefix(s, ".note"):
		return "readelf -n FILE"
	case s == "program headers":
		return "readelf -l FILE"
	case strings.HasPrefix(s, ".debug_") || strings.HasPrefix(s, ".zdebug_"):
		return "readelf --debug-dump=info FILE"
	case s == "symbol table":
		return "readelf -s FILE"
	case strings.HasPrefix(s, "."):
		return "readelf -S FILE"
	}
	return "readelf -h FILE"
}

// venvDirOf returns the venv root of DIR/bin/python.
func venvDirOf(exe string) string {
	i := strings.LastIndex(exe, "/bin/")
	if i <= 0 {
		return "VENV_DIR"
	}
	return exe[:i]
}

// inDir fills the VENV_DIR placeholder of err's hint with dir, so that
// the hint is a command the user can run as it is.
func inDir(err error, dir string) error {
	if err == nil || dir == "" {
		return err
	}
	if h := hintFor(err); strings.Contains(h, "VENV_DIR") {
		return withHint(err, "%s", strings.ReplaceAll(h, "VENV_DIR", dir))
	}
	return err
}

// needsLinuxHint is the advice for a process asked for on macOS: what
// works there is given files (the program, a virtualenv, a core).
func needsLinuxHint(e *proc.NeedsLinuxError) string {
	if e.Exe != "" {
		q := shquote.Quote(e.Exe)
		return fmt.Sprintf("on %s pyattach works on files: the process runs %s, so try: pyattach resolve %s, or pyattach lldb %s", e.GOOS, q, q, q)
	}
	return fmt.Sprintf("on %s pyattach works on files: pass the program, a virtualenv or a core file instead (pyattach resolve .venv, pyattach lldb PROGRAM -c CORE)", e.GOOS)
}
