package symbols

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// readZip returns the entries of a zip file, in order, with their bytes.
func readZip(t *testing.T, path string) ([]string, map[string][]byte) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	data := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, f.Name)
		data[f.Name] = b
	}
	return names, data
}

// TestMakeDebugZipDir checks what the fixture's own run of the script
// on an installed tree did.
func TestMakeDebugZipDir(t *testing.T) {
	f := getFixture(t)
	names, _ := readZip(t, f.zip)
	if len(names) != 1 || names[0] != entryName {
		t.Fatalf("zip entries %q, want only %s", names, entryName)
	}
	so := filepath.Join(f.site, filepath.FromSlash(soRel))
	info, err := elfinfo.Open(so, elfinfo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.DWARF || !info.Symtab || info.DebugLink == nil || info.DebugLink.Name != filepath.Base(entryName) {
		t.Fatalf("stripped .so: %+v, debuglink %+v", info, info.DebugLink)
	}
	dbg, err := elfinfo.Read(bytes.NewReader(f.debug), elfinfo.Options{})
	if err != nil || !dbg.DWARF || dbg.BuildID != info.BuildID {
		t.Fatalf("debug file: %+v, %v", dbg, err)
	}
	b, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(filepath.Join(f.site, distInfo, "RECORD"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rec), soRel+","+recordHash(b)+"\n") {
		t.Fatalf("RECORD not updated for the stripped .so:\n%s", rec)
	}

	// A second run finds nothing left to split.
	out, err := run(f.root, "bash", scriptPath(t), f.site, t.TempDir())
	if err == nil || !strings.Contains(out, "no DWARF") || !strings.Contains(out, "nothing to split") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
}

// TestMakeDebugZipWheel splits a wheel: the debug zip, and a stripped
// wheel whose RECORD holds the new hash.
func TestMakeDebugZipWheel(t *testing.T) {
	f := getFixture(t)
	dir := filepath.Join(t.TempDir(), "a dir")
	unsplit, err := os.ReadFile(f.unsplit)
	if err != nil {
		t.Fatal(err)
	}
	py := []byte("from ._fixture import add\n")
	record := "mypkg/__init__.py," + recordHash(py) + "\n" +
		soRel + "," + recordHash(unsplit) + "\n" +
		"\"mypkg/odd, name.txt\"," + recordHash(nil) + "\n" +
		distInfo + "/WHEEL," + recordHash([]byte("Wheel-Version: 1.0\n")) + "\n" +
		distInfo + "/RECORD,,\n"
	whl := writeZip(t, filepath.Join(dir, "mypkg-1.2.3-cp311-cp311-linux_x86_64.whl"),
		zipEntry{name: "mypkg/__init__.py", data: py},
		zipEntry{name: soRel, data: unsplit, mode: 0o755},
		zipEntry{name: "mypkg/odd, name.txt"},
		zipEntry{name: distInfo + "/WHEEL", data: []byte("Wheel-Version: 1.0\n")},
		zipEntry{name: distInfo + "/RECORD", data: []byte(record)},
	)
	out := filepath.Join(t.TempDir(), "out dir")
	if o, err := run(dir, "bash", scriptPath(t), whl, out); err != nil {
		t.Fatal(err)
	} else {
		t.Log(o)
	}
	_, dbg := readZip(t, filepath.Join(out, zipBase))
	if len(dbg) != 1 || dbg[entryName] == nil {
		t.Fatalf("debug zip holds %v", dbg)
	}
	names, files := readZip(t, filepath.Join(out, filepath.Base(whl)))
	if names[len(names)-1] != distInfo+"/RECORD" {
		t.Errorf("RECORD is not the last entry: %q", names)
	}
	so := files[soRel]
	ef, err := elf.NewFile(bytes.NewReader(so))
	if err != nil {
		t.Fatal(err)
	}
	if ef.Section(".debug_info") != nil || ef.Section(".gnu_debuglink") == nil {
		t.Fatal("the wheel's .so is not stripped and linked")
	}
	rec := string(files[distInfo+"/RECORD"])
	if !strings.Contains(rec, soRel+","+recordHash(so)+"\n") {
		t.Fatalf("RECORD does not hold the stripped .so's hash %s:\n%s", recordHash(so), rec)
	}
	if strings.Contains(rec, recordHash(unsplit)) {
		t.Fatalf("RECORD still holds the old hash:\n%s", rec)
	}
	if !strings.Contains(rec, "\"mypkg/odd, name.txt\","+recordHash(nil)+"\n") || !bytes.Equal(files["mypkg/__init__.py"], py) {
		t.Fatalf("other files changed:\n%s", rec)
	}
	// The input wheel is left alone.
	_, orig := readZip(t, whl)
	if !bytes.Equal(orig[soRel], unsplit) {
		t.Fatal("the input wheel was changed")
	}

	// The split wheel installs into a store like the directory's zip.
	site := filepath.Join(t.TempDir(), "site")
	for n, b := range files {
		writeFile(t, filepath.Join(site, filepath.FromSlash(n)), b)
	}
	dist := mustDist(t, filepath.Join(out, zipBase), site)
	s := &Store{Dir: filepath.Join(t.TempDir(), "store")}
	if rep, err := s.Install(filepath.Join(out, zipBase), dist); err != nil || len(rep.Added) != 1 {
		t.Fatalf("install: %+v, %v", rep, err)
	}
}

func TestMakeDebugZipUsage(t *testing.T) {
	testenv.Need(t, "bash")
	requireFixtureTools(t)
	script := scriptPath(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x.tar"), []byte("x"))
	writeFile(t, filepath.Join(dir, "bad.whl"), []byte("not a zip"))
	fakeDist(t, filepath.Join(dir, "many"), "a-1.dist-info", "a/x.so,,\n")
	fakeDist(t, filepath.Join(dir, "many"), "b-2.dist-info", "b/x.so,,\n")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: make-debug-zip.sh WHEEL_OR_DIR OUT_DIR"},
		{[]string{"one"}, 2, "usage:"},
		{[]string{"--help"}, 2, "usage:"},
		{[]string{filepath.Join(dir, "absent"), dir}, 1, "no such file or directory"},
		{[]string{filepath.Join(dir, "x.tar"), dir}, 1, "not a wheel"},
		{[]string{filepath.Join(dir, "bad.whl"), filepath.Join(dir, "o")}, 1, "cannot unpack"},
		{[]string{filepath.Join(dir, "bad.whl"), dir}, 1, "OUT_DIR must not be the wheel's own directory"},
		{[]string{filepath.Join(dir, "bad.whl"), dir, "x-1"}, 1, "STEM is only for a directory"},
		{[]string{filepath.Join(dir, "many"), filepath.Join(dir, "o")}, 2, "holds 2 distributions"},
		{[]string{filepath.Join(dir, "many"), filepath.Join(dir, "o"), "c-3"}, 1, "no c-3.dist-info"},
	} {
		cmd := exec.Command("bash", append([]string{script}, tc.args...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(string(out), tc.want) {
			t.Errorf("make-debug-zip.sh %q: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.want, out)
		}
	}
}
