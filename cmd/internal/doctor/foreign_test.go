package doctor

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/pyext"
)

// TestForeignChecks: for a container's process doctor says that nothing
// of the target's runs as debugger code and lists each file it refused
// (an extension under the root, the container's libthread_db) with
// what to do; another user's process is foreign too; the caller's own
// is not, and a plain ownership refusal stays extension.refused.
func TestForeignChecks(t *testing.T) {
	s, _ := newServices(t)
	root := filepath.Join(t.TempDir(), "root")
	writeFile(t, filepath.Join(root, "lib/x86_64-linux-gnu/libthread_db.so.1"), "ELF")
	res := newResult()
	res.TargetKind, res.PID, res.Container, res.Root = target.KindPID, 77, true, root
	in := filepath.Join(root, "usr/share/gdb/auto-load/opt/py/bin/python3.12-gdb.py")
	di := &debugsearch.Info{
		Modules: []debugsearch.Module{{Path: "/opt/py/bin/python3.12"}, {Path: "/lib/x86_64-linux-gnu/libc.so.6"}},
		Extensions: debugsearch.Extensions{GDBTried: []string{
			in + ": " + pyext.RefusedInRoot,
			"/usr/share/gdb/auto-load/opt/py/bin/python3.12-gdb.py: refused for this target: version 3.12 is not the interpreter's exact version 3.12.99 (...)",
			"/home/u/ext-gdb.py: refused: it is writable by others, and gdb would run it",
		}},
	}
	checks := s.foreignChecks(res, di)
	want(t, "foreign", one(t, checks, "target.foreign"), OK, "process 77 runs in another root ("+root+")", "")
	refused := byID(checks, "target.foreign.refused")
	var text []string
	for _, c := range refused {
		text = append(text, c.Summary+" | "+c.Fix)
	}
	all := strings.Join(text, "\n")
	for _, w := range []string{
		in + " is not run: " + pyext.RefusedInRoot + " | pyattach's walker gives py-bt without it; for CPython's own commands: pyattach fetch-extension --python-version 3.12.99",
		"/usr/share/gdb/auto-load/opt/py/bin/python3.12-gdb.py is not run: refused for this target: version 3.12",
		filepath.Join(root, "lib/x86_64-linux-gnu/libthread_db.so.1") + " is not loaded: gdb would run the container's code",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("refusals lack %q:\n%s", w, all)
		}
	}
	if len(refused) != 3 || strings.Contains(all, "/home/u/ext-gdb.py") {
		t.Errorf("want 3 foreign refusals, not the ownership one:\n%s", all)
	}
	// The ownership refusal is extension.refused, the foreign ones not.
	ex := byID(s.extensionChecks(t.Context(), res, di), "extension.refused")
	if len(ex) != 1 || !strings.Contains(ex[0].Summary, "/home/u/ext-gdb.py") {
		t.Errorf("extension.refused: %+v", ex)
	}

	// Another user's process on the host.
	other, mine := s.Euid+1, s.Euid
	res = newResult()
	res.TargetKind, res.PID, res.UID = target.KindPID, 78, &other
	want(t, "other user", one(t, s.foreignChecks(res, &debugsearch.Info{}), "target.foreign"), OK, "process 78 belongs to uid", "")
	res.UID = &mine
	if checks := s.foreignChecks(res, &debugsearch.Info{}); len(checks) != 0 {
		t.Errorf("the caller's own process: %+v", checks)
	}
}
