package venv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/detect/saferead"
)

// ErrPyenvNotFound means PyenvWhich found the command in none of the
// selected versions nor on the system PATH.
var ErrPyenvNotFound = errors.New("command not found")

// maxShimSize bounds how much of a file IsPyenvShim reads. pyenv's shims
// are about 400 bytes.
const maxShimSize = 64 << 10

// maxVersionFile bounds how much of a .python-version file is read.
const maxVersionFile = 64 << 10

// shimExecRE matches the line of a pyenv shim that hands over to pyenv:
//
//	exec "/home/u/.pyenv/libexec/pyenv" exec "$program" "$@"
//	exec "$PYENV_ROOT/libexec/pyenv" exec "$program" "$@"
var shimExecRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*exec[ \t]+"?[^"\s]*pyenv"?[ \t]+exec\b`) })

// IsPyenvShim reports whether r holds a pyenv shim: a script ("#!") that
// mentions PYENV_ROOT and execs `pyenv exec`. It reads at most 64 KiB.
func IsPyenvShim(r io.Reader) bool {
	b, err := io.ReadAll(io.LimitReader(r, maxShimSize))
	if err != nil && len(b) == 0 {
		return false
	}
	return bytes.HasPrefix(b, []byte("#!")) &&
		bytes.Contains(b, []byte("PYENV_ROOT")) &&
		shimExecRE().Match(b)
}

// PyenvWhich finds the file that `pyenv which name` would run, without
// running pyenv:
//
//   - the selected versions are $PYENV_VERSION (a ':'-separated list),
//     else the first .python-version file in dir or one of its parents
//     (dir "" skips this), else $PYENV_ROOT/version, else "system";
//   - a version names $PYENV_ROOT/versions/<v> (a leading "python-" is
//     dropped; a prefix such as "3.12" picks the newest installed 3.12.*,
//     as `pyenv latest` does);
//   - each version is tried in order, $PYENV_ROOT/versions/<v>/bin/<name>
//     when it is executable, then "system": the first executable <name>
//     on $PATH with pyenv's shims directory left out.
//
// It returns the file and the version that supplied it ("system" for
// PATH). $PYENV_ROOT defaults to $HOME/.pyenv. When nothing is found the
// error wraps ErrPyenvNotFound and says which versions were selected and
// by what.
func PyenvWhich(name, dir string, opts Options) (path, version string, err error) {
	if name == "" || strings.ContainsRune(name, '/') {
		return "", "", fmt.Errorf("pyenv which %q: not a command name", name)
	}
	root := opts.pyenvRoot()
	if root == "" {
		return "", "", fmt.Errorf("pyenv which %s: neither PYENV_ROOT nor HOME is set", name)
	}
	selected, origin, err := pyenvVersions(root, dir, opts)
	if err != nil {
		return "", "", fmt.Errorf("pyenv which %s: %w", name, err)
	}

	var missing []string
	for _, v := range append(selected, "system") {
		if v == "system" {
			if p := lookPath(name, pathWithout(opts, root)); p != "" {
				return p, "system", nil
			}
			continue
		}
		resolved := pyenvResolveVersion(root, v)
		if resolved == "" {
			missing = append(missing, v)
			continue
		}
		p := filepath.Join(root, "versions", resolved, "bin", name)
		if isExecutable(p) {
			return p, resolved, nil
		}
	}

	msg := fmt.Sprintf("pyenv which %s: %v in version %s (set by %s) nor on PATH", name, ErrPyenvNotFound, strings.Join(selected, ":"), origin)
	if len(missing) > 0 {
		msg += fmt.Sprintf("; not installed under %s: %s", filepath.Join(root, "versions"), strings.Join(missing, ", "))
	}
	return "", "", &pyenvError{msg: msg}
}

type pyenvError struct{ msg string }

func (e *pyenvError) Error() string { return e.msg }
func (e *pyenvError) Unwrap() error { return ErrPyenvNotFound }

// PyenvSelected returns the versions pyenv selects in dir (as
// PyenvWhich reads them) and what set them: "PYENV_VERSION environment
// variable" or the version file's path.
func PyenvSelected(dir string, opts Options) (versions []string, origin string, err error) {
	root := opts.pyenvRoot()
	if root == "" {
		return nil, "", errors.New("neither PYENV_ROOT nor HOME is set")
	}
	return pyenvVersions(root, dir, opts)
}

