package venv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

func TestDetectSystemVenvs(t *testing.T) {
	py := testenv.Debian(t).Exe
	tmp := t.TempDir()
	copies := testenv.Venv(t, py, filepath.Join(tmp, "copies"), "--copies")
	links := testenv.Venv(t, py, filepath.Join(tmp, "links"))

	env, err := Detect(copies)
	if err != nil {
		t.Fatal(err)
	}
	if env.Kind != KindCopies || env.Path != copies || env.Python != filepath.Join(copies, "bin", "python") {
		t.Errorf("copies: %+v", env)
	}
	if env.Cfg == nil || env.Home != "/usr/bin" || env.Cfg.Executable != py || !strings.HasPrefix(env.Version, "3.11.") {
		t.Errorf("copies cfg: %+v %+v", env, env.Cfg)
	}

	env, err = Detect(links)
	if err != nil {
		t.Fatal(err)
	}
	// bin/python -> python3.11 -> /usr/bin/python3.11
	if env.Kind != KindSymlinks {
		t.Errorf("symlinks: kind %q", env.Kind)
	}

	// FindEnv takes the exe as given and looks two levels up.
	env, err = FindEnv(filepath.Join(links, "bin", "python3"))
	if err != nil || env == nil || env.Path != links {
		t.Errorf("FindEnv(links/bin/python3) = %+v, %v", env, err)
	}
	env, err = FindEnv(py)
	if err != nil || env != nil {
		t.Errorf("FindEnv(%s) = %+v, %v; want nil, nil", py, env, err)
	}
}

func TestDetectRelativeDir(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "v", "pyvenv.cfg"), "home = /nowhere\n", 0o644)
	writeFile(t, filepath.Join(dir, "v", "bin", "python"), "", 0o755)
	t.Chdir(dir)
	env, err := Detect("v")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(env.Path) || env.Path != filepath.Join(dir, "v") || env.Kind != KindCopies {
		t.Errorf("env = %+v", env)
	}
}

