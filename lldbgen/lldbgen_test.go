package lldbgen

import (
	"bytes"
	"errors"
	"flag"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func fullPlan() plan.Plan {
	return plan.Plan{
		Target:  "/srv/app/.venv/bin/python",
		PID:     4242,
		Program: "/usr/bin/python3.11",
		Sysroot: "/proc/4242/root",
		DebugDirs: []string{
			"/usr/lib/debug",
			"/home/me/.local/share/pyattach/debug",
			"/tmp/odd dir/with \"quotes\" and 'single' and `1+2` and \\back",
		},
		SymbolFiles: []plan.SymbolFile{
			{Module: "/srv/app/.venv/lib/python3.11/site-packages/ddtrace/_stack.so", File: "/home/me/.local/share/pyattach/debug/.build-id/ab/cdef.debug"},
		},
		LLDBExtension:  "/usr/lib/python3/dist-packages/cpython_lldb.py",
		LLDBPythonPath: "/usr/lib/llvm-14/lib/python3.11/dist-packages",
		SourceMap: []plan.SourceRule{
			{From: "/build/reproducible-path/python3.11-3.11.2/build-static", To: "/usr/src/python3.11/Python"},
			{From: "/project/build", To: "/home/me/src/echion"},
		},
		Debuginfod: plan.Debuginfod{Enabled: true, URLs: []string{"https://debuginfod.debian.net"}},
		Fast:       true,
		FastLibs:   []string{"libpython3\\.11", "libc\\.so"},
		Findings: []string{
			"interpreter: /usr/bin/python3.11 (build-id c561f3aa), via pyvenv.cfg",
			"evil finding\nsettings set target.x 1\r\x00\x1b[31m\u2028end",
		},
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", name+".golden"), got, *update, "./lldbgen")
}

func TestGolden(t *testing.T) {
	cases := map[string]plan.Plan{
		"full":    fullPlan(),
		"empty":   {},
		"minimal": {Target: "1234", PID: 1234, DebugDirs: []string{"/usr/lib/debug"}},
		"foreign": {Target: "1234", PID: 1234, LLDBRoot: "/proc/1234/root", LLDBExe: "/usr/bin/python3.13",
			Foreign: []string{"process 1234 runs in another root (/proc/1234/root): the container wrote every file there, whoever owns it"}},
		// A Mach-O module read on Linux: its .dSYM's DWARF file by UUID,
		// the echion build directory mapped onto a checkout.
		"macho": {Target: "/srv/site-packages/_stack_v2.cpython-313-darwin.so",
			SymbolFiles: []plan.SymbolFile{{Module: "/srv/site-packages/_stack_v2.cpython-313-darwin.so",
				File: "/home/me/.local/share/pyattach/debug/dsym/4C4C4471-5555-3144-A1B1-371B07785887/_stack_v2.cpython-313-darwin.so.dSYM/Contents/Resources/DWARF/_stack_v2.cpython-313-darwin.so",
				UUID: "4C4C4471-5555-3144-A1B1-371B07785887"}},
			SourceMap: []plan.SourceRule{{From: "/project/build/cmake.macosx-11-x86_64-cpython-313/_deps/echion-src", To: "/home/me/src/echion"}}},
		// A python-build-standalone interpreter without a build-id: its
		// unstripped twins named for their modules (--shlib).
		"content": {Target: "4242", PID: 4242,
			SymbolFiles: []plan.SymbolFile{
				{Module: "/srv/app/.venv/bin/python", File: "/home/me/debug/pbs/python/install/bin/python3.12", ByContent: true},
				{Module: "/home/me/.local/share/uv/python/cpython-3.12.8-linux-x86_64-gnu/lib/libpython3.12.so.1.0", File: "/home/me/debug/pbs/python/install/lib/libpython3.12.so.1.0", ByContent: true},
			}},
		// An unpacked bundle: its libraries under a sysroot.
		"bundle": {Target: "/home/me/.cache/pyattach/bundles/0f3a/core", Core: "/home/me/.cache/pyattach/bundles/0f3a/core",
			LLDBCoreSysroot: "/home/me/.cache/pyattach/bundles/0f3a/root",
			SolibSearchPath: []string{"/home/me/.cache/pyattach/bundles/0f3a/root/usr/lib/x86_64-linux-gnu"}},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Generate(p)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".before.lldb", s.Before)
			golden(t, name+".after.lldb", s.After)
			var b bytes.Buffer
			if err := Write(&b, p); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".lldbinit", b.String())
			// Deterministic.
			s2, _ := Generate(p)
			if s2 != s {
				t.Error("two runs differ")
			}
		})
	}
}

