package gdbgen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/plan/pyquote"
	"github.com/pyattach/pyattach/detect/testenv"
)

// runGDB writes s to files, runs gdb -nx -batch -ix early -x late with
// the extra -ex commands, and returns its combined output.
func runGDB(t *testing.T, s Script, dir string, ex ...string) string {
	t.Helper()
	gdb := testenv.Need(t, "gdb")
	early := filepath.Join(dir, "early.gdb")
	late := filepath.Join(dir, "late.gdb")
	if err := os.WriteFile(early, []byte(s.Early), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(late, []byte(s.Late), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-nx", "-batch", "-ix", early, "-x", late}
	for _, e := range ex {
		args = append(args, "-ex", e)
	}
	cmd := exec.Command(gdb, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "HOME="+dir, "DEBUGINFOD_URLS=")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// fixture is a PIE program built with -g, stripped of its DWARF, and its
// separate debug file, built once per test run.
var fixture struct {
	once      sync.Once
	prog, dbg string
	err       error
}

func buildFixture(t *testing.T) (prog, debug string) {
	t.Helper()
	for _, tool := range []string{"gcc", "objcopy"} {
		testenv.Need(t, tool)
	}
	fixture.once.Do(func() {
		// Kept for the whole run: t.TempDir would go with this test.
		dir, err := os.MkdirTemp("", "gdbgen-fixture")
		if err != nil {
			fixture.err = err
			return
		}
		fixture.prog = testenv.CC(t, dir, "prog", "int mainfunc(int y) { return y + 3; }\nint main(void) { return mainfunc(1); }\n",
			"-g", "-O0", "-Wl,--build-id")
		dbg := filepath.Join(dir, "prog.debug")
		testenv.SplitDebug(t, fixture.prog, dbg)
		fixture.dbg = dbg
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	if fixture.dbg == "" {
		t.Fatal("the fixture could not be built (see the first test that needed it)")
	}
	return fixture.prog, fixture.dbg
}

// probeExtension defines a gdb command NAME that prints the file it was
// loaded from.
func probeExtension(name string) string {
	return "import gdb\n_f = __file__\n" +
		"class _Probe(gdb.Command):\n" +
		"    def __init__(self, f):\n" +
		"        super().__init__(" + pyquote.String(name) + ", gdb.COMMAND_USER)\n" +
		"        self.f = f\n" +
		"    def invoke(self, arg, from_tty):\n" +
		"        print(" + pyquote.String(name+"=") + " + self.f)\n" +
		"_Probe(_f)\n"
}

// hostile are directory names gdb must be given exactly.
var hostile = []string{
	"a b",
	`dq"uote`,
	"sq'uote",
	`back\slash`,
	`ends\`,
	"ends ",
	"h#sh",
	"semi;colon",
	"$HOME",
	"~user",
	"~",
	"tab\there",
	"ünï cødé",
	"-lead",
	"end",
	"[g]l*b?",
	"$datadir",
	"$(touch PWNED)",
	"; shell touch PWNED",
	"`touch PWNED`",
	`"); import os; os.system("touch PWNED"); ("`,
	"ends ~",
}

// TestHostilePathsInGDB gives every command a path under a hostile
// directory name and reads back from gdb what it holds.
func TestHostilePathsInGDB(t *testing.T) {
	testenv.Need(t, "gdb")
	prog, debug := buildFixture(t)
	for _, name := range hostile {
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			d := filepath.Join(work, name)
			for _, sub := range []string{"d", "root", "src"} {
				if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p := plan.Plan{
				Target:       d,
				Core:         "core", // makes the script load Program itself
				Program:      filepath.Join(d, "prog"),
				DebugDirs:    []string{filepath.Join(d, "d")},
				Sysroot:      filepath.Join(d, "root"),
				SourceMap:    []plan.SourceRule{{From: "/build/" + name, To: filepath.Join(d, "src")}},
				GDBAutoLoad:  []string{filepath.Join(d, "prog-gdb.py")},
				GDBExtension: filepath.Join(d, "ext.py"),
				SymbolFiles:  []plan.SymbolFile{{Module: filepath.Join(d, "prog"), File: filepath.Join(d, "prog.debug")}},
				Findings:     []string{"dir " + d},
			}
			testenv.CopyFile(t, prog, p.Program, 0o755)
			testenv.CopyFile(t, debug, p.SymbolFiles[0].File, 0o644)
			if err := os.WriteFile(p.GDBAutoLoad[0], []byte(probeExtension("probe-autoload")), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p.GDBExtension, []byte(probeExtension("py-bt-probe")), 0o644); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(name, " ~") {
				// gdb expands "~" after a blank in file names: the file
				// commands are refused, substitute-path and the extension
				// are not.
				if _, err := Generate(p); err == nil {
					t.Fatalf("Generate accepted %q", p.Program)
				}
				p.Program, p.Core, p.DebugDirs, p.Sysroot, p.GDBAutoLoad, p.SymbolFiles = "", "", nil, "", nil, nil
			}
			s, err := Generate(p)
			if err != nil {
				t.Fatal(err)
			}
			out := runGDB(t, s, work,
				`python print("DBG=" + gdb.parameter("debug-file-directory"))`,
				`python print("SYS=" + gdb.parameter("sysroot"))`,
				`python print("PROG=" + str(gdb.current_progspace().filename))`,
				`python [print("SEP=" + o.filename + " FOR " + o.owner.filename) for o in gdb.objfiles() if o.owner]`,
				"show substitute-path",
				"info auto-load python-scripts",
				"probe-autoload",
				"py-bt-probe",
				"info line mainfunc",
			)
			lines := strings.Split(out, "\n")
			has := func(l string) bool {
				for _, x := range lines {
					if x == l {
						return true
					}
				}
				return false
			}
			want := []string{
				"py-bt-probe=" + p.GDBExtension,
				"  `/build/" + name + "' -> `" + filepath.Join(d, "src") + "'.",
			}
			if p.Program != "" {
				want = append(want,
					"DBG=/usr/lib/debug:"+p.DebugDirs[0],
					"SYS="+p.Sysroot,
					"PROG="+p.Program,
					"SEP="+p.SymbolFiles[0].File+" FOR "+p.Program,
					"probe-autoload="+p.GDBAutoLoad[0],
				)
				if !strings.Contains(out, `Line 1 of "`) {
					t.Errorf("no line information from the separate debug file")
				}
				found := false
				for _, l := range lines {
					if strings.HasPrefix(l, "Yes ") && strings.TrimSpace(strings.TrimPrefix(l, "Yes ")) == p.GDBAutoLoad[0] {
						found = true
					}
				}
				if !found {
					t.Errorf("info auto-load python-scripts does not list %q as loaded", p.GDBAutoLoad[0])
				}
			}
			for _, w := range want {
				if !has(w) {
					t.Errorf("gdb output lacks the line %q", w)
				}
			}
			if t.Failed() {
				t.Logf("early:\n%s\nlate:\n%s\ngdb output:\n%s", s.Early, s.Late, out)
			}
			if _, err := os.Stat(filepath.Join(work, "PWNED")); err == nil {
				t.Errorf("a path ran a command: %s exists", filepath.Join(work, "PWNED"))
			}
		})
	}
}

// TestAutoLoadIsExact checks that a safe-path entry with glob characters
// makes only its own file safe, not its siblings, nor the directory that
// a link named like the escaped entry ("a[*]b") points to: gdb adds the
// realpath of each entry as a further pattern.
func TestAutoLoadIsExact(t *testing.T) {
	testenv.Need(t, "gdb")
	prog, _ := buildFixture(t)
	work := t.TempDir()
	for _, name := range []string{"a*b", "aXb", "evil"} {
		d := filepath.Join(work, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		testenv.CopyFile(t, prog, filepath.Join(d, "prog"), 0o755)
		if err := os.WriteFile(filepath.Join(d, "prog-gdb.py"), []byte(probeExtension("probe-autoload")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("evil", filepath.Join(work, "a[*]b")); err != nil {
		t.Fatal(err)
	}
	for name, wantLoaded := range map[string]bool{"a*b": true, "aXb": false, "evil": false} {
		p := plan.Plan{
			Target:      name,
			Core:        "core",
			Program:     filepath.Join(work, name, "prog"),
			GDBAutoLoad: []string{filepath.Join(work, "a*b", "prog-gdb.py")},
		}
		s, err := Generate(p)
		if err != nil {
			t.Fatal(err)
		}
		out := runGDB(t, s, work, "probe-autoload")
		if got := strings.Contains(out, "probe-autoload="); got != wantLoaded {
			t.Errorf("program in %s: extension auto-loaded = %v, want %v\n%s", name, got, wantLoaded, out)
		}
	}
}

// TestRealCPythonExtension runs CPython's own gdb extension from a
// hostile-named copy and checks that py-bt is defined.
func TestRealCPythonExtension(t *testing.T) {
	testenv.Need(t, "gdb")
	exts, _ := filepath.Glob("/usr/share/gdb/auto-load/usr/bin/python3*-gdb.py")
	if len(exts) == 0 {
		testenv.Missing(t, "no CPython gdb extension in /usr/share/gdb/auto-load/usr/bin (install python3-dbg)")
	}
	work := t.TempDir()
	d := filepath.Join(work, `ünï cødé "q" 'x' ~root $HOME; #`)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	ext := filepath.Join(d, `libpython.py `)
	testenv.CopyFile(t, exts[0], ext, 0o644)
	s, err := Generate(plan.Plan{Target: "x", GDBExtension: ext})
	if err != nil {
		t.Fatal(err)
	}
	out := runGDB(t, s, work, "help py-bt")
	if !strings.Contains(out, "Display the current python frame") {
		t.Errorf("py-bt is not defined after the script:\n%s\nlate:\n%s", out, s.Late)
	}
}

// TestInjection: a line break is refused; everything else is a literal
// file name, and gdb runs no command from it.
func TestInjection(t *testing.T) {
	work := t.TempDir()
	pwned := filepath.Join(work, "pwned")
	if _, err := Generate(plan.Plan{Program: "/tmp/x\nshell touch " + pwned, PID: 1}); err == nil {
		t.Fatal("a newline in a path was accepted")
	}
	var b bytes.Buffer
	if err := Write(&b, plan.Plan{GDBExtension: "/tmp/x\nshell touch " + pwned}); err == nil || b.Len() != 0 {
		t.Fatalf("Write: err %v, %d bytes written", err, b.Len())
	}
	testenv.Need(t, "gdb")
	for _, bad := range []string{
		"/tmp/x; shell touch " + pwned,
		"/tmp/$(touch " + pwned + ")",
		"/tmp/`touch " + pwned + "`",
		`/tmp/x"; shell touch ` + pwned + ` "`,
		`/tmp/x"); __import__("os").system("touch ` + pwned + `"); ("`,
		"/tmp/x\\",
	} {
		p := plan.Plan{
			Target:       bad,
			Core:         "core",
			Program:      bad + "/prog",
			DebugDirs:    []string{bad + "/d"},
			Sysroot:      bad + "/r",
			SourceMap:    []plan.SourceRule{{From: bad, To: bad}},
			GDBAutoLoad:  []string{bad + "/x-gdb.py"},
			GDBExtension: bad,
			SymbolFiles:  []plan.SymbolFile{{Module: bad, File: bad + ".debug"}},
			Findings:     []string{bad},
		}
		s, err := Generate(p)
		if err != nil {
			t.Fatalf("%q: %v", bad, err)
		}
		out := runGDB(t, s, work, "show substitute-path")
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("path %q ran a command\nearly:\n%s\nlate:\n%s\n%s", bad, s.Early, s.Late, out)
		}
		if !strings.Contains(out, "`"+bad+"' -> `"+bad+"'.") {
			t.Errorf("substitute-path did not keep %q\n%s", bad, out)
		}
	}
}

// TestWalkerCreds: a core's user and group reach the walker's setup,
// and the thread names are escaped for every target with a walker.
func TestWalkerCreds(t *testing.T) {
	p := plan.Plan{Core: "/c/core", Program: "/usr/bin/python3.11",
		Walker: &plan.Walker{Dir: "/w", Version: "3.11.2", Creds: &plan.Creds{UID: 65534, GID: 100}}}
	s, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\npyattach_gdb.setup(version=\"3.11.2\", flags=\"\", root=\"\", creds=(65534, 100, ()))\n",
		"\npyattach_gdb.escape_thread_names()\n",
	} {
		if !strings.Contains(s.Early, want) {
			t.Errorf("lacks %q:\n%s", want, s.Early)
		}
	}
	p.Walker.Creds = nil
	if s, _ := Generate(p); strings.Contains(s.Early, "creds=") {
		t.Errorf("creds without a core's owner:\n%s", s.Early)
	}
}
