package pyext

import (
	"reflect"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

func TestVersionFromName(t *testing.T) {
	testenv.Cases(t, "versionFromName", versionFromName, map[string]string{
		"python3.11-gdb.py":                                      "3.11",
		"python3.11d-gdb.py":                                     "3.11",
		"python3.11-dbg-gdb.py":                                  "3.11",
		"python2.7-gdb.py":                                       "2.7",
		"python3.6m-gdb.py":                                      "3.6",
		"libpython3.11.so.1.0-gdb.py":                            "3.11",
		"libpython3.13t.so.1.0-gdb.py":                           "3.13",
		"python3.12.debug-gdb.py":                                "3.12",
		"libpython3.12.so.1.0-3.12.1-1.fc39.x86_64.debug-gdb.py": "3.12.1",
		"python3.12-3.12.0~rc2-1.fc40.x86_64.debug-gdb.py":       "3.12.0",
		"libpython3.12.so.1.0-3.11.1-1.fc39.x86_64.debug-gdb.py": "3.12",
		"python-gdb.py":                                          "",
		"libpython.py":                                           "",
		"python3-gdb.py":                                         "",
		"libstdc++.so.6.0.30-gdb.py":                             "",
	})
}

func TestVersionInDirs(t *testing.T) {
	testenv.Cases(t, "versionInDirs", versionInDirs, map[string]string{
		"/root/.pyenv/versions/3.12.1/bin/python3.12-gdb.py":                      "3.12.1",
		"/root/.pyenv/versions/3.13.0t/bin/python3.13t-gdb.py":                    "3.13.0",
		"/home/u/.local/share/uv/python/cpython-3.12.8-linux-x86_64-gnu/bin/x.py": "3.12.8",
		"/src/Python-3.9.18/python-gdb.py":                                        "3.9.18",
		"/cache/extensions/3.13.0rc1/libpython.py":                                "3.13.0rc1",
		"/usr/share/gdb/auto-load/usr/bin/python3.11-gdb.py":                      "",
		"/opt/1.2.3/x.py":      "",
		"/opt/3.12.1.bak/x.py": "3.12.1",
		"/opt/3.12.1x/x.py":    "",
	})
}

func TestExactVersion(t *testing.T) {
	testenv.Cases(t, "exactVersion", exactVersion, map[string]bool{
		"3.12.1": true, "2.7.18": true, "3.13.0rc1": true, "3.14.0a7": true, "3.12.0b4": true,
		"3.12": false, "3.13.0+": false, "3.13.0t": false, "": false, "3.12.1/..": false, "v3.12.1": false, "3.12.x": false,
		"3.012.1": false, "3.12.1.final.0": false, "3.13.0rc01": false,
	})
}

func TestUpstreamVersion(t *testing.T) {
	testenv.Cases(t, "upstreamVersion", upstreamVersion, map[string]string{
		"3.11.2-6+deb12u9":  "3.11.2",
		"3.12.3-1ubuntu0.1": "3.12.3",
		"1:3.13.0~rc1-1":    "3.13.0rc1",
		"garbage":           "",
	})
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		ext, interp string
		rank        int
		match       bool
	}{
		{"3.11.2", "3.11.2", rankExact, true},
		{"3.11", "3.11.2", rankMinor, true},
		{"3.11.2", "3.11", rankMinor, true},
		{"3.11.4", "3.11.2", rankMicroDiffer, true},
		{"", "3.11.2", rankUnknown, false},
		{"3.11", "", rankUnknown, false},
		{"3.10", "3.11.2", rankMismatch, false},
		{"2.7.18", "3.7.18", rankMismatch, false},
		{"3.11", "3.11d", rankMinor, true},
		{"3.13.0rc1", "3.13.0", rankExact, true},
		{"3.13.0", "3.13.0+", rankExact, true},
		{"3.13.1", "3.13.0t", rankMicroDiffer, true},
		{"3.13", "3.13.0rc1junk", rankUnknown, false},
	} {
		rank, match, _ := compareVersions(tc.ext, tc.interp)
		if rank != tc.rank || match != tc.match {
			t.Errorf("compareVersions(%q, %q) = %d, %v; want %d, %v", tc.ext, tc.interp, rank, match, tc.rank, tc.match)
		}
	}
}

func TestStubTargets(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"exec(open('/usr/lib/debug/libpython.py').read())\n", []string{"/usr/lib/debug/libpython.py"}},
		{"import os\nexec(open(os.path.join(os.path.dirname(__file__), \"libpython.py\")).read())\n", []string{"/d/libpython.py"}},
		{"gdb.execute('source ../share/python3.11-gdb.py')\n", []string{"/share/python3.11-gdb.py"}},
		{"import sys\nsys.path.insert(0, '/usr/share/py')\nfrom libpython import *\n", []string{"/usr/share/py/libpython.py"}},
		{"import gdb\nimport libpython\n", []string{"/d/libpython.py"}},
		{"print(1)\n", nil},
	} {
		if got := stubTargets([]byte(tc.src), "/d"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("stubTargets(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestResolveInStaysInRoot(t *testing.T) {
	root := tree(t, map[string]string{
		"a/up":   "->../../../../etc",
		"a/abs":  "->/b",
		"b/f":    "x",
		"a/loop": "->loop",
		"etc/":   "",
	})
	for p, want := range map[string]string{
		"/a/up/passwd": root + "/etc/passwd",
		"/a/abs/f":     root + "/b/f",
		"/../../b/f":   root + "/b/f",
	} {
		got, err := resolveIn(root, p)
		if err != nil || got != want {
			t.Errorf("resolveIn(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := resolveIn(root, "/a/loop/x"); err == nil {
		t.Error("no error for a symlink loop")
	}
}
