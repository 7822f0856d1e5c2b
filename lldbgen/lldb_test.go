package lldbgen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/testenv"
)

// lldbPython returns the directory holding lldb's Python package when
// `lldb -P` is wrong (Debian's lldb 14), else "".
func lldbPython(t *testing.T, lldb string) string {
	t.Helper()
	out, err := exec.Command(lldb, "-P").Output()
	if err == nil {
		if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "lldb", "__init__.py")); err == nil {
			return ""
		}
	}
	real, err := filepath.EvalSymlinks(lldb)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(real)), "lib", "python3*", "*-packages", "lldb", "__init__.py"))
	if len(m) == 0 {
		t.Fatalf("lldb -P is wrong and no lldb Python package is beside %s", real)
	}
	return filepath.Dir(filepath.Dir(m[0]))
}

// run runs lldb in batch mode with env and returns its combined output.
func run(t *testing.T, dir string, env []string, lldb string, args ...string) string {
	t.Helper()
	cmd := exec.Command(lldb, append([]string{"-b", "--no-use-colors"}, args...)...)
	cmd.Env = env
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	testenv.WriteFile(t, name, data, 0o644)
}

func TestLLDBPythonPathFix(t *testing.T) {
	lldb := testenv.Need(t, "lldb")
	py := lldbPython(t, lldb)
	if py == "" {
		t.Skip("this lldb's own -P is right; nothing to fix")
	}
	env := os.Environ()
	var clean []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PYTHONPATH=") {
			clean = append(clean, kv)
		}
	}
	out := run(t, t.TempDir(), clean, lldb, "-o", "script print(1+1)")
	if strings.Contains(out, "\n2\n") {
		t.Fatalf("lldb's Python works without the fix; output:\n%s", out)
	}
	out = run(t, t.TempDir(), Env(plan.Plan{LLDBPythonPath: py}, clean), lldb, "-o", "script print(1+1)")
	if !strings.Contains(out, "\n2\n") || strings.Contains(out, "error") {
		t.Fatalf("lldb's Python fails with Env applied; output:\n%s", out)
	}
}

// hostile names, each a directory of its own (names with '/' nest).
func hostileNames(marker string) []string {
	return []string{
		"sp ace",
		`dq"uote`,
		"sq'uote",
		`back\slash`,
		`trail\`,
		`bs-tick\` + "`x",
		"tick`1+2`tick",
		"`(int)system(\"touch " + marker + "\")`",
		"x; platform shell touch " + marker,
		"hash#semi;dollar$HOME~tilde",
		"tab\there",
		"utf8-é-日本",
		"-leading",
		"--",
		"latin1-\xff",
	}
}

type fixture struct {
	lldb, dir, prog, debug string
	buildID                string
	env                    []string
	py                     string
}

// buildFixture compiles a small program and splits its debug information off.
func buildFixture(t *testing.T) fixture {
	lldb := testenv.Need(t, "lldb")
	dir := t.TempDir()
	prog := testenv.CC(t, dir, "prog", "static int helper(int x) { return x + 1; }\nint main(int c, char **v) { return helper(c); }\n",
		"-g", "-O0", "-Wl,--build-id")
	debug := filepath.Join(dir, "prog.debug")
	testenv.SplitDebug(t, prog, debug)
	id := testenv.ReadelfBuildID(t, prog)
	py := lldbPython(t, lldb)
	return fixture{lldb: lldb, dir: dir, prog: prog, debug: debug, buildID: id, py: py,
		env: Env(plan.Plan{LLDBPythonPath: py}, os.Environ())}
}

// files writes s's two halves and returns lldb's arguments for them.
func (f fixture) files(t *testing.T, s Script) []string {
	t.Helper()
	dir := t.TempDir()
	before := filepath.Join(dir, "before.lldb")
	writeFile(t, before, []byte(s.Before))
	args := []string{"-S", before, f.prog}
	if s.After != "" {
		after := filepath.Join(dir, "after.lldb")
		writeFile(t, after, []byte(s.After))
		args = append(args, "-s", after)
	}
	return args
}

