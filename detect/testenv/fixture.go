package testenv

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CC writes src to dir/name.c and compiles it with gcc into dir/name:
// gcc -o dir/name dir/name.c [args...] (libraries to link come after
// the source). It returns dir/name.
func CC(t testing.TB, dir, name, src string, args ...string) string {
	t.Helper()
	gcc := Need(t, "gcc")
	c := filepath.Join(dir, name+".c")
	if err := os.MkdirAll(filepath.Dir(c), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command(gcc, append([]string{"-o", out, c}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc %s %s: %v\n%s", strings.Join(args, " "), c, err, b)
	}
	return out
}

// Run runs name with args in dir, failing the test when it fails, and
// returns its combined output.
func Run(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(Need(t, name), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Stripped copies the interpreter py (and the shared libpython it loads,
// if any) with every symbol table and debug section removed but the
// dynamic symbols, as uv's and Docker's builds ship. Like those builds,
// no debug file exists for the copy anywhere: its build-id is another
// one (each byte of the original's inverted), so the original's debug
// file (/usr/lib/debug/.build-id/..., a debuginfod server's) is not
// found for it, and it has no .gnu_debuglink. It returns the copy and
// the environment that runs it (PYTHONHOME, LD_LIBRARY_PATH).
func Stripped(t testing.TB, py string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin", filepath.Base(py))
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	stripCopy(t, py, exe)
	prefix, err := exec.Command(py, "-c", "import sys; print(sys.base_prefix)").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PYTHONHOME=" + strings.TrimSpace(string(prefix))}
	libdir, _ := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_config_var('LIBDIR') or '')").Output()
	ldlib, _ := exec.Command(py, "-c", "import sysconfig; print(sysconfig.get_config_var('LDLIBRARY') or '')").Output()
	lib := filepath.Join(strings.TrimSpace(string(libdir)), strings.TrimSpace(string(ldlib)))
	if strings.HasSuffix(lib, ".so") {
		if real, err := filepath.EvalSymlinks(lib); err == nil {
			soname := filepath.Base(real)
			out := filepath.Join(dir, "lib", soname)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				t.Fatal(err)
			}
			stripCopy(t, real, out)
			// The name the executable asks for (libpython3.12.so.1.0).
			if m, _ := filepath.Glob(lib + ".*"); len(m) > 0 && filepath.Base(m[0]) != soname {
				os.Symlink(soname, filepath.Join(dir, "lib", filepath.Base(m[0])))
			}
			env = append(env, "LD_LIBRARY_PATH="+filepath.Dir(out))
		}
	}
	return exe, env
}

// stripCopy writes to dst the ELF file src with every symbol table and
// debug section removed but the dynamic symbols, no .gnu_debuglink, and
// a build-id no debug file has (see Stripped).
func stripCopy(t testing.TB, src, dst string) {
	t.Helper()
	objcopy := Need(t, "objcopy")
	args := []string{"--strip-all", "--remove-section=.gnu_debuglink"}
	f, err := elf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	note := f.Section(".note.gnu.build-id")
	var data []byte
	if note != nil {
		data, err = note.Data()
	}
	f.Close()
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if len(data) > 16 {
		// The note: namesz, descsz, type (4 bytes each), "GNU\0", then
		// the build-id itself.
		other := bytes.Clone(data)
		for i := 16; i < len(other); i++ {
			other[i] ^= 0xff
		}
		file := dst + ".note"
		if err := os.WriteFile(file, other, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(file)
		args = append(args, "--update-section", ".note.gnu.build-id="+file)
	}
	if out, err := exec.Command(objcopy, append(args, src, dst)...).CombinedOutput(); err != nil {
		t.Fatalf("objcopy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// ReadyTimeout is how long StartReady waits for a process's first line.
const ReadyTimeout = 60 * time.Second

// StartReady starts cmd in its own process group and waits, at most
// ReadyTimeout, for the first line it prints on stdout (its "ready"
// signal). stop kills the group and reaps it; it is non-nil whenever the
// process started, even with an error (it ended, or stayed silent).
// Start is this for a test; testscript commands use it directly.
func StartReady(cmd *exec.Cmd) (line string, stop func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	var stderr bytes.Buffer
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		// Harmless when the caller already reaped the process.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}
	type result struct {
		line string
		err  error
	}
	ready := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		ready <- result{line, err}
	}()
	select {
	case r := <-ready:
		if r.err != nil {
			return "", stop, fmt.Errorf("%s exited before it was ready: %v\n%s", cmd.Path, r.err, stderr.String())
		}
		return r.line, stop, nil
	case <-time.After(ReadyTimeout):
		return "", stop, fmt.Errorf("%s not ready after %v\n%s", cmd.Path, ReadyTimeout, stderr.String())
	}
}

// Start is StartReady for a test: the process group is killed when the
// test ends, and a process that ends or stays silent fails the test.
func Start(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	line, stop, err := StartReady(cmd)
	if stop != nil {
		t.Cleanup(stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// WaitingApp is a program that prints "ready" from inside nested
// functions and sleeps there: inner (line 5), middle (7), outer (9). It
// runs under Python 2.7 and 3.x alike.
const WaitingApp = `import sys, time
def inner():
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    time.sleep(600)
def middle():
    inner()
def outer():
    middle()
outer()
`

// StartPython runs code (WaitingApp when empty) as app.py under exe with
// env added, and returns its PID once it has printed its first line. The
// process group is killed when the test ends.
func StartPython(t testing.TB, exe, code string, env ...string) int {
	t.Helper()
	if code == "" {
		code = WaitingApp
	}
	app := filepath.Join(t.TempDir(), "app.py")
	if err := os.WriteFile(app, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, app)
	cmd.Env = append(os.Environ(), env...)
	if Start(t, cmd) == "" {
		t.Fatalf("%s app.py printed nothing", exe)
	}
	return cmd.Process.Pid
}

// Venv makes `python -m venv --without-pip [args...] dir` and returns dir.
func Venv(t testing.TB, python, dir string, args ...string) string {
	t.Helper()
	argv := append([]string{"-m", "venv", "--without-pip"}, args...)
	argv = append(argv, dir)
	cmd := exec.Command(python, argv...)
	cmd.Env = append(os.Environ(), "PYTHONNOUSERSITE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", python, strings.Join(argv, " "), err, out)
	}
	return dir
}

// ReadelfBuildID is path's build-id as `readelf -n` prints it: an oracle
// independent of pyattach's own ELF reader. A file without one fails
// the test.
func ReadelfBuildID(t testing.TB, path string) string {
	t.Helper()
	out, err := exec.Command(Need(t, "readelf"), "-n", path).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", path, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if _, id, ok := strings.Cut(line, "Build ID: "); ok {
			return strings.TrimSpace(id)
		}
	}
	t.Fatalf("readelf -n %s prints no build-id", path)
	return ""
}

// CopyFile copies src to dst with mode (0: src's permission bits),
// creating dst's directory and replacing dst.
func CopyFile(t testing.TB, src, dst string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if mode == 0 {
		fi, err := in.Stat()
		if err != nil {
			t.Fatal(err)
		}
		mode = fi.Mode().Perm()
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// SplitDebug moves prog's DWARF into debug and strips it from prog,
// as distributions ship a program and its separate debug file:
//
//	objcopy --only-keep-debug PROG DEBUG
//	objcopy --strip-debug PROG
func SplitDebug(t testing.TB, prog, debug string) {
	t.Helper()
	Run(t, "", "objcopy", "--only-keep-debug", prog, debug)
	Run(t, "", "objcopy", "--strip-debug", prog)
}

// DWARF opens the ELF file at path and returns its DWARF data, failing
// the test when it has none.
func DWARF(t testing.TB, path string) *dwarf.Data {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

// SymbolAddr is the link-time address of the symbol name in the ELF
// file at path (its symbol table), failing the test when it has none.
func SymbolAddr(t testing.TB, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}

// ListTree returns every path under dir, relative to it, with "/" after
// directories, in lexical order; a missing dir, or an entry removed
// while it walks, is no error.
func ListTree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// WriteTree writes files under dir, making the directories they need: a
// name ending in "/" is a directory, a content starting with "->" makes a
// symbolic link to the rest, any other content is a file's bytes.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(name, "/"):
			err = os.MkdirAll(p, 0o755)
		case strings.HasPrefix(content, "->"):
			err = os.Symlink(strings.TrimPrefix(content, "->"), p)
		default:
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// WriteFile writes data to path with mode, making the directories it
// needs.
func WriteFile(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

// PrivateTempDir is t.TempDir made mode 0700: a directory only root or
// the test's user can change (t.TempDir's parents are /tmp, sticky, and
// a 0700 directory), as the trust check and pyattach's private
// directories require.
func PrivateTempDir(t testing.TB) string {
	d := t.TempDir()
	if err := os.Chmod(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}
