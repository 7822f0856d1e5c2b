package symbols

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

const (
	systemPython = testenv.DebianPath
	pythonInc    = "/usr/include/python3.11"
	soRel        = "mypkg/_fixture.cpython-311-x86_64-linux-gnu.so"
	entryName    = soRel + ".debug"
	zipBase      = "mypkg-1.2.3-cp311-cp311-linux_x86_64-debug-symbols.zip"
	distInfo     = "mypkg-1.2.3.dist-info"
)

// fixture is built once per test binary: a python3.11 venv with the
// mypkg distribution installed and split by make-debug-zip.sh.
type fixture struct {
	root    string // holds a space, on purpose
	venv    string // the venv
	site    string // its site-packages, with the stripped .so
	unsplit string // the .so as gcc built it (with DWARF)
	zip     string // mypkg-1.2.3-...-debug-symbols.zip
	debug   []byte // the debug file in the zip
	buildID string // the .so's build-id
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  string
	fixRoot string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixRoot != "" {
		os.RemoveAll(fixRoot)
	}
	os.Exit(code)
}

// scriptPath is scripts/make-debug-zip.sh in this checkout.
func scriptPath(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "scripts", "make-debug-zip.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("make-debug-zip.sh: %v", err)
	}
	return p
}

// requireFixtureTools skips (or, in CI, fails) when a tool the fixture
// needs is missing.
func requireFixtureTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"gcc", "objcopy", "readelf", "zip", "unzip", "bash", systemPython} {
		testenv.Need(t, tool)
	}
	testenv.NeedFile(t, filepath.Join(pythonInc, "Python.h"), "apt-get install python3.11-dev")
}

// getFixture builds the fixture on first use.
func getFixture(t testing.TB) *fixture {
	t.Helper()
	requireFixtureTools(t)
	script := scriptPath(t)
	fixOnce.Do(func() {
		var err error
		fixRoot, err = os.MkdirTemp("", "symbols-fixture-")
		if err != nil {
			fixErr = err.Error()
			return
		}
		fix, fixErr = buildFixture(filepath.Join(fixRoot, "with space"), script)
	})
	if fixErr != "" {
		t.Fatalf("building the fixture: %s", fixErr)
	}
	return fix
}

func run(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONNOUSERSITE=1", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), &runError{name + " " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(out)}
	}
	return string(out), nil
}

type runError struct{ s string }

func (e *runError) Error() string { return e.s }

// compileFixture builds testdata/_fixture.c into out.
func compileFixture(out string, extra ...string) error {
	src, err := filepath.Abs(filepath.Join("testdata", "_fixture.c"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	args := append([]string{"-g", "-O0", "-fPIC", "-shared", "-Wl,--build-id", "-I" + pythonInc}, extra...)
	args = append(args, "-o", out, src)
	_, err = run("", "gcc", args...)
	return err
}

func buildFixture(root, script string) (*fixture, string) {
	f := &fixture{root: root, venv: filepath.Join(root, "venv")}
	fail := func(err error) (*fixture, string) { return nil, err.Error() }
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fail(err)
	}
	if _, err := run(root, systemPython, "-m", "venv", "--without-pip", f.venv); err != nil {
		return fail(err)
	}
	f.site = filepath.Join(f.venv, "lib", "python3.11", "site-packages")
	f.unsplit = filepath.Join(root, "build", filepath.Base(soRel))
	if err := compileFixture(f.unsplit); err != nil {
		return fail(err)
	}
	if err := installDist(f.site, f.unsplit); err != nil {
		return fail(err)
	}
	out := filepath.Join(root, "out dir")
	if _, err := run(root, "bash", script, f.site, out); err != nil {
		return fail(err)
	}
	f.zip = filepath.Join(out, zipBase)
	zr, err := zip.OpenReader(f.zip)
	if err != nil {
		return fail(err)
	}
	defer zr.Close()
	for _, e := range zr.File {
		if e.Name == entryName {
			rc, err := e.Open()
			if err != nil {
				return fail(err)
			}
			f.debug, err = io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return fail(err)
			}
		}
	}
	if f.debug == nil {
		return nil, "the zip has no " + entryName
	}
	f.buildID, err = elfinfo.ReadBuildIDFile(filepath.Join(f.site, soRel))
	if err != nil {
		return fail(err)
	}
	return f, ""
}

