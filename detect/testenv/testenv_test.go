package testenv

import (
	"os/exec"
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
