package pyoffsets

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// TestTablesCoverVersions: the shipped file has a table for every minor
// version the walker reads through tables, each with the members that
// walk needs.
func TestTablesCoverVersions(t *testing.T) {
	need := map[string][]string{
		"3.7":  {"_PyRuntimeState.interpreters.head", "PyInterpreterState.tstate_head", "PyThreadState.frame", "PyFrameObject.f_back", "PyCodeObject.co_lnotab"},
		"3.8":  {"_PyRuntimeState.interpreters.head", "PyThreadState.frame", "PyFrameObject.f_lasti"},
		"3.9":  {"_PyRuntimeState.interpreters.head", "PyThreadState.frame", "PyCodeObject.co_lnotab"},
		"3.10": {"_PyRuntimeState.interpreters.head", "PyThreadState.frame", "PyCodeObject.co_linetable"},
		"3.11": {"PyInterpreterState.threads.head", "PyThreadState.cframe", "_PyCFrame.current_frame", "_PyInterpreterFrame.f_code", "_PyInterpreterFrame.prev_instr", "PyCodeObject.co_code_adaptive", "PyCodeObject.co_qualname"},
		"3.12": {"PyInterpreterState.threads.head", "PyThreadState.cframe", "_PyInterpreterFrame.f_code", "_PyInterpreterFrame.owner", "PyLongObject.long_value.lv_tag"},
		// From the Debian roots of scripts/make-roots.sh.
		"3.14": {"PyInterpreterState.threads.head", "PyThreadState.current_frame", "_PyInterpreterFrame.f_executable", "_PyInterpreterFrame.instr_ptr", "PyCodeObject._co_firsttraceable"},
		"3.15": {"PyInterpreterState.threads.head", "PyThreadState.current_frame", "_PyInterpreterFrame.f_executable", "_PyInterpreterFrame.instr_ptr", "PyCodeObject._co_firsttraceable"},
	}
	// What finds and reads asyncio tasks up to 3.13 (3.14+ has its own
	// debug offsets for them): the _asyncio extension's TaskObj and
	// FutureObj, coroutines' frames, sets and weak references.
	for _, key := range []string{"3.11", "3.12", "3.13"} {
		need[key] = append(need[key], legacyTasks...)
	}
	for key, members := range need {
		tab, ok := Lookup(key, "")
		if !ok {
			t.Errorf("no table for %s", key)
			continue
		}
		for _, m := range members {
			if _, ok := tab.Fields[m]; !ok {
				t.Errorf("%s: no %s", key, m)
			}
		}
		if tab.Fields["PyASCIIObject.state.kind:bit_size"] != 3 {
			t.Errorf("%s: string kind is not a 3-bit field: %v", key, tab.Fields["PyASCIIObject.state.kind:bit_size"])
		}
	}
	// The m flag (pymalloc) does not change layouts; d picks its own table.
	if a, _ := Lookup("3.7", "m"); a.Key != "3.7" {
		t.Errorf("3.7m: got table %q", a.Key)
	}
}

// legacyTasks are the members legacy_task_addrs and the task walk read
// in 3.11-3.13.
var legacyTasks = []string{
	"PyGenObject.gi_iframe", "PyGenObject.gi_frame_state",
	"TaskObj.task_coro", "TaskObj.task_name", "TaskObj.task_fut_waiter",
	"FutureObj.fut_state", "FutureObj.fut_callback0", "FutureObj.fut_callbacks",
	"PySetObject.used", "PySetObject.mask", "PySetObject.table", "setentry.key", "setentry.hash", "sizeof(setentry)",
	"PyWeakReference.wr_object", "PyModuleObject.md_dict",
	"PyFrameState.FRAME_SUSPENDED", "PyFrameState.FRAME_COMPLETED", "PyFrameState.FRAME_CLEARED",
	"fut_state.STATE_PENDING", "fut_state.STATE_CANCELLED", "fut_state.STATE_FINISHED",
}

