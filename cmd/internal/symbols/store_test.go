package symbols

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/saferead"
	"github.com/pyattach/pyattach/detect/testenv"
)

// installFixture installs the fixture's zip for a private copy of its
// site-packages into a new store.
func installFixture(t *testing.T, f *fixture) (*Store, string, *Report) {
	t.Helper()
	site := copySite(t, f)
	s := &Store{Dir: filepath.Join(t.TempDir(), "debug store")}
	dist := mustDist(t, f.zip, site)
	rep := mustInstall(t, s, f.zip, dist)
	return s, site, rep
}

func TestInstall(t *testing.T) {
	f := getFixture(t)
	site := copySite(t, f)
	before := treeDigest(t, site)
	s := &Store{Dir: filepath.Join(t.TempDir(), "debug store")}
	dist := mustDist(t, f.zip, filepath.Join(t.TempDir(), "absent"), site)
	if dist.Name != "mypkg" || dist.Version != "1.2.3" || dist.SitePackages != site {
		t.Fatalf("dist = %+v", dist)
	}
	rep := mustInstall(t, s, f.zip, dist)
	want := filepath.Join(s.Dir, ".build-id", f.buildID[:2], f.buildID[2:]+".debug")
	if len(rep.Added) != 1 || rep.Added[0] != want {
		t.Fatalf("Added = %v, want [%s]", rep.Added, want)
	}
	if len(rep.Mismatches) != 0 {
		t.Fatalf("Mismatches = %v", rep.Mismatches)
	}
	got, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, f.debug) {
		t.Fatal("the installed debug file differs from the zip's entry")
	}
	file := File{
		Entry:    entryName,
		SO:       filepath.Join(site, filepath.FromSlash(soRel)),
		BuildID:  f.buildID,
		Debug:    want,
		Verified: VerifiedCRCBuildID,
		CRC:      crc32.ChecksumIEEE(f.debug),
		Size:     int64(len(f.debug)),
	}
	if len(rep.Install.Files) != 1 || rep.Install.Files[0] != file {
		t.Fatalf("Install.Files = %+v\nwant %+v", rep.Install.Files, file)
	}
	if rep.Install.ZipSHA256 == "" || rep.Install.Zip != f.zip || rep.Install.SitePackages != site {
		t.Fatalf("Install = %+v", rep.Install)
	}

	// The manifest records it, with the debug path relative to the store.
	raw, err := os.ReadFile(filepath.Join(s.Dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version  int
		Installs []struct {
			Name, Version, Zip string
			ZipSHA256          string `json:"zip_sha256"`
			Files              []struct {
				SO, Debug, Verified string
				BuildID             string `json:"build_id"`
			}
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 || len(m.Installs) != 1 || m.Installs[0].Name != "mypkg" || len(m.Installs[0].Files) != 1 {
		t.Fatalf("manifest:\n%s", raw)
	}
	mf := m.Installs[0].Files[0]
	if mf.Debug != filepath.Join(".build-id", f.buildID[:2], f.buildID[2:]+".debug") || mf.BuildID != f.buildID ||
		mf.Verified != VerifiedCRCBuildID || mf.SO != file.SO || m.Installs[0].ZipSHA256 != rep.Install.ZipSHA256 {
		t.Fatalf("manifest:\n%s", raw)
	}

	// Installing again changes nothing, the manifest's bytes included.
	rep2 := mustInstall(t, s, f.zip, dist)
	if len(rep2.Added) != 0 || !reflect.DeepEqual(rep2.Install, rep.Install) {
		t.Fatalf("second install: %+v", rep2)
	}
	raw2, _ := os.ReadFile(filepath.Join(s.Dir, ManifestName))
	if !bytes.Equal(raw, raw2) {
		t.Fatalf("the manifest changed:\n%s\n---\n%s", raw, raw2)
	}

	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !reflect.DeepEqual(list[0], rep.Install) {
		t.Fatalf("List = %+v\nwant %+v", list, rep.Install)
	}

	if !reflect.DeepEqual(treeDigest(t, site), before) {
		t.Fatal("site-packages was changed")
	}
	if files := storeFiles(t, s.Dir); len(files) != 3 { // .lock, manifest, debug file
		t.Fatalf("store holds %v", files)
	}

	removed, err := s.Remove("MyPkg==1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != want {
		t.Fatalf("Remove = %v", removed)
	}
	if _, err := os.Stat(want); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("debug file still there: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(want)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty build-id directory left: %v", err)
	}
	if list, err := s.List(); err != nil || len(list) != 0 {
		t.Fatalf("List after Remove = %v, %v", list, err)
	}
	if _, err := s.Remove("mypkg"); !errors.Is(err, ErrNoSuchInstall) {
		t.Fatalf("second Remove: %v", err)
	}
}

func TestListEmptyStore(t *testing.T) {
	s := &Store{Dir: filepath.Join(t.TempDir(), "none")}
	if list, err := s.List(); err != nil || len(list) != 0 {
		t.Fatalf("List = %v, %v", list, err)
	}
	if _, err := s.Remove("x"); !errors.Is(err, ErrNoSuchInstall) {
		t.Fatalf("Remove = %v", err)
	}
	if _, err := (&Store{}).List(); err == nil {
		t.Fatal("a store without a directory lists")
	}
}

func TestRemoveKeepsSharedBuildID(t *testing.T) {
	f := getFixture(t)
	s, _, rep := installFixture(t, f)

	// A second distribution ships the same extension (vendored): its
	// install refers to the same build-id file.
	site2 := filepath.Join(t.TempDir(), "site")
	copyTree(t, filepath.Join(f.site, "mypkg"), filepath.Join(site2, "mypkg"))
	rec, _ := os.ReadFile(filepath.Join(f.site, distInfo, "RECORD"))
	rec = bytes.ReplaceAll(rec, []byte(distInfo), []byte("vendor_copy-0.1.dist-info"))
	writeFile(t, filepath.Join(site2, "vendor_copy-0.1.dist-info", "RECORD"), rec)
	zip2 := filepath.Join(t.TempDir(), "vendor_copy-0.1-cp311-cp311-linux_x86_64"+DebugZipSuffix)
	testenv.CopyFile(t, f.zip, zip2, 0o644)
	dist2 := mustDist(t, zip2, site2)
	rep2 := mustInstall(t, s, zip2, dist2)
	if len(rep2.Added) != 0 || rep2.Install.Files[0].Debug != rep.Install.Files[0].Debug {
		t.Fatalf("second install: %+v", rep2)
	}
	if list, _ := s.List(); len(list) != 2 {
		t.Fatalf("List = %+v", list)
	}
	removed, err := s.Remove("mypkg")
	if err != nil || len(removed) != 0 {
		t.Fatalf("Remove(mypkg) = %v, %v; the file is still used", removed, err)
	}
	if _, err := os.Stat(rep.Install.Files[0].Debug); err != nil {
		t.Fatal(err)
	}
	_, err = s.Remove("mypkg")
	if !errors.Is(err, ErrNoSuchInstall) || !strings.Contains(err.Error(), "vendor_copy==0.1") {
		t.Fatalf("Remove of a removed install: %v", err)
	}
	removed, err = s.Remove("Vendor-Copy")
	if err != nil || len(removed) != 1 {
		t.Fatalf("Remove(Vendor-Copy) = %v, %v", removed, err)
	}
}

func TestInstallMismatch(t *testing.T) {
	f := getFixture(t)
	// The .so is rebuilt (another build-id) and split again after the
	// zip was made: its debuglink CRC and build-id no longer match.
	site := copySite(t, f)
	so := filepath.Join(site, filepath.FromSlash(soRel))
	if err := compileFixture(so, "-DFIXTURE_VARIANT=1"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(site, "bash", scriptPath(t), site, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// A second rebuild is installed unsplit: no debuglink, only a
	// build-id to compare.
	site2 := copySite(t, f)
	so2 := filepath.Join(site2, filepath.FromSlash(soRel))
	if err := compileFixture(so2, "-DFIXTURE_VARIANT=2"); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		site, so, reason string
	}{
		{site, so, MismatchCRC},
		{site2, so2, MismatchBuildID},
	} {
		s := &Store{Dir: filepath.Join(t.TempDir(), "store")}
		dist := mustDist(t, f.zip, tc.site)
		rep, err := s.Install(f.zip, dist)
		if !errors.Is(err, ErrMismatch) {
			t.Fatalf("%s: err = %v, want ErrMismatch", tc.reason, err)
		}
		if rep == nil || len(rep.Mismatches) != 1 {
			t.Fatalf("%s: report %+v", tc.reason, rep)
		}
		m := rep.Mismatches[0]
		if m.Entry != entryName || m.SO != tc.so || m.Reason != tc.reason || m.Want == "" || m.Got == "" || m.Want == m.Got {
			t.Fatalf("mismatch %+v", m)
		}
		if tc.reason == MismatchBuildID && m.Got != f.buildID {
			t.Fatalf("got build-id %s, want the zip's %s", m.Got, f.buildID)
		}
		if !strings.Contains(err.Error(), m.Want) || !strings.Contains(err.Error(), m.Got) || !strings.Contains(err.Error(), tc.so) {
			t.Fatalf("error does not say what differs: %v", err)
		}
		assertEmptyStore(t, s.Dir)
	}
}

func TestInstallPartial(t *testing.T) {
	f := getFixture(t)
	site := copySite(t, f)
	z := writeZip(t, filepath.Join(t.TempDir(), zipBase),
		zipEntry{name: "mypkg/", mode: fs.ModeDir | 0o755},
		zipEntry{name: entryName, data: f.debug},
		zipEntry{name: "mypkg/_other.so.debug", data: f.debug},
		zipEntry{name: "README.txt", data: []byte("hi")},
	)
	dist := mustDist(t, z, site)
	s := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	rep := mustInstall(t, s, z, dist)
	if len(rep.Added) != 1 || len(rep.Install.Files) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Mismatches) != 1 || rep.Mismatches[0].Reason != MismatchNotInRecord || rep.Mismatches[0].Entry != "mypkg/_other.so.debug" {
		t.Fatalf("mismatches %+v", rep.Mismatches)
	}
	if !reflect.DeepEqual(rep.Ignored, []string{"README.txt"}) {
		t.Fatalf("ignored %v", rep.Ignored)
	}

	// The .so listed in RECORD but deleted since.
	os.Remove(filepath.Join(site, filepath.FromSlash(soRel)))
	s2 := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	rep, err := s2.Install(f.zip, dist)
	if !errors.Is(err, ErrMismatch) || len(rep.Mismatches) != 1 || rep.Mismatches[0].Reason != MismatchMissing {
		t.Fatalf("missing .so: %v, %+v", err, rep)
	}
	assertEmptyStore(t, s2.Dir)
}

func TestInstallUnsafeEntries(t *testing.T) {
	f := getFixture(t)
	dist := mustDist(t, f.zip, copySite(t, f))
	good := zipEntry{name: entryName, data: f.debug}
	for _, bad := range []zipEntry{
		{name: "../evil.so.debug", data: f.debug},
		{name: "/abs.so.debug", data: f.debug},
		{name: "mypkg/../../evil.so.debug", data: f.debug},
		{name: "mypkg/./x.so.debug", data: f.debug},
		{name: `mypkg\..\..\evil.so.debug`, data: f.debug},
		{name: "mypkg/a\x00b.so.debug", data: f.debug},
		{name: "mypkg/a\nb.so.debug", data: f.debug},
		{name: "mypkg/link.so.debug", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777},
		{name: "mypkg/fifo.so.debug", mode: fs.ModeNamedPipe | 0o644},
		{name: "../up/", mode: fs.ModeDir | 0o755},
		{name: entryName, data: f.debug}, // a second copy of the good entry
		{name: "mypkg/huge.so.debug", raw: &zip.FileHeader{Name: "mypkg/huge.so.debug", Method: zip.Store,
			CompressedSize64: 4, UncompressedSize64: 3 << 30, CRC32: 1}, data: []byte("tiny")},
	} {
		z := writeZip(t, filepath.Join(t.TempDir(), zipBase), good, bad)
		err := installFails(t, "entry "+strconv.Quote(bad.name), z, dist, ErrUnsafeEntry)
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", bad.name)) {
			t.Errorf("entry %q: the error does not name it: %v", bad.name, err)
		}
	}
}

