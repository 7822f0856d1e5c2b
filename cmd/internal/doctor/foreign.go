package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/pyext"
)

// foreignChecks say, for a target whose files are not the caller's (a
// container, another user's process: target.Foreign), that nothing
// reached through them runs as debugger code, and list each such file
// pyattach found and refused: CPython extensions under the target's
// root (as FindGDB tried them), and the libthread_db beside its libc.
func (s *Services) foreignChecks(res *target.Result, di *debugsearch.Info) []Check {
	why := target.Foreign(res, s.Euid)
	if len(why) == 0 {
		return nil
	}
	out := []Check{{ID: "target.foreign", Status: OK,
		Summary: strings.Join(why, "; ") + ": nothing reached through the target runs as debugger code (gdb: set auto-load off, so no -gdb.py file, .debug_gdb_scripts section or libthread_db of the target's is loaded; lldb: no scripts from symbol files); its debug files and sources are read as data"}}
	for _, t := range di.Extensions.GDBTried {
		file, reason, ok := strings.Cut(t, ": ")
		if !ok || !foreignRefusal(reason) {
			continue
		}
		out = append(out, Check{ID: "target.foreign.refused", Status: Warn,
			Summary: fmt.Sprintf("%s is not run: %s", file, reason),
			Fix:     foreignFix(res)})
	}
	if res.Container {
		for _, m := range di.Modules {
			if !strings.HasPrefix(filepath.Base(m.Path), "libc.so") {
				continue
			}
			tdb := filepath.Join(res.Root, filepath.Dir(m.Path), "libthread_db.so.1")
			if _, err := os.Lstat(tdb); err == nil {
				out = append(out, Check{ID: "target.foreign.refused", Status: Warn,
					Summary: tdb + " is not loaded: gdb would run the container's code as you; threads show by LWP, with their names, and py-bt matches them by native thread id",
					Fix:     "nothing to do; run gdb inside the container for thread_db's pthread view"})
			}
			break
		}
	}
	return out
}

// foreignRefusal reports a reason FindGDB gives only for a foreign
// target.
func foreignRefusal(reason string) bool {
	return reason == pyext.RefusedInRoot || strings.HasPrefix(reason, "refused for this target: ")
}

// foreignFix is what a user can do about a refused extension.
func foreignFix(res *target.Result) string {
	v := res.Python.Version
	if v == "" {
		v = "X.Y.Z"
	}
	return "pyattach's walker gives py-bt without it; for CPython's own commands: pyattach fetch-extension --python-version " + v
}