// installDist lays out mypkg 1.2.3 in site the way pip installs a wheel,
// with so as its extension module.
func installDist(site, so string) error {
	files := map[string][]byte{
		"mypkg/__init__.py":     nil,
		distInfo + "/METADATA":  []byte("Metadata-Version: 2.1\nName: mypkg\nVersion: 1.2.3\n"),
		distInfo + "/WHEEL":     []byte("Wheel-Version: 1.0\nGenerator: symbols-test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"),
		distInfo + "/INSTALLER": []byte("pip\n"),
	}
	b, err := os.ReadFile(so)
	if err != nil {
		return err
	}
	files[soRel] = b
	var rec bytes.Buffer
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(site, filepath.Dir(n)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(site, n), files[n], 0o644); err != nil {
			return err
		}
		rec.WriteString(n + "," + recordHash(files[n]) + "\n")
	}
	rec.WriteString(distInfo + "/RECORD,,\n")
	return os.WriteFile(filepath.Join(site, distInfo, "RECORD"), rec.Bytes(), 0o644)
}

// copySite copies the fixture's installed distribution into a new
// site-packages directory of the test's own.
func copySite(t testing.TB, f *fixture) string {
	t.Helper()
	site := filepath.Join(t.TempDir(), "site packages")
	for _, top := range []string{"mypkg", distInfo} {
		copyTree(t, filepath.Join(f.site, top), filepath.Join(site, top))
	}
	return site
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeDigest maps every file under dir to its SHA-256, to prove a tree
// was not changed.
func treeDigest(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		out[p] = hex.EncodeToString(s[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storeFiles lists every file under the store, relative, sorted.
func storeFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, p := range testenv.ListTree(t, dir) {
		if !strings.HasSuffix(p, "/") {
			out = append(out, p)
		}
	}
	return out
}

// assertEmptyStore fails unless the store holds no debug file, no
// manifest and no temporary file (a lock file is allowed).
func assertEmptyStore(t testing.TB, dir string) {
	t.Helper()
	for _, f := range storeFiles(t, dir) {
		if f != ".lock" {
			t.Errorf("store file left behind: %s", f)
		}
	}
}

// zipEntry is one entry for writeZip.
type zipEntry struct {
	name string
	data []byte
	mode fs.FileMode // 0: a regular 0644 file
	raw  *zip.FileHeader
}

// writeZip writes the entries to a new zip file at path.
func writeZip(t testing.TB, path string, entries ...zipEntry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		if e.raw != nil {
			w, err := zw.CreateRaw(e.raw)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(e.data); err != nil {
				t.Fatal(err)
			}
			continue
		}
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordHash is a RECORD hash and size column pair for b.
func recordHash(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256=" + base64.RawURLEncoding.EncodeToString(s[:]) + "," + strconv.Itoa(len(b))
}

// mustDist is FindDistribution of zip among sites; an error fails the
// test.
func mustDist(t testing.TB, zip string, sites ...string) *Dist {
	t.Helper()
	dist, err := FindDistribution(zip, sites)
	if err != nil {
		t.Fatal(err)
	}
	return dist
}

// mustInstall is s.Install; an error fails the test.
func mustInstall(t testing.TB, s *Store, zip string, dist *Dist) *Report {
	t.Helper()
	rep, err := s.Install(zip, dist)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// installFails installs zip into a new store and returns the error,
// which must match want, and must leave the store empty; what names the
// case in a failure. It returns nil after a failure.
func installFails(t testing.TB, what, zip string, dist *Dist, want error) error {
	t.Helper()
	s := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	_, err := s.Install(zip, dist)
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
		return nil
	}
	assertEmptyStore(t, s.Dir)
	return err
}