func TestDetectLayouts(t *testing.T) {
	root := t.TempDir()
	mk := func(name string) string { return filepath.Join(root, name) }

	// Python 2 virtualenv, hand-made: no pyvenv.cfg, orig-prefix.txt.
	py2 := mk("py2")
	writeFile(t, filepath.Join(py2, "lib", "python2.7", "orig-prefix.txt"), "/opt/python2.7", 0o644)
	writeFile(t, filepath.Join(py2, "bin", "python"), "", 0o755)
	symlink(t, "python", filepath.Join(py2, "bin", "python2"))

	// virtualenv's own --copies layout: python3 -> python, python a copy.
	inner := mk("inner")
	writeFile(t, filepath.Join(inner, "pyvenv.cfg"), "home = /usr/bin\nversion_info = 3.11.2.final.0\n", 0o644)
	writeFile(t, filepath.Join(inner, "bin", "python3"), "", 0o755)

	conda := mk("conda")
	if err := os.MkdirAll(filepath.Join(conda, "conda-meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(conda, "bin", "python3.12"), "", 0o755)
	symlink(t, "python3.12", filepath.Join(conda, "bin", "python"))
	if err := os.MkdirAll(filepath.Join(conda, "lib", "python3.12"), 0o755); err != nil {
		t.Fatal(err)
	}

	env, err := Detect(py2)
	if err != nil {
		t.Fatal(err)
	}
	if !env.Python2 || env.OrigPrefix != "/opt/python2.7" || env.Home != "/opt/python2.7/bin" || env.Kind != KindCopies || env.Version != "2.7" || env.Cfg != nil {
		t.Errorf("py2: %+v", env)
	}

	env, err = Detect(inner)
	if err != nil {
		t.Fatal(err)
	}
	if env.Python != filepath.Join(inner, "bin", "python3") || env.Kind != KindCopies || env.Version != "3.11.2" {
		t.Errorf("inner: %+v", env)
	}
	// A symlink chain that stays inside the env is still a copy.
	if err := os.Rename(filepath.Join(inner, "bin", "python3"), filepath.Join(inner, "bin", "python3.11")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "python3.11", filepath.Join(inner, "bin", "python"))
	if env, err = Detect(inner); err != nil || env.Kind != KindCopies || env.Python != filepath.Join(inner, "bin", "python") {
		t.Errorf("inner chain: %+v, %v", env, err)
	}

	env, err = Detect(conda)
	if err != nil {
		t.Fatal(err)
	}
	if env.Kind != KindConda || env.Home != conda || env.Version != "3.12" || env.Cfg != nil {
		t.Errorf("conda: %+v", env)
	}
}

func TestDetectErrors(t *testing.T) {
	root := t.TempDir()

	plain := filepath.Join(root, "plain")
	writeFile(t, filepath.Join(plain, "bin", "python"), "", 0o755)
	_, err := Detect(plain)
	if !errors.Is(err, ErrNotVenv) || !strings.Contains(err.Error(), plain) {
		t.Errorf("plain dir: %v", err)
	}
	if _, err := Detect(filepath.Join(root, "missing")); !errors.Is(err, ErrNotVenv) {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := Detect(filepath.Join(plain, "bin", "python")); !errors.Is(err, ErrNotVenv) {
		t.Errorf("file: %v", err)
	}

	bad := filepath.Join(root, "bad")
	cfg := filepath.Join(bad, "pyvenv.cfg")
	writeFile(t, cfg, "home = /usr/bin\nhome = /usr/\xffbin\n", 0o644)
	writeFile(t, filepath.Join(bad, "bin", "python"), "", 0o755)
	_, err = Detect(bad)
	var ce *CfgError
	if !errors.Is(err, ErrMalformedCfg) || !errors.As(err, &ce) || ce.File != cfg || ce.Line != 2 {
		t.Errorf("malformed cfg: %v", err)
	}
	if !strings.Contains(err.Error(), cfg+":2:") {
		t.Errorf("error does not name file and line: %v", err)
	}

	nopy := filepath.Join(root, "nopy")
	writeFile(t, filepath.Join(nopy, "pyvenv.cfg"), "home = /usr/bin\n", 0o644)
	env, err := Detect(nopy)
	if !errors.Is(err, ErrNoPython) || env == nil || env.Kind != KindNone || env.Cfg == nil {
		t.Errorf("no python: %+v, %v", env, err)
	}

	dangling := filepath.Join(root, "dangling")
	writeFile(t, filepath.Join(dangling, "pyvenv.cfg"), "home = /usr/bin\n", 0o644)
	symlink(t, "/nonexistent/python3.99", filepath.Join(dangling, "bin", "python"))
	if _, err := Detect(dangling); !errors.Is(err, ErrNoPython) {
		t.Errorf("dangling: %v", err)
	}

	loop := filepath.Join(root, "loop")
	writeFile(t, filepath.Join(loop, "pyvenv.cfg"), "home = /usr/bin\n", 0o644)
	symlink(t, "python3", filepath.Join(loop, "bin", "python"))
	symlink(t, "python", filepath.Join(loop, "bin", "python3"))
	if _, err := Detect(loop); !errors.Is(err, ErrSymlinkLoop) {
		t.Errorf("loop: %v", err)
	}

	badOrig := filepath.Join(root, "badorig")
	writeFile(t, filepath.Join(badOrig, "lib", "python2.7", "orig-prefix.txt"), "relative/path\n", 0o644)
	if _, err := Detect(badOrig); !errors.Is(err, ErrNotVenv) {
		t.Errorf("relative orig-prefix: %v", err)
	}
}

func TestFindEnv(t *testing.T) {
	root := t.TempDir()
	v := filepath.Join(root, ".venv")
	writeFile(t, filepath.Join(v, "pyvenv.cfg"), "home = /usr/bin\nversion = 3.11.2\n", 0o644)
	writeFile(t, filepath.Join(v, "bin", "python3.11"), "", 0o755)
	writeFile(t, filepath.Join(v, "lib", "python"), "", 0o755)

	// Only bin/python3.11 exists: FindEnv takes the exe as the python.
	env, err := FindEnv(filepath.Join(v, "bin", "python3.11"))
	if err != nil || env == nil || env.Python != filepath.Join(v, "bin", "python3.11") || env.Kind != KindCopies {
		t.Errorf("FindEnv = %+v, %v", env, err)
	}
	// Detect alone reports the missing bin/python.
	if _, err := Detect(v); !errors.Is(err, ErrNoPython) {
		t.Errorf("Detect: %v", err)
	}
	// Not in bin/: not an env interpreter.
	if env, err := FindEnv(filepath.Join(v, "lib", "python")); env != nil || err != nil {
		t.Errorf("lib/python: %+v, %v", env, err)
	}
	if env, err := FindEnv(filepath.Join(root, "bin", "python")); env != nil || err != nil {
		t.Errorf("outside: %+v, %v", env, err)
	}
}
