package symbols

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/venv"
)

// fakeDist writes <site>/<dirName>/RECORD.
func fakeDist(t *testing.T, site, dirName, record string) {
	t.Helper()
	writeFile(t, filepath.Join(site, dirName, "RECORD"), []byte(record))
}

func TestFindDistribution(t *testing.T) {
	root := t.TempDir()
	sp1 := filepath.Join(root, "one")
	sp2 := filepath.Join(root, "two")
	fakeDist(t, sp1, "DD.Trace-2.8.0.dist-info", "ddtrace/x.so,,\n")
	fakeDist(t, sp2, "dd_trace-2.9.0.dist-info", "ddtrace/_stack_v2.cpython-311-x86_64-linux-gnu.so,sha256=abc,10\n")
	fakeDist(t, sp2, "other-1.0.dist-info", "other/x.so,,\n")
	writeFile(t, filepath.Join(sp2, "dd_trace-2.9.0.dist-info.bak"), nil)
	sps := []string{filepath.Join(root, "absent"), sp1, sp2}

	d, err := FindDistribution("/dl/Dd_Trace-2.9.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64-debug-symbols.zip", sps)
	if err != nil {
		t.Fatal(err)
	}
	want := &Dist{Name: "dd_trace", Version: "2.9.0", SitePackages: sp2, DistInfo: filepath.Join(sp2, "dd_trace-2.9.0.dist-info"),
		Files: []RecordEntry{{Path: "ddtrace/_stack_v2.cpython-311-x86_64-linux-gnu.so", Hash: "sha256=abc", Size: 10}}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got %+v\nwant %+v", d, want)
	}

	// Normalised names both ways; the first directory wins.
	if d, err := FindDistribution("dd_trace-2.8.0-cp311-cp311-linux_x86_64-debug-symbols.zip", sps); err != nil || d.SitePackages != sp1 {
		t.Fatalf("got %+v, %v", d, err)
	}

	// Not installed at all.
	_, err = FindDistribution("otherpkg-9.9-cp311-cp311-linux_x86_64-debug-symbols.zip", sps)
	var nie *NotInstalledError
	if !errors.Is(err, ErrNotInstalled) || !errors.As(err, &nie) {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"otherpkg 9.9 is not installed", sp1, sp2} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if len(nie.Installed) != 0 || len(nie.Looked) != 3 {
		t.Errorf("%+v", nie)
	}

	// Another version installed: the error says which.
	_, err = FindDistribution("dd_trace-3.0.0-cp311-cp311-linux_x86_64-debug-symbols.zip", sps)
	if !errors.As(err, &nie) || len(nie.Installed) != 2 {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"dd_trace 3.0.0 is not installed", "installed: dd_trace 2.8.0 (", "2.9.0 ("} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}

	if _, err := FindDistribution("ddtrace-3.0.0.whl", sps); !errors.Is(err, ErrNotDebugZip) {
		t.Errorf("a wheel's name: %v", err)
	}
	if _, err := FindDistribution("ddtrace-3.0.0-cp311-cp311-linux_x86_64-debug-symbols.zip", nil); !errors.Is(err, ErrNotInstalled) ||
		!strings.Contains(err.Error(), "no site-packages directory") {
		t.Errorf("no directories: %v", err)
	}

	fakeDist(t, sp2, "bad-1.0.dist-info", "a,b,c,d\n")
	if _, err := FindDistribution("bad-1.0-debug-symbols.zip", sps); !errors.Is(err, ErrMalformedRecord) ||
		!strings.Contains(err.Error(), filepath.Join("bad-1.0.dist-info", "RECORD")) {
		t.Errorf("malformed RECORD: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(sp2, "norecord-1.0.dist-info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := FindDistribution("norecord-1.0-debug-symbols.zip", sps); err == nil || errors.Is(err, ErrNotInstalled) {
		t.Errorf("missing RECORD: %v", err)
	}
}

func TestFindDistributionFixture(t *testing.T) {
	f := getFixture(t)
	_, err := FindDistribution("mypkg-2.0-cp311-cp311-linux_x86_64-debug-symbols.zip", []string{f.site})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "installed: mypkg 1.2.3") {
		t.Fatalf("err = %v", err)
	}
	_, err = FindDistribution("otherpkg-9.9-cp311-cp311-linux_x86_64-debug-symbols.zip", []string{f.site})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "otherpkg 9.9") {
		t.Fatalf("err = %v", err)
	}
}