// TestCommentsStayComments checks that no header text starts a line of
// its own: every line of the generated files is a comment or one of the
// commands the package emits.
func TestCommentsStayComments(t *testing.T) {
	s, err := Generate(fullPlan())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, fullPlan()); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{s.Before, s.After, b.String()} {
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			ok := strings.HasPrefix(line, "# ") ||
				strings.HasPrefix(line, "settings ") ||
				strings.HasPrefix(line, "command script import -- ") ||
				strings.HasPrefix(line, "target symbols add -- ")
			if !ok {
				t.Errorf("unexpected line %q", line)
			}
			if strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
				t.Errorf("control character in %q", line)
			}
		}
	}
}

func TestQuote(t *testing.T) {
	cases := map[string]string{
		`/a b`:     `"/a b"`,
		`/a"b`:     `"/a\"b"`,
		`/a\b`:     `"/a\\b"`,
		"/a`1+2`b": "\"/a\\`1+2\\`b\"",
		"/a\\`b":   "\"/a\\\\\\`b\"",
		`/a'b$c#;`: `"/a'b$c#;"`,
		"-x\té":    "\"-x\té\"",
	}
	for in, want := range cases {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRefused(t *testing.T) {
	bad := []string{
		"/a\nb", "/a\x00b", "/a\rb", "/a\x1bb", "/a\x7fb", "/a\u0085b",
		"", "~/x", "~root/x", "/a/../b", "../b",
	}
	for _, p := range bad {
		plans := map[string]plan.Plan{
			"debug dir":    {DebugDirs: []string{"/ok", p}},
			"symbol file":  {SymbolFiles: []plan.SymbolFile{{Module: "/m", File: p}}},
			"extension":    {LLDBExtension: p},
			"map from":     {SourceMap: []plan.SourceRule{{From: p, To: "/x"}}},
			"map to":       {SourceMap: []plan.SourceRule{{From: "/x", To: p}}},
			"python path":  {LLDBPythonPath: p},
			"root":         {PID: 1, LLDBRoot: p, LLDBExe: "/usr/bin/python3"},
			"root exe":     {PID: 1, LLDBRoot: "/proc/1/root", LLDBExe: p},
			"root debug":   {PID: 1, LLDBRoot: "/proc/1/root", LLDBExe: "/usr/bin/python3", LLDBDebugDirs: []string{p}},
			"core sysroot": {Core: "/c", LLDBCoreSysroot: p},
		}
		if p == "" {
			// "" means none for these three.
			delete(plans, "extension")
			delete(plans, "python path")
			delete(plans, "root")
			delete(plans, "core sysroot")
		}
		for what, pl := range plans {
			_, err := Generate(pl)
			if err == nil {
				t.Errorf("%s %q: Generate accepted it", what, p)
				continue
			}
			if !errors.Is(err, ErrUnsafePath) {
				t.Errorf("%s %q: error %v is not ErrUnsafePath", what, p, err)
			}
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != p {
				t.Errorf("%s %q: error %v does not name the path", what, p, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(p)) {
				t.Errorf("%s %q: error %q lacks %s", what, p, err, strconv.Quote(p))
			}
			var b bytes.Buffer
			if err := Write(&b, pl); err == nil || b.Len() != 0 {
				t.Errorf("%s %q: Write wrote %d bytes, err %v", what, p, b.Len(), err)
			}
		}
	}
}

// TestRootTarget: a process whose files lldb reads under its root (a
// pivot_root container) gets its debug directories there, a target
// made from its own executable without dependents, and "/" mapped to
// the root, before anything that could need the target.
func TestRootTarget(t *testing.T) {
	p := plan.Plan{PID: 4242, LLDBRoot: "/proc/4242/root", LLDBExe: "/usr/bin/python3.14",
		LLDBDebugDirs: []string{"/proc/4242/root/usr/lib/debug"},
		Walker:        &plan.Walker{Dir: "/w", Version: "3.14.0", Root: "/proc/4242/root"}}
	s, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`settings append target.debug-file-search-paths "/proc/4242/root/usr/lib/debug"`,
		`target create --no-dependents -- "/proc/4242/root/usr/bin/python3.14"`,
		`script lldb.debugger.GetSelectedTarget().GetModuleAtIndex(0).SetPlatformFileSpec(lldb.SBFileSpec("/usr/bin/python3.14", False))`,
		`target modules search-paths add "/" "/proc/4242/root"`,
		`command script import -- "/w/pyattach_lldb.py"`,
		`script pyattach_lldb.escape_thread_names(lldb.debugger)`,
		`script pyattach_lldb.bt_frames(lldb.debugger)`,
	}
	last := -1
	for _, w := range want {
		i := strings.Index(s.Before, "\n"+w+"\n")
		if i < 0 || i < last {
			t.Errorf("lacks or misplaces %q:\n%s", w, s.Before)
		}
		last = i
	}
	if _, err := Generate(plan.Plan{LLDBRoot: "/proc/1/root", LLDBExe: "/usr/bin/python3"}); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("a root without a process: %v, want ErrUnsafePath", err)
	}
}

// TestWalkerAfterTarget: with the walker, the script run once the
// target exists calls bt_frames again (lldb 22+ registers its frame
// provider in that target), after the symbol files; an init file, run
// before any target, lists that command to run by hand; without the
// walker there is none.
func TestWalkerAfterTarget(t *testing.T) {
	const cmd = "script pyattach_lldb.bt_frames(lldb.debugger)"
	p := plan.Plan{PID: 4242, Walker: &plan.Walker{Dir: "/w", Version: "3.14.0"},
		SymbolFiles: []plan.SymbolFile{{File: "/d/python.debug"}}}
	s, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	sym := strings.Index(s.After, "\ntarget symbols add -- \"/d/python.debug\"\n")
	if i := strings.Index(s.After, "\n"+cmd+"\n"); i < 0 || sym < 0 || i < sym {
		t.Errorf("after: want the symbol file, then %q:\n%s", cmd, s.After)
	}
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n#   "+cmd+"\n") {
		t.Errorf("init file: want %q among the commands to run once the target exists:\n%s", cmd, b.String())
	}
	p.Walker = nil
	if s, err = Generate(p); err != nil || strings.Contains(s.After, cmd) {
		t.Errorf("without the walker: %v\n%s", err, s.After)
	}
}

