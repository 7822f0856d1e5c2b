package symbols

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/dsym"
	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// macSORel is where dd-trace-py's macOS wheel puts echion's extension.
const macSORel = "ddtrace/internal/datadog/profiling/stack_v2/" + testenv.MachOName

const macZipName = "ddtrace-3.99.0-cp313-cp313-macosx_11_0_x86_64-debug-symbols.zip"

// macSite installs a ddtrace 3.99.0 whose RECORD lists so (copied to
// macSORel) into a new site-packages directory.
func macSite(t testing.TB, so string) string {
	t.Helper()
	site := filepath.Join(t.TempDir(), "site-packages")
	di := "ddtrace-3.99.0.dist-info"
	b, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"ddtrace/__init__.py": nil,
		macSORel:              b,
		di + "/METADATA":      []byte("Metadata-Version: 2.1\nName: ddtrace\nVersion: 3.99.0\n"),
		di + "/WHEEL":         []byte("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp313-cp313-macosx_11_0_x86_64\n"),
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var rec bytes.Buffer
	for _, n := range names {
		testenv.WriteFile(t, filepath.Join(site, n), files[n], 0o644)
		rec.WriteString(n + "," + recordHash(files[n]) + "\n")
	}
	rec.WriteString(di + "/RECORD,,\n")
	testenv.WriteFile(t, filepath.Join(site, di, "RECORD"), rec.Bytes(), 0o644)
	return site
}

// bundleEntries are the zip entries of the bundle at dir, named
// <macSORel>.dSYM/..., as dd-trace-py packs them.
func bundleEntries(t testing.TB, dir string) []zipEntry {
	t.Helper()
	var out []zipEntry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, zipEntry{name: macSORel + ".dSYM/" + filepath.ToSlash(rel), data: b})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInstallDSYM(t *testing.T) {
	fx := testenv.MachO(t)
	uuid := mustMachO(t, fx.SO).Arches[0].UUID
	site := macSite(t, fx.SO)
	zip := writeZip(t, filepath.Join(t.TempDir(), macZipName), bundleEntries(t, fx.DSYM)...)
	s := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	rep := mustInstall(t, s, zip, mustDist(t, zip, site))
	want := dsym.StorePath(s.Dir, uuid, macSORel)
	if len(rep.Install.Files) != 1 || rep.Install.Files[0].Debug != want || rep.Install.Files[0].BuildID != uuid || rep.Install.Files[0].Verified != VerifiedUUID {
		t.Fatalf("installed %+v, want %s under UUID %s", rep.Install.Files, want, uuid)
	}
	got := (&dsym.Locator{Store: s.Dir}).Locate(filepath.Join(site, macSORel), mustMachO(t, filepath.Join(site, macSORel)))
	if got[0].Via != dsym.ViaStore || got[0].Bundle != want {
		t.Errorf("the installed bundle is not found: %+v", got[0])
	}
	// Again: the same answer; then remove.
	mustInstall(t, s, zip, mustDist(t, zip, site))
	removed, err := s.Remove("ddtrace")
	if err != nil || len(removed) != 1 {
		t.Fatalf("remove: %v %v", removed, err)
	}
	if _, err := os.Stat(want); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("remove left %s", want)
	}
}

// TestInstallDSYMUniversal: a universal .so and bundle are filed under
// both UUIDs, the second a link inside the store to the first.
func TestInstallDSYMUniversal(t *testing.T) {
	fx := testenv.MachO(t)
	info := mustMachO(t, fx.Fat)
	site := macSite(t, fx.Fat)
	zip := writeZip(t, filepath.Join(t.TempDir(), macZipName), bundleEntries(t, fx.FatDSYM)...)
	s := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	mustInstall(t, s, zip, mustDist(t, zip, site))
	so := filepath.Join(site, macSORel)
	for _, f := range (&dsym.Locator{Store: s.Dir}).Locate(so, info) {
		if f.Via != dsym.ViaStore {
			t.Errorf("%s: %+v, want it found in the store", f.CPU, f)
		}
	}
}

// TestInstallDSYMRefused: another build's bundle (UUID mismatch), a link
// entry, an entry climbing out: nothing installed, a clear error.
func TestInstallDSYMRefused(t *testing.T) {
	fx := testenv.MachO(t)
	site := macSite(t, fx.SO)
	dir := t.TempDir()
	other := writeZip(t, filepath.Join(dir, "a", macZipName), bundleEntries(t, fx.Other)...)
	err := installFails(t, "other build", other, mustDist(t, other, site), ErrMismatch)
	if err != nil && !strings.Contains(err.Error(), "UUID") {
		t.Errorf("mismatch error %q does not name the UUIDs", err)
	}
	link := writeZip(t, filepath.Join(dir, "b", macZipName), append(bundleEntries(t, fx.DSYM),
		zipEntry{name: macSORel + ".dSYM/Contents/Resources/evil", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777})...)
	installFails(t, "link entry", link, mustDist(t, link, site), ErrUnsafeEntry)
	climb := writeZip(t, filepath.Join(dir, "c", macZipName), append(bundleEntries(t, fx.DSYM),
		zipEntry{name: macSORel + ".dSYM/../../x", data: []byte("x")})...)
	installFails(t, "climbing entry", climb, mustDist(t, climb, site), ErrUnsafeEntry)
}

func mustMachO(t testing.TB, p string) *machoinfo.Info {
	t.Helper()
	i, err := machoinfo.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return i
}