func TestHostilePathsRealLLDB(t *testing.T) {
	f := buildFixture(t)
	marker := filepath.Join(f.dir, "PWNED")
	root := filepath.Join(f.dir, "h")

	var dirs []string
	var srcmap []plan.SourceRule
	for _, n := range hostileNames(marker) {
		d := filepath.Join(root, n)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
		srcmap = append(srcmap, plan.SourceRule{From: "/build/" + n, To: d})
	}
	// The debug file only in the last hostile debug directory's
	// build-id tree: lldb finds it only if that path arrived intact.
	all := filepath.Join(root, strings.Join(hostileNames(marker), "/"))
	bid := filepath.Join(all, ".build-id", f.buildID[:2], f.buildID[2:]+".debug")
	data, err := os.ReadFile(f.debug)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, bid, data)
	dirs = append(dirs, all)

	// lldb hands the extension's directory to Python as text: Generate
	// refuses invalid UTF-8 there, so the extension sits one level up.
	ext := filepath.Join(filepath.Dir(all), "probe_ext.py")
	writeFile(t, ext, []byte(`import lldb

def probe(debugger, command, result, internal_dict):
    result.AppendMessage("probe-ok")

def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand("command script add -f probe_ext.probe pyattach_probe")
`))

	p := plan.Plan{
		Target:         f.prog,
		Program:        f.prog,
		DebugDirs:      dirs,
		SourceMap:      srcmap,
		LLDBExtension:  ext,
		LLDBPythonPath: f.py,
		Fast:           true,
		Findings:       []string{"finding with `platform shell touch " + marker + "`"},
	}
	s, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	args := append(f.files(t, s),
		"-o", "settings show target.debug-file-search-paths",
		"-o", "settings show target.source-map",
		"-o", "settings show target.preload-symbols",
		"-o", "image lookup -n helper",
		"-o", "pyattach_probe",
	)
	out := run(t, f.dir, f.env, f.lldb, args...)
	if strings.Contains(out, "error") {
		t.Errorf("lldb reported an error:\n%s", out)
	}
	for i, d := range dirs {
		if !listed(out, fmt.Sprintf("[%d]: %s", i, d)) {
			t.Errorf("debug directory %q not listed as given", d)
		}
	}
	for i, r := range srcmap {
		if !strings.Contains(out, fmt.Sprintf("[%d] \"%s\" -> \"%s\"\n", i, r.From, r.To)) {
			t.Errorf("source-map pair %q -> %q not listed as given", r.From, r.To)
		}
	}
	if !strings.Contains(out, "target.preload-symbols (boolean) = false") {
		t.Error("preload-symbols not turned off")
	}
	if !strings.Contains(out, "Summary: prog`helper at prog.c:1") {
		t.Error("the debug file in the hostile debug directory was not found")
	}
	if !strings.Contains(out, "probe-ok") {
		t.Error("the extension at a hostile path did not register its command")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("an injected command ran")
	}
	if t.Failed() {
		t.Logf("before:\n%s\nlldb output:\n%s", s.Before, out)
	}
}

// listed reports whether lldb's file-list dump holds item as a whole
// entry (lldb 14 prints the entries on one line, two spaces apart).
func listed(out, item string) bool {
	for rest := out; ; {
		i := strings.Index(rest, item)
		if i < 0 {
			return false
		}
		next := rest[i+len(item):]
		if next == "" || strings.HasPrefix(next, "\n") || strings.HasPrefix(next, "  [") {
			return true
		}
		rest = rest[i+1:]
	}
}

func TestSymbolFileHostilePathRealLLDB(t *testing.T) {
	f := buildFixture(t)
	marker := filepath.Join(f.dir, "PWNED")
	for _, n := range hostileNames(marker) {
		t.Run(strings.Map(func(r rune) rune {
			if r < 0x20 {
				return '_'
			}
			return r
		}, n), func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(f.dir, "s", n, "-"+n+".debug")
			data, err := os.ReadFile(f.debug)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, file, data)
			s, err := Generate(plan.Plan{Program: f.prog, SymbolFiles: []plan.SymbolFile{{Module: f.prog, File: file}}})
			if err != nil {
				t.Fatal(err)
			}
			out := run(t, f.dir, f.env, f.lldb, append(f.files(t, s), "-o", "image lookup -n helper")...)
			if !strings.Contains(out, "symbol file '"+file+"' has been added to '"+f.prog+"'") {
				t.Errorf("symbol file not added by its exact path; after:\n%s\noutput:\n%s", s.After, out)
			}
			if !strings.Contains(out, "Summary: prog`helper at prog.c:1") {
				t.Errorf("no line information after adding the symbol file:\n%s", out)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("an injected command ran")
			}
		})
	}
}

