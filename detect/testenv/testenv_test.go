package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"3.9.18", "3.10.1", true}, {"3.10.1", "3.9.18", false}, {"3.12", "3.12.1", true}, {"3.12.1", "3.12.1", false},
	} {
		if got := versionLess(c.a, c.b); got != c.want {
			t.Errorf("versionLess(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

// The version Debian reports is the one its interpreter prints.
func TestDebianVersionIsRun(t *testing.T) {
	p := Debian(t)
	out, err := exec.Command(p.Exe, "-V").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "Python "+p.Version || p.Minor() != "3.11" {
		t.Errorf("%s -V says %q; Probe %+v", p.Exe, got, p)
	}
}

func TestPyenvDiscovery(t *testing.T) {
	all := PyenvAll(t)
	for i, p := range all {
		if i > 0 && versionLess(p.Version, all[i-1].Version) {
			t.Errorf("not sorted: %s after %s", p.Version, all[i-1].Version)
		}
		if !strings.HasPrefix(p.Exe, PyenvRoot()) || !strings.HasSuffix(p.Exe, "python"+p.Minor()) {
			t.Errorf("%+v", p)
		}
	}
	newest := all[len(all)-1]
	if got := Pyenv(t, newest.Minor()); got.Minor() != newest.Minor() {
		t.Errorf("Pyenv(%s) = %+v", newest.Minor(), got)
	}
}

func TestStartPython(t *testing.T) {
	p := Debian(t)
	pid := StartPython(t, p.Exe, "")
	if pid <= 0 {
		t.Fatalf("pid %d", pid)
	}
}

func TestListTree(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "c"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := ListTree(t, dir), []string{"a/", "a/b", "c/"}; !slices.Equal(got, want) {
		t.Errorf("ListTree = %q, want %q", got, want)
	}
	if got := ListTree(t, filepath.Join(dir, "absent")); got != nil {
		t.Errorf("ListTree of a missing directory = %q", got)
	}
}

// recorder is a testing.TB that records what Errorf reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestCases(t *testing.T) {
	r := &recorder{TB: t}
	Cases(r, "strings.ToUpper", strings.ToUpper, map[string]string{"a": "A", "": "", "b": "b"})
	if want := []string{`strings.ToUpper("b") = "B", want "b"`}; !slices.Equal(r.errs, want) {
		t.Errorf("Cases reported %q, want %q", r.errs, want)
	}
}

// stopper is a testing.TB whose Fatalf and Skip end the goroutine, as
// the real ones do, and record that they did.
type stopper struct {
	testing.TB
	fatal, skipped bool
}

func (s *stopper) Helper()               {}
func (s *stopper) Logf(string, ...any)   {}
func (s *stopper) Errorf(string, ...any) { s.fatal = true }
func (s *stopper) Fatalf(string, ...any) { s.fatal = true; runtime.Goexit() }
func (s *stopper) Skip(...any)           { s.skipped = true; runtime.Goexit() }

// runTB runs f with a stopper in its own goroutine, as a test runs.
func runTB(t *testing.T, f func(testing.TB)) *stopper {
	s := &stopper{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(s)
	}()
	<-done
	return s
}

// TestRootsNoneUsable: a versions file that leaves every version out
// gives no root to test: Missing (a failure under CI=true), never an
// empty list a test would range over and pass.
func TestRootsNoneUsable(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PYATTACH_ROOTS", dir)
	WriteFile(t, filepath.Join(dir, "versions"), []byte("3.14 - the mirror does not serve python3.14\n3.15 - the mirror does not serve python3.15\n"), 0o644)
	var got []Root
	t.Setenv("CI", "true")
	if s := runTB(t, func(tb testing.TB) { got = Roots(tb) }); !s.fatal {
		t.Errorf("CI=true: Roots = %v and did not fail", got)
	}
	t.Setenv("CI", "")
	if s := runTB(t, func(tb testing.TB) { got = Roots(tb) }); !s.skipped {
		t.Errorf("Roots = %v and did not skip", got)
	}

	// One usable root is enough.
	WriteFile(t, filepath.Join(dir, "trixie", "pyattach-stamp"), nil, 0o644)
	WriteFile(t, filepath.Join(dir, "versions"), []byte("3.13 trixie\n3.14 - the mirror does not serve python3.14\n"), 0o644)
	t.Setenv("CI", "true")
	s := runTB(t, func(tb testing.TB) { got = Roots(tb) })
	if s.fatal || s.skipped || len(got) != 1 || got[0].Minor != "3.13" || got[0].Dir != filepath.Join(dir, "trixie") {
		t.Errorf("Roots = %+v (failed %v, skipped %v), want the 3.13 root", got, s.fatal, s.skipped)
	}
}

// No test skips on its own: a skip goes through Missing (which fails
// under CI=true), Platform or Short, so that each says why in one way.
func TestNoBareSkips(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs(".")
	bare := regexp.MustCompile(`\.(Skip|Skipf|SkipNow)\(`)
	files := 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (p == self || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, l := range strings.Split(string(b), "\n") {
			if bare.MatchString(l) {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d skips without testenv (Missing, Platform or Short): %s", rel, i+1, strings.TrimSpace(l))
			}
		}
		return nil
	})
	if files < 50 {
		t.Errorf("found %d test files under %s: not the module's root?", files, root)
	}
}
