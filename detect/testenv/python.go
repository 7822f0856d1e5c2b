package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/pyversion"
)

// Debian's interpreters: the distribution's python3.11 and its debug
// build (python3.11-dbg). Their versions are read by running them.
const (
	DebianPath      = "/usr/bin/python3.11"
	DebianDebugPath = "/usr/bin/python3.11d"
)

// Python is one interpreter on this machine, with what running it says.
type Python struct {
	Exe      string // the path it was found at
	Version  string // sys.version_info: "3.11.2"
	ABIFlags string // sys.abiflags: "", "d", "m", "t"
	Prefix   string // sys.base_prefix
}

// Minor is "3.11" of Version "3.11.2".
func (p Python) Minor() string { return pyversion.MajorMinorOf(p.Version) }

const probeCode = `import sys; print("%d.%d.%d" % sys.version_info[:3]); print(getattr(sys, "abiflags", "")); print(getattr(sys, "base_prefix", sys.prefix))`

// Probe runs exe to learn its version, ABI flags and prefix.
func Probe(exe string) (Python, error) {
	cmd := exec.Command(exe, "-c", probeCode)
	cmd.Env = append(os.Environ(), "PYTHONNOUSERSITE=1")
	out, err := cmd.Output()
	if err != nil {
		return Python{}, fmt.Errorf("%s: %w", exe, err)
	}
	f := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(f) != 3 || f[0] == "" {
		return Python{}, fmt.Errorf("%s printed %q", exe, out)
	}
	return Python{Exe: exe, Version: f[0], ABIFlags: f[1], Prefix: f[2]}, nil
}

// PythonAt requires the interpreter at exe and probes it.
func PythonAt(t testing.TB, exe string) Python {
	t.Helper()
	Need(t, exe)
	p, err := Probe(exe)
	if err != nil {
		t.Fatalf("running %s: %v", exe, err)
	}
	return p
}

// Debian is Debian's /usr/bin/python3.11.
func Debian(t testing.TB) Python {
	t.Helper()
	return PythonAt(t, DebianPath)
}

// DebianDebug is Debian's debug build, /usr/bin/python3.11d.
func DebianDebug(t testing.TB) Python {
	t.Helper()
	return PythonAt(t, DebianDebugPath)
}

// DebianDebugFile is the separate debug file python3.11-dbg installs
// for the ELF file whose build-id is id.
func DebianDebugFile(t testing.TB, id string) string {
	t.Helper()
	bid, err := buildid.Parse(id)
	if err != nil {
		t.Fatalf("build-id %q: %v", id, err)
	}
	return NeedFile(t, bid.DebugPath("/usr/lib/debug"), "apt-get install python3.11-dbg")
}

// PyenvRoot is $PYENV_ROOT, else ~/.pyenv.
func PyenvRoot() string {
	if r := os.Getenv("PYENV_ROOT"); r != "" {
		return r
	}
	h, _ := os.UserHomeDir()
	return filepath.Join(h, ".pyenv")
}

// PyenvVersions lists the builds under PyenvRoot()/versions that run,
// oldest first. Exe is each build's bin/pythonX.Y.
func PyenvVersions() []Python {
	dirs, _ := filepath.Glob(filepath.Join(PyenvRoot(), "versions", "*"))
	var out []Python
	for _, d := range dirs {
		var exe string
		for _, name := range []string{"python3", "python2", "python"} {
			if _, err := os.Stat(filepath.Join(d, "bin", name)); err == nil {
				exe = filepath.Join(d, "bin", name)
				break
			}
		}
		if exe == "" {
			continue
		}
		p, err := Probe(exe)
		if err != nil {
			continue
		}
		if mm := filepath.Join(d, "bin", "python"+p.Minor()); fileExists(mm) {
			p.Exe = mm
		}
		p.Prefix = d
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return versionLess(out[i].Version, out[j].Version) })
	return out
}

// PyenvAll is PyenvVersions, requiring at least one.
func PyenvAll(t testing.TB) []Python {
	t.Helper()
	all := PyenvVersions()
	if len(all) == 0 {
		Missing(t, "no pyenv build under %s", filepath.Join(PyenvRoot(), "versions"))
	}
	return all
}

// Pyenv is the newest pyenv build of minor ("3.12"), or of the newest
// minor at least "3.11" when minor ends in "+" ("3.11+").
func Pyenv(t testing.TB, minor string) Python {
	t.Helper()
	all := PyenvVersions()
	for i := len(all) - 1; i >= 0; i-- {
		p := all[i]
		if strings.ContainsAny(p.ABIFlags, "dt") {
			continue // a debug or free-threaded build is asked for by path
		}
		if from, ok := strings.CutSuffix(minor, "+"); ok {
			if !versionLess(p.Minor(), from) {
				return p
			}
		} else if p.Minor() == minor {
			return p
		}
	}
	Missing(t, "no pyenv build of Python %s under %s", minor, filepath.Join(PyenvRoot(), "versions"))
	return Python{}
}

// Libpython is the shared libpython of a pyenv build (its
// lib/libpythonX.Y[flags].so.1.0), or "" for a static one.
func (p Python) Libpython() string {
	m, _ := filepath.Glob(filepath.Join(p.Prefix, "lib", "libpython"+p.Minor()+"*.so.1.0"))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// versionLess orders versions as detect/pyversion does ("3.9.18" <
// "3.10.1"); one that does not parse sorts first.
func versionLess(a, b string) bool {
	va, errA := pyversion.Parse(a)
	vb, errB := pyversion.Parse(b)
	if errA != nil || errB != nil {
		return errA != nil && errB == nil
	}
	return va.Compare(vb) < 0
}

// LLDBEnv is the environment lldb needs to import its Python package
// where its own `lldb -P` names the wrong directory (Debian's lldb 14):
// PYTHONPATH set to the dist-packages holding lldb/__init__.py, or nil
// when there is none.
func LLDBEnv() []string {
	if m, _ := filepath.Glob("/usr/lib/llvm-*/lib/python3*/dist-packages/lldb/__init__.py"); len(m) > 0 {
		return []string{"PYTHONPATH=" + filepath.Dir(filepath.Dir(m[len(m)-1]))}
	}
	return nil
}