func TestSymbolFileMismatchRealLLDB(t *testing.T) {
	f := buildFixture(t)
	other := filepath.Join(f.dir, "other.debug")
	// A different program's debug file must not be paired with prog.
	src := filepath.Join(f.dir, "o.c")
	writeFile(t, src, []byte("int main(void) { return 3; }\n"))
	if out, err := exec.Command("gcc", "-g", "-Wl,--build-id", "-o", other, src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s, err := Generate(plan.Plan{SymbolFiles: []plan.SymbolFile{{Module: f.prog, File: other}}})
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, f.dir, f.env, f.lldb, f.files(t, s)...)
	if !strings.Contains(out, "does not match any existing module") {
		t.Errorf("lldb accepted a debug file of another build:\n%s", out)
	}
}

// TestLLDBInitRealLLDB checks Write's file as a project .lldbinit: read
// only when ~/.lldbinit allows it, and then its settings apply.
func TestLLDBInitRealLLDB(t *testing.T) {
	f := buildFixture(t)
	home := filepath.Join(f.dir, "home")
	proj := filepath.Join(f.dir, "proj `1+2` 'x'")
	debugDir := filepath.Join(proj, "debug dir")
	if err := os.MkdirAll(debugDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := plan.Plan{DebugDirs: []string{debugDir}, SymbolFiles: []plan.SymbolFile{{Module: f.prog, File: f.debug}}}
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, ".lldbinit"), b.Bytes())
	env := append(Env(plan.Plan{LLDBPythonPath: f.py}, os.Environ()), "HOME="+home)

	writeFile(t, filepath.Join(home, ".lldbinit"), nil)
	out := run(t, proj, env, f.lldb, "-o", "settings show target.debug-file-search-paths")
	if !strings.Contains(out, "not being read") || listed(out, "[0]: "+debugDir) {
		t.Errorf("without load-cwd-lldbinit lldb should skip ./.lldbinit:\n%s", out)
	}

	writeFile(t, filepath.Join(home, ".lldbinit"), []byte("settings set target.load-cwd-lldbinit true\n"))
	out = run(t, proj, env, f.lldb, "-o", "settings show target.debug-file-search-paths")
	if !listed(out, "[0]: "+debugDir) || strings.Contains(out, "error") {
		t.Errorf("with load-cwd-lldbinit the project .lldbinit should apply:\n%s", out)
	}
}

// TestProjectTrustRealLLDB: with ProjectTrust's line in ~/.lldbinit, lldb
// started in the project directory, whatever its name, reads its
// .lldbinit once and does not warn; started in another directory, it
// does not read it. No backtick in a name is evaluated.
func TestProjectTrustRealLLDB(t *testing.T) {
	lldb := testenv.Need(t, "lldb")
	base := t.TempDir()
	marker := filepath.Join(base, "MARKER")
	env := Env(plan.Plan{LLDBPythonPath: lldbPython(t, lldb)}, os.Environ())
	for i, name := range hostileNames(marker) {
		dir := filepath.Join(base, strconv.Itoa(i), name)
		line, err := ProjectTrust(dir)
		if !utf8.ValidString(name) {
			if err == nil {
				t.Errorf("%q: invalid UTF-8 accepted", name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", name, err)
			continue
		}
		home := t.TempDir()
		writeFile(t, filepath.Join(home, ".lldbinit"), []byte(line+"\n"))
		writeFile(t, filepath.Join(dir, ".lldbinit"), []byte("script print('READ-' + 'PROJECT')\n"))
		henv := append(env[:len(env):len(env)], "HOME="+home)
		out := run(t, dir, henv, lldb, "-o", "script print('started')")
		if n := strings.Count(out, "READ-PROJECT"); n != 1 || strings.Contains(out, "not being read") || !strings.Contains(out, "started") {
			t.Errorf("%q: started in the project: read %d times, want 1, and no warning:\n%s", name, n, out)
		}
		if i > 0 {
			continue // one check elsewhere is enough: the condition does not depend on the name
		}
		out = run(t, filepath.Dir(dir), henv, lldb, "-o", "script print('started')")
		if strings.Contains(out, "READ-PROJECT") || !strings.Contains(out, "started") {
			t.Errorf("%q: started elsewhere, lldb read the project file:\n%s", name, out)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a backtick in a project name was evaluated")
	}
	for _, bad := range []string{"rel/dir", "/a/../b", "/a\nb", "~/p", ""} {
		if _, err := ProjectTrust(bad); err == nil {
			t.Errorf("ProjectTrust(%q) accepted", bad)
		}
	}
}