func TestRefusedExtensionNames(t *testing.T) {
	for _, p := range []string{
		"/x/semi;x.py", "/x/dot.x.py", "/x/sp x.py", "/x/9lives.py",
		"/x/import.py", "/x/\xff/m.py", "/x/os;open('p','w').py", "/x/é.py",
	} {
		_, err := Generate(plan.Plan{LLDBExtension: p})
		if !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%q: got %v, want ErrUnsafePath", p, err)
		}
	}
	for _, p := range []string{"/x/cpython_lldb.py", "/x/cpython_lldb", "/a b/`x`/_m2.py", "-d/m.py"} {
		if _, err := Generate(plan.Plan{LLDBExtension: p}); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}

func TestPythonPathColon(t *testing.T) {
	_, err := Generate(plan.Plan{LLDBPythonPath: "/a:/b"})
	if !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("got %v", err)
	}
}

func TestEnv(t *testing.T) {
	p := plan.Plan{LLDBPythonPath: "/usr/lib/llvm-14/lib/python3.11/dist-packages"}
	cases := []struct {
		in, want []string
	}{
		{[]string{"HOME=/h"}, []string{"HOME=/h", "PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages"}},
		{[]string{"PYTHONPATH=/mine", "HOME=/h"}, []string{"HOME=/h", "PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages:/mine"}},
		{[]string{"PYTHONPATH=", "HOME=/h"}, []string{"HOME=/h", "PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages"}},
		{[]string{"PYTHONPATH=/a", "PYTHONPATH=/b"}, []string{"PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages:/b"}},
		{nil, []string{"PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages"}},
	}
	for _, c := range cases {
		in := slices.Clone(c.in)
		got := Env(p, c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("Env(%q) = %q, want %q", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("Env changed its input")
		}
	}
	env := []string{"PYTHONPATH=/mine", "A=b"}
	if got := Env(plan.Plan{}, env); !slices.Equal(got, env) {
		t.Errorf("Env without LLDBPythonPath = %q", got)
	}
}

// TestWalkerCreds: a core's user and group reach the walker's setup.
func TestWalkerCreds(t *testing.T) {
	p := plan.Plan{Core: "/c/core", Program: "/usr/bin/python3.11",
		Walker: &plan.Walker{Dir: "/w", Version: "3.11.2", Creds: &plan.Creds{UID: 65534, GID: 100}}}
	s, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "\nscript pyattach_lldb.setup(version=\"3.11.2\", flags=\"\", root=\"\", creds=(65534, 100, ()))\n"
	if !strings.Contains(s.Before, want) {
		t.Errorf("lacks %q:\n%s", want, s.Before)
	}
}