func TestInstallCorruptZips(t *testing.T) {
	f := getFixture(t)
	dist := mustDist(t, f.zip, copySite(t, f))
	zipBytes, err := os.ReadFile(f.zip)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A stored (uncompressed) entry whose bytes are damaged after the
	// zip is written: the zip's own CRC check fails at the end.
	var stored bytes.Buffer
	zw := zip.NewWriter(&stored)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: entryName, Method: zip.Store})
	w.Write(f.debug)
	zw.Close()
	damaged := bytes.Clone(stored.Bytes())
	at := bytes.Index(damaged, f.debug[:64]) + len(f.debug)/2
	damaged[at] ^= 0xff

	// An entry whose header claims fewer bytes than it holds.
	var lying bytes.Buffer
	zw = zip.NewWriter(&lying)
	w, _ = zw.CreateRaw(&zip.FileHeader{Name: entryName, Method: zip.Store,
		CompressedSize64: uint64(len(f.debug)), UncompressedSize64: 100, CRC32: crc32.ChecksumIEEE(f.debug)})
	w.Write(f.debug)
	zw.Close()

	for _, tc := range []struct {
		name string
		path string
		want error
	}{
		{"not a zip", write("garbage.zip", []byte("this is not a zip file at all")), ErrNotDebugZip},
		{"empty file", write("empty.zip", nil), ErrNotDebugZip},
		{"truncated zip", write("truncated.zip", zipBytes[:len(zipBytes)/2]), ErrNotDebugZip},
		{"damaged entry", write("damaged.zip", damaged), ErrNotDebugZip},
		{"size lie", write("lying.zip", lying.Bytes()), ErrNotDebugZip},
		{"no debug entries", writeZip(t, filepath.Join(dir, "none.zip"), zipEntry{name: "mypkg/x.txt", data: []byte("x")}), ErrNotDebugZip},
		{"truncated debug file", writeZip(t, filepath.Join(dir, "short.zip"), zipEntry{name: entryName, data: f.debug[:100]}), ErrMismatch},
		{"not ELF", writeZip(t, filepath.Join(dir, "text.zip"), zipEntry{name: entryName, data: []byte("not elf")}), ErrMismatch},
		{"missing file", filepath.Join(dir, "absent.zip"), ErrNotDebugZip},
		// Refused without blocking (a FIFO with no writer) or reading.
		{"FIFO", mkfifo(t, filepath.Join(dir, "fifo.zip")), saferead.ErrNotRegular},
		{"device", "/dev/zero", saferead.ErrNotRegular},
	} {
		if err := installFails(t, tc.name, tc.path, dist, tc.want); err != nil {
			t.Logf("%s: %v", tc.name, err)
		}
	}
}

