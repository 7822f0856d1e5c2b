package main

import (
	"regexp"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// TestDoctorLLDBBothPaths checks doctor's lldb check both ways, on the
// same lldb: with the PYTHONPATH its Python needs (testenv.LLDBEnv) the
// check is ok; with PYTHONPATH emptied (Debian's lldb 14 as installed,
// whose `lldb -P` is wrong) it warns, and its fix for plain lldb, run as
// given, makes `script` work. It supersedes TestDoctorLLDBPythonPath,
// which skipped whenever lldb worked.
func TestDoctorLLDBBothPaths(t *testing.T) {
	testenv.Need(t, "lldb")
	good := testenv.LLDBEnv()
	if good == nil {
		testenv.Missing(t, "no lldb Python package under /usr/lib/llvm-*/lib/python3*/dist-packages (apt-get install python3-lldb-14)")
	}
	if c := findCheck(t, runDoctor(t, good), "lldb"); c.Status != "ok" {
		t.Errorf("with %s: lldb check %+v, want ok", good[0], c)
	}

	c := findCheck(t, runDoctor(t, []string{"PYTHONPATH="}), "lldb")
	if c.Status == "ok" {
		testenv.Missing(t, "this lldb's script command works without PYTHONPATH: the broken path cannot be made here")
	}
	m := regexp.MustCompile(`for plain lldb: (PYTHONPATH=\S+ \S+)$`).FindStringSubmatch(c.Fix)
	if c.Status != "warn" || m == nil {
		t.Fatalf("without PYTHONPATH: lldb check %+v", c)
	}
	o, _ := runIn(t, "", []string{"PYTHONPATH="}, "sh", "-c", m[1]+" -b -o 'script print(6*7)'")
	if !regexp.MustCompile(`(?m)^42$`).MatchString(o) {
		t.Errorf("the fix %q did not make script work:\n%s", m[1], o)
	}
}
