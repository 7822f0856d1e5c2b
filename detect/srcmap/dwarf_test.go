package srcmap

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/srcscan"
	"github.com/pyattach/pyattach/detect/testenv"
)

// gccFixture builds a shared object the way a CMake FetchContent build in
// a manylinux container does: the absolute source path is compiled in a
// separate build directory, both remapped with -fdebug-prefix-map onto
// /project/build/.../_deps/echion-src and its build directory. The unit
// uses va_list, so gcc also records "<built-in>". It returns the paths
// srcscan lists.
func gccFixture(t *testing.T, dwarf string) []string {
	t.Helper()
	gcc := testenv.Need(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	build := filepath.Join(dir, "build")
	for name, body := range map[string]string{
		"echion/frame.c": "#include <stdarg.h>\n#include \"frame.h\"\n" +
			"int frame(int n, ...) { va_list a; va_start(a, n); int x = va_arg(a, int); va_end(a); return twice(x); }\n",
		"echion/frame.h": "static inline int twice(int x) { return x * 2; }\n",
	} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	stackV2 := strings.TrimSuffix(echionPrefix, "/_deps/echion-src")
	cmd := exec.Command(gcc, dwarf, "-shared", "-nostdlib", "-fPIC",
		"-fdebug-prefix-map="+src+"="+echionPrefix,
		"-fdebug-prefix-map="+build+"="+stackV2,
		"-o", "frame.so", filepath.Join(src, "echion/frame.c"))
	cmd.Dir = build
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	res, err := srcscan.ScanFile(filepath.Join(build, "frame.so"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Units) != 1 || res.Units[0].Name != echionPrefix+"/echion/frame.c" || res.Units[0].CompDir != stackV2 {
		t.Fatalf("fixture: units %+v", res.Units)
	}
	return res.Files
}

// TestAbsoluteUnitNameGroups: a unit whose DW_AT_name is absolute gives
// one group, the FetchContent tree, and one rule onto a checkout; no
// group or rule for the build directory glued in front of the name, and
// none for "<built-in>".
func TestAbsoluteUnitNameGroups(t *testing.T) {
	for _, dwarf := range []string{"-gdwarf-4", "-gdwarf-5"} {
		t.Run(dwarf, func(t *testing.T) {
			files := gccFixture(t, dwarf)
			want := []Group{{
				Prefix: echionPrefix, Layout: LayoutFetchContent, Name: "echion",
				Files: []string{echionPrefix + "/echion/frame.c", echionPrefix + "/echion/frame.h"},
			}}
			groups := GroupPaths(Missing(files, FileExists))
			if !reflect.DeepEqual(groups, want) {
				t.Fatalf("groups:\n got %+v\nwant %+v\nfrom files %q", groups, want, files)
			}
			co := tree(t, "echion/frame.c", "echion/frame.h")
			rules, unres := infer(t, files, Root{Dir: co})
			wantRules := []Rule{{From: echionPrefix, To: co, Resolved: 2, Total: 2}}
			if !reflect.DeepEqual(rules, wantRules) {
				t.Errorf("rules:\n got %+v\nwant %+v", rules, wantRules)
			}
			if len(unres) != 0 {
				t.Errorf("unresolved: %+v", unres)
			}
			// Without a checkout nothing names a pseudo-file to fetch.
			_, unres = infer(t, files)
			for _, u := range unres {
				if strings.Contains(u.Prefix, "<") || strings.Contains(u.Prefix, "//") {
					t.Errorf("unresolved group %q", u.Prefix)
				}
			}
		})
	}
}