func mkfifo(t *testing.T, p string) string {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInstallReadOnlyStore(t *testing.T) {
	f := getFixture(t)
	dist := mustDist(t, f.zip, copySite(t, f))
	file := filepath.Join(t.TempDir(), "a file")
	writeFile(t, file, []byte("x"))
	s := &Store{Dir: filepath.Join(file, "store")}
	_, err := s.Install(f.zip, dist)
	if err == nil || !strings.Contains(err.Error(), "not a directory") || !strings.Contains(err.Error(), "debug store") {
		t.Fatalf("err = %v", err)
	}
	if _, err := s.List(); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("List: %v", err)
	}
	if _, err := s.Install(f.zip, nil); err == nil {
		t.Fatal("Install without a distribution succeeded")
	}
}

func TestInstallReplacesDifferentFile(t *testing.T) {
	f := getFixture(t)
	s, _, rep := installFixture(t, f)
	p := rep.Install.Files[0].Debug
	// Someone left other bytes at the build-id path: they are replaced.
	writeFile(t, p, []byte("stale"))
	dist := mustDist(t, f.zip, rep.Install.SitePackages)
	rep2 := mustInstall(t, s, f.zip, dist)
	if len(rep2.Added) != 1 {
		t.Fatalf("Added = %v", rep2.Added)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, f.debug) {
		t.Fatal("the stale file was not replaced")
	}
	for _, n := range storeFiles(t, s.Dir) {
		if strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".old") {
			t.Fatalf("left behind: %s", n)
		}
	}
}

func TestCheckEntryName(t *testing.T) {
	for _, ok := range []string{"a.so.debug", "mypkg/sub/_x.cpython-311-x86_64-linux-gnu.so.debug", "mypkg/", "a..b.so.debug"} {
		if err := checkEntryName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "..", "../a", "a/../../b", "/a", "a\\b", "a\x00", "./a", "a//b", "a\x7f", "a/.."} {
		if err := checkEntryName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	testenv.WriteFile(t, path, b, 0o644)
}

// TestInstallRollsBack: when the manifest cannot be written, the debug
// files already renamed into place are taken out again.
func TestInstallRollsBack(t *testing.T) {
	f := getFixture(t)
	dist := mustDist(t, f.zip, copySite(t, f))
	s := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	if err := os.MkdirAll(filepath.Join(s.Dir, ManifestName), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Install(f.zip, dist); err == nil || !strings.Contains(err.Error(), ManifestName) {
		t.Fatalf("err = %v", err)
	}
	for _, n := range storeFiles(t, s.Dir) {
		if n != ".lock" {
			t.Errorf("left behind: %s", n)
		}
	}
}
