package doctor

import (
	"fmt"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/pyversion"
)

// pybtCheck says which py-bt answers for the target under pyattach gdb
// and lldb, and why: CPython's extension when it can read this build's
// frames (a matching extension, full DWARF for the interpreter, and no
// optimised 3.13+ eval loop that hides its frame), pyattach's walker
// otherwise, or none.
func (s *Services) pybtCheck(res *target.Result, di *debugsearch.Info) Check {
	ex := di.Extensions
	var why string
	switch {
	case ex.GDB == "":
		why = "no CPython extension was found"
	case !ex.GDBVersionMatch:
		why = "the CPython extension found is for Python " + ex.GDBVersion
	}
	if why == "" {
		why = runtimeDebugProblem(res, di)
	}
	walker := walkerCovers(res)
	switch {
	case why == "" && walker:
		return Check{ID: "pybt", Status: OK, Summary: fmt.Sprintf("py-bt: CPython's extension %s answers (it reads this build's frames); pyattach's walker stands in where it cannot, and in lldb (py-bt, py-bt all)", ex.GDB)}
	case why == "":
		return Check{ID: "pybt", Status: OK, Summary: fmt.Sprintf("py-bt: CPython's extension %s answers; pyattach's walker does not cover Python %s", ex.GDB, res.Python.Version)}
	case walker:
		return Check{ID: "pybt", Status: OK, Summary: fmt.Sprintf("py-bt: pyattach's walker answers in pyattach gdb and pyattach lldb (from memory): %s", why),
			Fix: "plain gdb has it too with a project init file: pyattach init --gdb --trust"}
	}
	fix := "pyattach fetch-extension " + shquote.Quote(res.Target)
	if ex.GDB == "" {
		fix = s.missingExtensionFix(res, s.extensionPlaces(res, ex.GDBTried))
	}
	return Check{ID: "pybt", Status: Fail, Summary: fmt.Sprintf("no py-bt for Python %s: %s, and pyattach's walker covers 3.7 and later", res.Python.Version, why),
		Fix: fix}
}

// runtimeDebugProblem says why CPython's extension cannot read frames
// from the module holding the interpreter, or "".
func runtimeDebugProblem(res *target.Result, di *debugsearch.Info) string {
	mod := res.Interpreter
	if res.Libpython != "" {
		mod = res.Libpython
	}
	for _, m := range di.Modules {
		if m.Path != mod && !(res.Libpython == "" && m.Path == res.Exe) {
			continue
		}
		d := m.Debug
		if p := d.Producer; p != nil && (p.GLevel == "0" || p.GLevel == "1") {
			return fmt.Sprintf("%s was built with -g%s", m.Path, p.GLevel)
		}
		if d.Kind != debugfile.KindDWARF {
			return fmt.Sprintf("%s has no full DWARF (%s)", m.Path, d.Kind)
		}
		if p := d.Producer; p != nil {
			if v, err := pyversion.Parse(res.Python.Version); err == nil && v.HasMinor() && v.AtLeast(3, 13) && (p.LTO || p.OLevel == "2" || p.OLevel == "3" || p.OLevel == "s") {
				return fmt.Sprintf("Python %s built with -O%s%s: its eval loop's frame is optimised out, so CPython's py-bt prints (unable to read python frame information)", v.MajorMinor(), p.OLevel, map[bool]string{true: " and LTO"}[p.LTO])
			}
		}
		return ""
	}
	return ""
}
