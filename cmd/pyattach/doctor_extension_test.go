package main

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestDoctorNoExtensionSaysWhere: an installed copy of a pyenv build
// (bin/python3.X and lib/libpython3.X.so stripped, with build-ids of
// their own, so that no original is found by build-id; the installed
// sysconfig data naming a build tree that is gone, as after
// `make install` and a clean) has no gdb extension anywhere. Without the
// network (--offline, extension_base_url at a loopback port that
// refuses), doctor says every place it looked: beside the binary, the
// distribution's debug package directories, the build tree the
// sysconfig data names, pyattach's cache; and its fix is pyattach
// fetch-extension, not a package or a chmod.
func TestDoctorNoExtensionSaysWhere(t *testing.T) {
	strip := testenv.Need(t, "strip")
	py, err := filepath.EvalSymlinks(testenv.Pyenv(t, "3.11+").Exe)
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Dir(filepath.Dir(py))
	name := filepath.Base(py) // python3.X
	minor := strings.TrimPrefix(name, "python")
	lib := filepath.Join(prefix, "lib", "lib"+name+".so.1.0")
	testenv.NeedFile(t, lib, "")
	out, err := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_config_var('abs_builddir'))").Output()
	buildDir := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(buildDir) {
		t.Fatalf("%s names no abs_builddir: %q %v", py, out, err)
	}
	if _, err := os.Stat(buildDir); err == nil {
		testenv.Missing(t, "the build tree %s that %s was built in still exists: this test needs a pyenv build whose tree is gone, as after pyenv install", buildDir, py)
	}

	dir := t.TempDir()
	exe := filepath.Join(dir, "bin", name)
	copyLib := filepath.Join(dir, "lib", filepath.Base(lib))
	for from, to := range map[string]string{py: exe, lib: copyLib} {
		os.MkdirAll(filepath.Dir(to), 0o755)
		if o, err := exec.Command(strip, "--strip-all", "-o", to, from).CombinedOutput(); err != nil {
			t.Fatalf("strip: %v\n%s", err, o)
		}
		flipBuildID(t, to)
	}
	sysconfigs, _ := filepath.Glob(filepath.Join(prefix, "lib", name, "_sysconfigdata_*.py"))
	if len(sysconfigs) == 0 {
		t.Fatalf("no _sysconfigdata_*.py in %s/lib/%s", prefix, name)
	}
	for _, f := range sysconfigs {
		testenv.CopyFile(t, f, filepath.Join(dir, "lib", name, filepath.Base(f)), 0)
	}
	cache := filepath.Join(dir, "cache")
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("extension_base_url = \"https://127.0.0.1:1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pid := testenv.StartPython(t, exe, "", "PYTHONHOME="+prefix, "LD_LIBRARY_PATH="+filepath.Dir(copyLib))

	env := []string{"XDG_CACHE_HOME=" + cache, "DEBUGINFOD_URLS="}
	d := runDoctor(t, env, "--config", cfg, strconv.Itoa(pid))
	if c := findCheck(t, d, "target"); !strings.HasPrefix(c.Summary, exe+":") {
		t.Fatalf("target %+v: want the copy %s, not an original found by build-id", c, exe)
	}
	c := findCheck(t, d, "extension")
	t.Logf("extension check: %+v", c)
	if c.Status == statusOK {
		t.Fatalf("extension check ok, want none found: %+v", c)
	}
	want := map[string]string{
		"beside the binary: ":                filepath.Join(dir, "bin", name+"-gdb.py"),
		"the distribution's debug package: ": "/usr/share/gdb/auto-load" + exe + "-gdb.py",
		"the make install build tree":        buildDir + ", named by sysconfig, has no python-gdb.py",
		"pyattach's cache: ":                 filepath.Join(cache, "pyattach", "extensions", minor),
	}
	for place, what := range want {
		ok := false
		for _, l := range c.Details {
			ok = ok || strings.HasPrefix(l, place) && strings.Contains(l, what)
		}
		if !ok {
			t.Errorf("extension details lack %q ... %q:\n%s", place, what, strings.Join(c.Details, "\n"))
		}
	}
	for _, l := range c.Details {
		if strings.HasPrefix(l, "the config file's extensions") {
			t.Errorf("extension details name config file extensions, none is configured: %s", l)
		}
	}
	if !strings.HasPrefix(c.Fix, "pyattach fetch-extension "+strconv.Itoa(pid)+" ") || !strings.Contains(c.Fix, buildDir) {
		t.Errorf("extension fix %q: want pyattach fetch-extension %d, and the build tree %s", c.Fix, pid, buildDir)
	}
	for _, wrong := range []string{"apt-get", "dnf", "chmod"} {
		if strings.Contains(c.Fix, wrong) {
			t.Errorf("extension fix %q names %s, which does not bring this build's extension", c.Fix, wrong)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "pyattach", "extensions")); err == nil {
		t.Errorf("doctor fetched or cached an extension; it must not use the network")
	}
}

// flipBuildID inverts the bytes of an ELF file's build-id in place, so
// that the file is no longer a copy of its original by build-id.
func flipBuildID(t *testing.T, path string) {
	t.Helper()
	id, err := elfinfo.ReadBuildIDFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw) == 0 {
		t.Fatalf("%s: build-id %q", path, id)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, raw) != 1 {
		t.Fatalf("%s: build-id bytes found %d times", path, bytes.Count(b, raw))
	}
	flipped := make([]byte, len(raw))
	for i, c := range raw {
		flipped[i] = ^c
	}
	if err := os.WriteFile(path, bytes.Replace(b, raw, flipped, 1), 0o755); err != nil {
		t.Fatal(err)
	}
}
