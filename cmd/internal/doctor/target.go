package doctor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/pyoffsets"
)

// targetChecks resolves the target and explains what it finds.
func (s *Services) targetChecks(ctx context.Context, tgt string) []Check {
	res, err := s.Resolve(ctx, tgt)
	var np *target.NotPythonError
	if errors.As(err, &np) {
		ch := Check{ID: "target", Status: Fail, Summary: np.Error()}
		if len(np.Children) > 0 {
			var kids []string
			for _, k := range np.Children {
				kids = append(kids, fmt.Sprintf("%d (%s)", k.PID, k.Cmdline))
			}
			ch.Summary = fmt.Sprintf("process %d (%s) is a launcher, not Python; its Python children: %s", np.PID, np.Comm, strings.Join(kids, ", "))
			ch.Fix = fmt.Sprintf("pyattach doctor %d", np.Children[0].PID)
		} else {
			ch.Fix = "give the PID of the Python process: ps -ef | grep -i python"
		}
		return []Check{ch, s.checkPtrace(nil)}
	}
	if err != nil {
		ch := Check{ID: "target", Status: Fail, Summary: safetext.Fold(err.Error())}
		if s.Hint != nil {
			ch.Fix = s.Hint(err)
		}
		return []Check{ch}
	}
	var checks []Check
	checks = append(checks, s.checkPtrace(res))
	checks = append(checks, targetFacts(res)...)
	di, err := s.DebugInfo(ctx, tgt, res)
	if err != nil {
		return append(checks, Check{ID: "debug", Status: Fail, Summary: safetext.Fold(err.Error())})
	}
	checks = append(checks, s.foreignChecks(res, di)...)
	checks = append(checks, venvCheck(res, di))
	checks = append(checks, s.debugChecks(ctx, res, di)...)
	checks = append(checks, s.extensionChecks(ctx, res, di)...)
	checks = append(checks, s.pybtCheck(res, di))
	checks = append(checks, s.sourceChecks(ctx, res, di)...)
	return checks
}

// targetFacts notes what kind of interpreter it is.
func targetFacts(res *target.Result) []Check {
	var out []Check
	desc := fmt.Sprintf("%s: Python %s, %s", res.Interpreter, res.Python.Version, map[bool]string{true: "runtime linked into the executable", false: "libpython " + res.Libpython}[res.Static])
	out = append(out, Check{ID: "target", Status: OK, Summary: desc})
	if res.Shim != "" {
		out = append(out, Check{ID: "target.shim", Status: OK, Summary: fmt.Sprintf("%s is a pyenv shim; pyenv runs %s (%s)", res.Shim, res.Interpreter, res.ShimVersion)})
	}
	if res.Embedded {
		out = append(out, Check{ID: "target.embedded", Status: OK, Summary: fmt.Sprintf("%s embeds Python through %s", res.Exe, res.Libpython)})
	}
	if res.Container {
		out = append(out, Check{ID: "target.container", Status: Warn, Summary: fmt.Sprintf("the process runs in another root or mount namespace; its files are read under %s", res.Root),
			Fix: "pyattach gdb reads its files there (a chroot: set sysroot; pivot_root, as podman and docker do: gdb's target: sysroot); lldb 14 cannot: use gdb, or run lldb inside the container"})
	}
	if res.ExeDeleted {
		out = append(out, Check{ID: "target.deleted", Status: Warn, Summary: fmt.Sprintf("the executable %s was deleted or replaced after the process started; plain gdb may load the wrong file", res.Exe),
			Fix: fmt.Sprintf("pyattach gdb -p %d (it reads the running binary through /proc/%d/exe)", res.PID, res.PID)})
	}
	if res.Python.DebugBuild {
		out = append(out, Check{ID: "python.debug-build", Status: OK, Summary: "a debug build (Py_DEBUG, ABI flag d): unoptimised, every Python frame is visible; not ABI-compatible with release-built extension modules"})
	}
	if res.Python.FreeThreaded {
		out = append(out, Check{ID: "python.free-threaded", Status: OK, Summary: "a free-threaded build (ABI flag t): the gdb extension of this exact version is required"})
	}
	return out
}

// venvCheck explains why plain gdb misses the extension for a venv copy:
// a warning, printed without --verbose, because `gdb -p PID` is what most
// users type first and it has no py-bt there.
func venvCheck(res *target.Result, di *debugsearch.Info) Check {
	switch res.Venv.Kind {
	case "copies":
		plain := "gdb -iex " + shquote.Quote("file "+res.Interpreter)
		ext := di.Extensions.GDB
		if ext != "" && ext != debugsearch.GDBAutoLoadDir+res.Interpreter+"-gdb.py" {
			plain += " -ex " + shquote.Quote("source "+ext)
		}
		how := "-p PID"
		if res.PID != 0 {
			how = "-p " + strconv.Itoa(res.PID)
		}
		// pyattach gdb and lldb load the extension of the interpreter
		// the copy is of; plain gdb looks for it by the copy's path.
		return Check{ID: "venv", Status: Warn,
			Summary: fmt.Sprintf("plain gdb -p has no py-bt here: %s is a copy of %s (venv made with --copies), and gdb looks for CPython's extension by the executable's path, the copy's, where there is none; pyattach gdb finds it", res.Exe, res.Interpreter),
			Fix:     fmt.Sprintf("pyattach gdb %s\nor plain gdb: %s %s", how, plain, how)}
	case "symlinks":
		return Check{ID: "venv", Status: OK, Summary: fmt.Sprintf("%s is a symlinked venv: gdb reaches %s through it", res.Venv.Path, res.Interpreter)}
	case "conda":
		return Check{ID: "venv", Status: OK, Summary: "a conda environment: its python is a real interpreter"}
	}
	return Check{ID: "venv", Status: OK, Summary: "not in a virtualenv"}
}

// walkerCovers reports whether pyattach's stack walker reads this
// interpreter's frames.
func walkerCovers(res *target.Result) bool {
	return pyoffsets.Supported(res.Python.Version, res.Python.ABIFlags)
}

// isRuntimeModule reports whether the module holds the interpreter, whose
// debug information CPython's py-bt needs: libpython when there is one,
// else the executable (a static interpreter or its venv copy). The
// program that embeds a libpython (uwsgi) is not: without its debug
// information only its own native frames lose their names.
func isRuntimeModule(path string, res *target.Result) bool {
	if res.Libpython != "" {
		return path == res.Libpython
	}
	return path == res.Exe || path == res.Interpreter
}