// TestTablesMatchDWARF regenerates every table from the builds on this
// machine: from the very build it was generated from (any drift fails),
// and from other builds of the same version and flags, which must agree
// (a distribution build against a pyenv build of the same minor).
//
// In CI every table of a build scripts/test.sh installs must be checked
// against that build: Debian's python3.11 and python3.11d (with
// python3.11-dbg), and each Debian root's python3.N, python3.Nd and
// python3.Nt (scripts/make-roots.sh, with the -dbg packages). The other
// tables (3.6-3.10, 3.12: no Debian suite on the mirror ships them) are
// checked where pyenv builds of them with DWARF are found, and only
// logged elsewhere.
func TestTablesMatchDWARF(t *testing.T) {
	// pyenv's builds, then the system's and the roots'.
	sources := append(Discover(testenv.PyenvRoot(), "/usr/lib/debug"), DiscoverRoots(RootsDir())...)
	requireInstalled(t, sources)
	all := All()
	if len(all) == 0 {
		t.Fatal("offsets.json holds no tables")
	}
	installed := map[string]bool{}
	for _, s := range sources {
		if s.Kind != "pyenv" {
			installed[s.Key()] = true
		}
	}
	for key := range installed {
		if !hasTable(all, key) {
			t.Errorf("%s: a build the scripts install has no table in offsets.json", key)
		}
	}
	for _, tab := range all {
		checked := 0
		for _, s := range sources {
			if s.Key() != tab.Key {
				continue
			}
			got, err := Generate(s)
			if err != nil {
				t.Errorf("%s: %v", s.Path, err)
				continue
			}
			checked++
			what := "another build"
			if s.BuildID == tab.From.BuildID {
				what = "its own build"
			}
			if !reflect.DeepEqual(got, tab.Fields) {
				for k, v := range tab.Fields {
					if g, ok := got[k]; !ok || g != v {
						t.Errorf("%s (%s, %s %s): %s is %d in the table, %d (present %v) in the DWARF", tab.Key, what, s.Kind, s.Version, k, v, g, ok)
					}
				}
				for k, g := range got {
					if _, ok := tab.Fields[k]; !ok {
						t.Errorf("%s (%s, %s %s): %s = %d is not in the table", tab.Key, what, s.Kind, s.Version, k, g)
					}
				}
				continue
			}
			t.Logf("%s matches %s: %s %s (%s)", tab.Key, what, s.Kind, s.Version, s.Path)
		}
		if checked == 0 {
			// A pyenv build of it checks it elsewhere; the subtest's name
			// says why it was not checked here.
			t.Run(tab.Key+"_not_checked_no_build_with_DWARF_here", func(t *testing.T) {})
		}
	}
}

// requireInstalled checks that sources hold the builds with DWARF that
// scripts/test.sh installs (Missing decides when one is not): Debian's
// python3.11 and python3.11d with python3.11-dbg, and for every Debian
// root its python3.N, and python3.Nd unless it is the free-threaded
// build (testenv.Roots requires at least one root).
func requireInstalled(t *testing.T, sources []Source) {
	t.Helper()
	testenv.DebianDebugFile(t, testenv.ReadelfBuildID(t, testenv.Debian(t).Exe))
	testenv.DebianDebug(t)
	want := []string{"3.11", "3.11d"}
	for _, r := range testenv.Roots(t) {
		want = append(want, r.Minor)
		if !strings.HasSuffix(r.Minor, "t") {
			want = append(want, r.Minor+"d")
		}
	}
	found := map[string]bool{}
	for _, s := range sources {
		if s.Kind != "pyenv" {
			found[s.Key()] = true
		}
	}
	for _, k := range want {
		if !found[k] {
			testenv.Missing(t, "no build of Python %s with DWARF among those the scripts install (Debian's python3.11-dbg, the roots of scripts/make-roots.sh)", k)
		}
	}
}

func hasTable(all []Table, key string) bool {
	for _, tab := range all {
		if tab.Key == key {
			return true
		}
	}
	return false
}

func TestSupported(t *testing.T) {
	for v, want := range map[string]bool{
		"3.11.2": true, "3.7.16": true, "3.12.0rc1": true, "3.14.0": true, "3.15.0a1": true,
		"2.7.18": false, "3.5.10": false, "3.6.15": false, "": false, "3": false, "4.0.0": false,
	} {
		if got := Supported(v, ""); got != want {
			t.Errorf("Supported(%q) = %v, want %v", v, got, want)
		}
	}
}