// pyenvVersions returns the selected versions and where they were set.
func pyenvVersions(root, dir string, opts Options) ([]string, string, error) {
	if v := opts.Env.Get("PYENV_VERSION"); v != "" {
		return splitVersions(v), "PYENV_VERSION environment variable", nil
	}
	file := ""
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, "", err
		}
		for d := abs; ; d = filepath.Dir(d) {
			if f := filepath.Join(d, ".python-version"); isFile(f) {
				file = f
				break
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	if file == "" {
		file = filepath.Join(root, "version")
	}
	vs, err := readVersionFile(root, file)
	if err != nil {
		return nil, "", err
	}
	if len(vs) == 0 {
		return []string{"system"}, file, nil
	}
	return vs, file, nil
}

func splitVersions(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ":") {
		if v != "" {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = []string{"system"}
	}
	return out
}

// readVersionFile reads a .python-version or $PYENV_ROOT/version file as
// pyenv does: the first word of each line, skipping blank lines and
// lines starting with '#', and versions that would leave
// $PYENV_ROOT/versions. A missing file selects nothing.
func readVersionFile(root, name string) ([]string, error) {
	f, err := saferead.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, maxVersionFile))
	sc.Buffer(make([]byte, 0, 4096), maxVersionFile)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		v := fields[0]
		if v == ".." || strings.Contains(v, "/") {
			versions := filepath.Join(root, "versions")
			p := filepath.Join(versions, v)
			if !within(p, versions) || p == versions || !isDir(p) {
				continue
			}
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

// pyenvResolveVersion returns the directory name under
// $PYENV_ROOT/versions for v, or "".
func pyenvResolveVersion(root, v string) string {
	versions := filepath.Join(root, "versions")
	for _, c := range []string{v, strings.TrimPrefix(v, "python-")} {
		if c != "" && c != "." && c != ".." && isDir(filepath.Join(versions, c)) {
			return c
		}
	}
	for _, c := range []string{v, strings.TrimPrefix(v, "python-")} {
		if l := pyenvLatest(versions, c); l != "" {
			return l
		}
	}
	return ""
}

var preReleaseRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(-dev|-src|-latest|(a|b|rc)[0-9]+)$`) })
var freeThreadedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]t$`) })

// pyenvLatest returns the newest installed version that prefix names, as
// `pyenv latest` does: "3.12" picks 3.12.1 over 3.12.0 and skips
// pre-releases and -dev builds; "3.13t" picks free-threaded builds only.
func pyenvLatest(versions, prefix string) string {
	if prefix == "" || strings.Contains(prefix, "/") {
		return ""
	}
	ents, err := os.ReadDir(versions)
	if err != nil {
		return ""
	}
	suffix := ""
	if len(prefix) > 1 && prefix[len(prefix)-1] == 't' && prefix[len(prefix)-2] >= '0' && prefix[len(prefix)-2] <= '9' {
		suffix, prefix = "t", prefix[:len(prefix)-1]
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if !isDir(filepath.Join(versions, n)) || isLink(filepath.Join(versions, n)) {
			continue // pyenv-virtualenv envs are symlinks: --skip-envs
		}
		if !strings.HasPrefix(n, prefix) || len(n) == len(prefix) || (n[len(prefix)] != '.' && n[len(prefix)] != '-') {
			continue
		}
		if !strings.HasSuffix(n, suffix) || preReleaseRE().MatchString(n) {
			continue
		}
		if suffix == "" && freeThreadedRE().MatchString(n) {
			continue
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	sort.SliceStable(names, func(i, j int) bool {
		return compareVersions(versionIn(names[i]), versionIn(names[j])) > 0
	})
	return names[0]
}

// pathWithout returns PATH's directories without pyenv's shims
// directories.
func pathWithout(opts Options, root string) []string {
	drop := map[string]bool{filepath.Join(root, "shims"): true}
	var out []string
	for _, d := range opts.pathDirs() {
		if !drop[filepath.Clean(d)] {
			out = append(out, d)
		}
	}
	return out
}

// lookPath returns the first executable regular file dir/name, or "".
func lookPath(name string, dirs []string) string {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		if p := filepath.Join(d, name); isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func isLink(name string) bool {
	fi, err := os.Lstat(name)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
