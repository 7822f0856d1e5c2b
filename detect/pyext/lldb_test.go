package pyext

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

func TestFindLLDB(t *testing.T) {
	dir := tree(t, map[string]string{
		"venv/lib/python3.11/site-packages/other.py":                               "",
		"usr/lib/python3/dist-packages/cpython_lldb.py":                            "import lldb\n\ndef __lldb_init_module(debugger, internal_dict):\n    pass\n",
		"usr/lib/python3/dist-packages/cpython_lldb-0.3.3.dist-info/METADATA":      "Name: cpython-lldb\n",
		"home/.local/lib/python3.11/site-packages/cpython_lldb/__init__.py":        "from .commands import *  # lldb\n",
		"bogus/cpython_lldb.py":                                                    "print('hi')\n",
		"home/.local/lib/python3.11/site-packages/cpython_lldb-0.3.2.dist-info/x/": "",
	})
	sp := func(p ...string) []string {
		var out []string
		for _, x := range p {
			out = append(out, filepath.Join(dir, x))
		}
		return out
	}
	got, tried, err := FindLLDB(Input{Version: "3.11.2", UID: os.Getuid()}, sp("venv/lib/python3.11/site-packages", "bogus", "usr/lib/python3/dist-packages"))
	if err != nil || got == nil {
		t.Fatalf("FindLLDB = %+v, %v; tried %q", got, err, tried)
	}
	want := &Extension{Path: filepath.Join(dir, "usr/lib/python3/dist-packages/cpython_lldb.py"), Version: "0.3.3", Source: SourceSitePackage, VersionMatch: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if len(tried) != 4 || !containsPrefix(tried, filepath.Join(dir, "bogus/cpython_lldb.py")+": not the cpython_lldb module") {
		t.Errorf("tried %q", tried)
	}

	got, _, _ = FindLLDB(Input{Version: "3.11", UID: os.Getuid()}, sp("home/.local/lib/python3.11/site-packages"))
	if got == nil || got.Path != filepath.Join(dir, "home/.local/lib/python3.11/site-packages/cpython_lldb/__init__.py") || got.Version != "0.3.2" {
		t.Errorf("package form: got %+v", got)
	}

	got, tried, err = FindLLDB(Input{Version: "3.11", UID: os.Getuid()}, sp("venv/lib/python3.11/site-packages", "nonexistent"))
	if got != nil || err != nil || len(tried) != 4 {
		t.Errorf("absent: FindLLDB = %+v, %q, %v; want nil, 4 tried, nil", got, tried, err)
	}
}

func TestSitePackages(t *testing.T) {
	dir := tree(t, map[string]string{
		"venv/lib/python3.11/site-packages/":        "",
		"usr/lib/python3/dist-packages/":            "",
		"usr/lib64/python3.11/site-packages/":       "",
		"usr/lib/python3.10/site-packages/":         "",
		"home/.local/lib/python3.11/site-packages/": "",
	})
	got := SitePackages([]string{filepath.Join(dir, "venv"), filepath.Join(dir, "usr"), filepath.Join(dir, "venv")}, "3.11.2", filepath.Join(dir, "home"))
	want := []string{
		filepath.Join(dir, "venv/lib/python3.11/site-packages"),
		filepath.Join(dir, "usr/lib64/python3.11/site-packages"),
		filepath.Join(dir, "usr/lib/python3/dist-packages"),
		filepath.Join(dir, "home/.local/lib/python3.11/site-packages"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := SitePackages([]string{"/usr"}, "", ""); got != nil {
		t.Errorf("no version: got %q", got)
	}
}

// TestSecurityLLDBRefusesUntrusted: lldb imports the module, so one that
// another user could change is refused and the next place is tried.
func TestSecurityLLDBRefusesUntrusted(t *testing.T) {
	testenv.NeedRoot(t, "to give a module to another uid")
	dir := tree(t, map[string]string{
		"a/cpython_lldb.py": "import lldb\n",
		"b/cpython_lldb.py": "import lldb\n",
	})
	bad := filepath.Join(dir, "a/cpython_lldb.py")
	if err := os.Chown(bad, 65534, -1); err != nil {
		t.Fatal(err)
	}
	got, tried, _ := FindLLDB(Input{Version: "3.11", UID: 0}, []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")})
	if got == nil || got.Path != filepath.Join(dir, "b/cpython_lldb.py") {
		t.Errorf("got %+v, want the module in b", got)
	}
	want := bad + ": refused: it is owned by uid 65534, and lldb would run it"
	if len(tried) == 0 || tried[0] != want {
		t.Errorf("tried %q, want %q first", tried, want)
	}
}
