package pyoffsets

import (
	"reflect"
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

// TestTablesMatchDWARF regenerates every table from the builds on this
// machine: from the very build it was generated from (any drift fails),
// and from other builds of the same version and flags, which must agree
// (a distribution build against a pyenv build of the same minor). In CI every table must be
// checked against at least one build: the tables of 3.14, 3.15 and the
// Debian debug builds come from the roots of scripts/make-roots.sh.
func TestTablesMatchDWARF(t *testing.T) {
	sources := append(Discover(testenv.PyenvRoot(), "/usr/lib/debug"), DiscoverRoots(RootsDir())...)
	all := All()
	if len(all) == 0 {
		t.Fatal("offsets.json holds no tables")
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
			if testenv.InCI() {
				t.Errorf("%s: no build of this version with DWARF on this machine to check the table against", tab.Key)
			} else {
				t.Logf("%s: no build to check against here", tab.Key)
			}
		}
	}
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
