package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestResolveCore: `pyattach resolve CORE` reads the core's notes, as
// gdb -c does: a gcore core of a Debian Python 3.11 process in a
// --copies venv resolves through the venv copy its notes name to
// /usr/bin/python3.11, with that file's build-id (readelf's), the
// process's PID, and the modules it mapped with their build-ids.
func TestResolveCore(t *testing.T) {
	gcore := testenv.Need(t, "gcore")
	py := testenv.Debian(t)
	pid := startVenvCopies(t, py.Exe)
	dir := t.TempDir()
	mustRunIn(t, "gcore", dir, nil, gcore, "-o", filepath.Join(dir, "core"), strconv.Itoa(pid))
	core := filepath.Join(dir, "core."+strconv.Itoa(pid))
	id := testenv.ReadelfBuildID(t, py.Exe)

	o := mustRunIn(t, "resolve --json", "", nil, pyattachBin(t), "resolve", "--json", core)
	var r target.Result
	if err := json.Unmarshal([]byte(o), &r); err != nil {
		t.Fatalf("resolve --json %s: %v\n%s", core, err, o)
	}
	if r.TargetKind != target.KindCore || r.Core == nil || r.Core.PID != pid || r.Core.Path != core {
		t.Errorf("resolve --json: target_kind %q, core %+v; want core of process %d", r.TargetKind, r.Core, pid)
	}
	if r.Interpreter != py.Exe || r.BuildID != id || r.Core.ExeBuildID != id || r.Venv.Kind != "copies" || !strings.HasSuffix(r.Exe, "/venv/bin/python") {
		t.Errorf("resolve --json: exe %s, interpreter %s (%s), core's exe build-id %s, venv %+v; want the venv copy of %s (%s)", r.Exe, r.Interpreter, r.BuildID, r.Core.ExeBuildID, r.Venv, py.Exe, id)
	}
	if !strings.HasPrefix(r.Python.Version, "3.11.") {
		t.Errorf("resolve --json: python %+v", r.Python)
	}
	var libc bool
	for _, m := range r.Modules {
		libc = libc || strings.Contains(filepath.Base(m.Path), "libc.so") && m.BuildID != ""
	}
	if !libc {
		t.Errorf("resolve --json: modules lack libc with its build-id: %+v", r.Modules)
	}

	o = mustRunIn(t, "resolve", "", nil, pyattachBin(t), "resolve", core)
	for _, want := range []string{
		`(?m)^core +` + regexp.QuoteMeta(core) + `  \(process ` + strconv.Itoa(pid) + `, `,
		`(?m)^interpreter +` + regexp.QuoteMeta(py.Exe) + `  \(same build-id`,
		`(?m)^build-id +` + id + `$`,
		`(?m)^modules +\d+ mapped, from the core's notes`,
	} {
		if !regexp.MustCompile(want).MatchString(o) {
			t.Errorf("resolve %s lacks %s:\n%s", core, want, o)
		}
	}

	// debuginfo and doctor take the core as resolve does: the modules
	// of its notes, the interpreter's debug file by the core's build-id.
	o = mustRunIn(t, "debuginfo --json", "", nil, pyattachBin(t), "debuginfo", "--json", core)
	var di debugsearch.Info
	if err := json.Unmarshal([]byte(o), &di); err != nil {
		t.Fatalf("debuginfo --json %s: %v\n%s", core, err, o)
	}
	var exe, libcMod bool
	for _, m := range di.Modules {
		if m.Error != "" {
			t.Errorf("debuginfo %s: module %s: %s", core, m.Path, m.Error)
		}
		if m.BuildID == id && m.Debug.Path != "" {
			exe = true
		}
		libcMod = libcMod || strings.Contains(filepath.Base(m.Path), "libc.so")
	}
	if !exe || !libcMod || di.Python == nil || di.Python.Version != r.Python.Version {
		t.Errorf("debuginfo --json %s: want the interpreter (build-id %s) with its debug file, libc, and Python %s:\n%s", core, id, r.Python.Version, o)
	}
	o = mustRunIn(t, "doctor", "", nil, pyattachBin(t), "doctor", core)
	if !regexp.MustCompile(`(?m)^ok +target +.*Python 3\.11\.`).MatchString(o) {
		t.Errorf("doctor %s: want the target resolved through the core's notes:\n%s", core, o)
	}
}