func TestSitePackagesOf(t *testing.T) {
	f := getFixture(t)
	env, err := venv.Detect(f.venv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SitePackagesOf(env, "")
	if err != nil || !reflect.DeepEqual(got, []string{f.site}) {
		t.Fatalf("venv: %v, %v; want %s", got, err, f.site)
	}
	// Without a version, lib/python3.* is globbed.
	noVersion := *env
	noVersion.Version = ""
	if got, err := SitePackagesOf(&noVersion, ""); err != nil || !reflect.DeepEqual(got, []string{f.site}) {
		t.Fatalf("venv without version: %v, %v", got, err)
	}
}

func TestSitePackagesOfLayouts(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Debian: /usr/bin/python3.11.
	usrLocal := mk("usr/local/lib/python3.11/dist-packages")
	usrLib := mk("usr/lib/python3/dist-packages")
	mk("usr/lib/python3.11") // no dist-packages: left out
	got, err := SitePackagesOf(nil, filepath.Join(root, "usr/bin/python3.11"))
	if err != nil || !reflect.DeepEqual(got, []string{usrLocal, usrLib}) {
		t.Fatalf("debian: %v, %v", got, err)
	}
	// pyenv: <prefix>/bin/python3.12.
	pyenvSP := mk("pyenv/versions/3.12.1/lib/python3.12/site-packages")
	mk("pyenv/versions/3.12.1/lib/python3.12/dist-packages-not")
	got, err = SitePackagesOf(nil, filepath.Join(root, "pyenv/versions/3.12.1/bin/python3.12"))
	if err != nil || !reflect.DeepEqual(got, []string{pyenvSP}) {
		t.Fatalf("pyenv: %v, %v", got, err)
	}
	// bin/python3 (no X.Y in the name): glob.
	got, err = SitePackagesOf(nil, filepath.Join(root, "pyenv/versions/3.12.1/bin/python3"))
	if err != nil || !reflect.DeepEqual(got, []string{pyenvSP}) {
		t.Fatalf("python3: %v, %v", got, err)
	}
	// A venv that includes the system site-packages.
	vsp := mk("venv/lib/python3.11/site-packages")
	env := &venv.Env{Path: filepath.Join(root, "venv"), Version: "3.11.2", Home: filepath.Join(root, "usr/bin"),
		Cfg: &venv.Cfg{IncludeSystemSitePackages: true}}
	got, err = SitePackagesOf(env, "")
	if err != nil || !reflect.DeepEqual(got, []string{vsp, usrLocal, usrLib}) {
		t.Fatalf("venv with system site-packages: %v, %v", got, err)
	}
	// Nothing there.
	_, err = SitePackagesOf(nil, filepath.Join(root, "nowhere/bin/python3.13"))
	if !errors.Is(err, ErrNoSitePackages) || !strings.Contains(err.Error(), "python3.13/site-packages") {
		t.Fatalf("nothing: %v", err)
	}
	if _, err := SitePackagesOf(nil, ""); !errors.Is(err, ErrNoSitePackages) {
		t.Fatalf("no input: %v", err)
	}
}

func TestInterpreterDirsVersionFromName(t *testing.T) {
	for _, name := range []string{"python3.11", "python3.11d", "python3.11-dbg"} {
		dirs := interpreterDirs("/P/bin/" + name)
		if !slices.Contains(dirs, filepath.Join("/P", "lib", "python3.11", "site-packages")) {
			t.Errorf("interpreterDirs(/P/bin/%s) = %q, no /P/lib/python3.11/site-packages", name, dirs)
		}
	}
}
