package config

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/pyattach/pyattach/venv/environ"
)

// decodeWork decodes TOML text as parseConfig does and returns the
// bytes the decoder allocated: a measure of its work that does not
// depend on the machine's speed.
func decodeWork(data []byte) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var m map[string]any
	toml.Decode(string(data), &m)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// workBound is the most decoding accepted text may cost: linear in its
// size. BurntSushi/toml's work grows with the square of the nesting; a
// 40 KB nested inline table cost 4.6 GB before scanNesting.
func workBound(n int) uint64 { return 4<<20 + 1000*uint64(n) }

func TestScanNesting(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int // 0: accepted
	}{
		{`extensions = ["/a", "/b"]`, 0},
		{"[sources]\necho = \"~/src/echo\"\n", 0},
		{`sources = {a = "/x", b.c = "/y"}`, 0},
		{"a = [[[[1]]]]", 0},
		{"a = [[[[[1]]]]]", 1},
		{"x = 1\n\ny = " + strings.Repeat("{b=", 5) + "1" + strings.Repeat("}", 5), 3},
		{"a.b.c.d = 1", 0},
		{"a.b.c.d.e = 1", 1},
		{"[a.b.c.d.e]", 1},
		{"[[a.b.c.d]]\nx = 1", 0},
		{"x = 1.5\ny = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5]", 0},
		// Brackets, braces and dots in strings and comments do not count.
		{`a = "[[[[[[[[[[{{{{{{{{{{.........."`, 0},
		{`a = '[[[[[[[[[[{{{{{{{{{{..........'`, 0},
		{"a = \"\"\"\n[[[[[[[[[[\n\\\"\"\"[[[[[[[[[[\"\"\"", 0},
		{"a = '''\n[[[[[[[[[[\n'''''", 0},
		{"# [[[[[[[[[[..........\na = 1", 0},
		{`a = "\"[[[[[[[[[[" # [[[[[[[[[[`, 0},
		// A string ends at the line's end; what follows counts.
		{"a = \"x\n[[[[[[[[[[", 2},
		// Quotes after a closing triple quote are content, not a string.
		{"a = \"\"\"x\"\"\"\"\"\nb = [[[[[[[[[[1]]]]]]]]]]", 2},
		{"a = \"\"\"x\"\"\"\"\nb = [[[[[[[[[[1]]]]]]]]]]", 2},
	} {
		line, err := scanNesting([]byte(tc.text), maxConfigDepth)
		if line != tc.line || (err != nil) != (tc.line != 0) {
			t.Errorf("scanNesting(%q) = %d, %v; want line %d", tc.text, line, err, tc.line)
		}
	}
}

// TestSecurityConfigWorstAccepted: the costliest text scanNesting lets
// through, filling the size cap, decodes in linear work.
func TestSecurityConfigWorstAccepted(t *testing.T) {
	key := "a.b.c.d"
	one := func(i int) string {
		return fmt.Sprintf("k%d = ", i) + strings.Repeat("{"+key+" = ", maxConfigDepth-1) + "[1]" + strings.Repeat("}", maxConfigDepth-1) + "\n"
	}
	var b strings.Builder
	for i := 0; b.Len()+len(one(i)) <= maxConfigSize; i++ {
		b.WriteString(one(i))
	}
	data := []byte(b.String())
	if _, err := scanNesting(data, maxConfigDepth); err != nil {
		t.Fatalf("scanNesting refused the worst accepted text: %v", err)
	}
	if w := decodeWork(data); w > workBound(len(data)) {
		t.Errorf("decoding %d bytes allocated %d bytes, more than %d", len(data), w, workBound(len(data)))
	}
}

func FuzzScanNesting(f *testing.F) {
	for _, s := range []string{
		`extensions = ["/a"]`,
		"[sources]\na = \"/x\"\n",
		"a = " + strings.Repeat("{b=", 20) + "1" + strings.Repeat("}", 20),
		"a = \"\"\"\n[[\"\"\"\"\"",
		"a = '''x''''\n[[[[",
		strings.Repeat("a.", 20) + "b = 1",
		"x = \"\\\"[\" # [\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxConfigSize {
			return
		}
		if _, err := scanNesting(data, maxConfigDepth); err != nil {
			return
		}
		if w := decodeWork(data); w > workBound(len(data)) {
			t.Errorf("accepted %d bytes whose decoding allocated %d bytes", len(data), w)
		}
	})
}

// TestSecurityConfigBadFiles: a configuration file that is not a small
// regular file of the right shape is one clear error, at once.
func TestSecurityConfigBadFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	os.WriteFile(big, []byte(strings.Repeat("# padding\n", 200_000)), 0o644) // 2 MB
	deep := filepath.Join(dir, "deep.toml")
	os.WriteFile(deep, []byte("a = "+strings.Repeat("{b=", 5000)+"1"+strings.Repeat("}", 5000)), 0o644)
	for _, tc := range []struct{ file, want string }{
		{fifo, "not a regular file (a FIFO)"},
		{"/dev/zero", "not a regular file (a character device)"},
		{dir, "not a regular file (a directory)"},
		{big, "larger than 64 KiB"},
		{deep, "line 1: lists and tables nested more than 4 deep"},
	} {
		_, err := Load(tc.file, dir, environ.Env{"HOME=" + dir})
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a configuration error saying %q", tc.file, err, tc.want)
		}
	}
}

// TestSecurityConfigTypes: a value of the wrong type is an error that
// names the key and the type it needs, never silently ignored.
func TestSecurityConfigTypes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{"sources = 5", "sources must be a table of names and directories ([sources] then echion = \"~/src/echion\"), not an integer"},
		{"[sources]\nx = 1", "sources.x must be a directory (a string), not an integer"},
		{`extensions = "x"`, `extensions must be a list of strings (extensions = ["/some/path"]), not a string`},
		{`offline = "yes"`, "offline must be true or false, not a string"},
		{"debug_dirs = [1]", `debug_dirs must be a list of strings (debug_dirs = ["/some/path"]); item 1 is an integer`},
		{`debug_dirs = ["/a", ["/b"]]`, "item 2 is a list"},
		{"extension_base_url = 1.5", "extension_base_url must be a string (extension_base_url = \"https://...\"), not a float"},
		{"extension_base_url = \"http://example.org\"", `extension_base_url: insecure URL: "http://example.org" is plain http`},
		{"extension_base_url = \"ftp://example.org\"", `is not an https:// URL`},
		{"max_core_size = 1.5", "max_core_size must be a size (max_core_size = \"64G\"), not a float"},
		{"debug_dir = [\"x\"]", "unknown key debug_dir (known: debug_dirs, extensions, extension_base_url, offline, sources, max_core_size)"},
	} {
		f := filepath.Join(dir, "c.toml")
		os.WriteFile(f, []byte(tc.text+"\n"), 0o644)
		_, err := Load(f, dir, environ.Env{"HOME=" + dir})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
	// Loopback http is for tests and local mirrors.
	f := filepath.Join(dir, "c.toml")
	os.WriteFile(f, []byte("extension_base_url = \"http://127.0.0.1:8080/cpython/\"\noffline = true\n"), 0o644)
	cfg, err := Load(f, dir, environ.Env{"HOME=" + dir})
	if err != nil || cfg.ExtensionBaseURL != "http://127.0.0.1:8080/cpython" || !cfg.Offline {
		t.Errorf("loopback http: %+v, %v", cfg, err)
	}
}

// TestSecurityDebugDirAutoLoad proves, with real gdb 13, why debug_dirs
// carries code (codeKeys): gdb's default auto-load safe-path and
// scripts-directory are both $debugdir:$datadir/auto-load, and once
// pyattach's script has set debug-file-directory and added any safe
// path, <debugdir>/<objfile>-gdb.py runs for the program.
func TestSecurityDebugDirAutoLoad(t *testing.T) {
	gdb := testenv.NeedFile(t, "/usr/bin/gdb", "")
	gcc := testenv.NeedFile(t, "/usr/bin/gcc", "")
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	src := filepath.Join(dir, "prog.c")
	os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644)
	if out, err := exec.Command(gcc, "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	dbg := filepath.Join(dir, "dbg")
	script := filepath.Join(dbg, prog+"-gdb.py")
	pwned := filepath.Join(dir, "PWNED")
	os.MkdirAll(filepath.Dir(script), 0o755)
	os.WriteFile(script, []byte("open("+strconv.Quote(pwned)+", 'w').close()\n"), 0o644)

	out, err := exec.Command(gdb, "-nx", "-batch", "-ex", "show auto-load safe-path", "-ex", "show auto-load scripts-directory").CombinedOutput()
	if err != nil || strings.Count(string(out), "$debugdir:$datadir/auto-load") != 2 {
		t.Fatalf("gdb's defaults changed: %v\n%s", err, out)
	}
	run := func(dirs string) bool {
		os.Remove(pwned)
		out, err := exec.Command(gdb, "-nx", "-batch",
			"-iex", "set debug-file-directory "+dirs,
			"-iex", "add-auto-load-safe-path /nonexistent/x-gdb.py",
			prog).CombinedOutput()
		if err != nil {
			t.Fatalf("gdb: %v\n%s", err, out)
		}
		_, err = os.Stat(pwned)
		return err == nil
	}
	if !run("/usr/lib/debug:" + dbg) {
		t.Errorf("gdb did not run %s from debug directory %s: debug_dirs may not need trust any more", script, dbg)
	}
	if run("/usr/lib/debug") {
		t.Errorf("gdb ran %s without its debug directory", script)
	}
}

// TestSystemConfig: pyattach/config.toml in $XDG_CONFIG_DIRS is read
// before the user's file only when root alone can change it; a file
// another user owns, or one its group or others may write, is left out
// with a notice (pyattach runs as root: such a file must not steer it).
func TestSystemConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sys := filepath.Join(dir, "etc", "xdg")
	file := filepath.Join(sys, "pyattach", "config.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("debug_dirs = [\"/opt/sys-debug\"]\noffline = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	env := environ.Env{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CONFIG_DIRS=relative:" + sys}
	load := func() *Config {
		t.Helper()
		cfg, err := Load("", dir, env)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ignored := func(cfg *Config, why string) {
		t.Helper()
		want := "pyattach: ignored " + file + ": " + why + "; a system-wide configuration file must be owned by root and writable by root alone"
		if len(cfg.Notices) != 1 || cfg.Notices[0] != want || len(cfg.Files) != 0 || len(cfg.DebugDirs) != 0 || cfg.Offline {
			t.Errorf("not ignored:\n%+v\nwant notice %q", cfg, want)
		}
	}
	if os.Geteuid() != 0 {
		// A file of one's own is not a system-wide file.
		ignored(load(), fmt.Sprintf("%s is owned by uid %d", file, os.Geteuid()))
		return
	}
	cfg := load()
	if len(cfg.Notices) != 0 || !reflect.DeepEqual(cfg.Files, []string{file}) || !reflect.DeepEqual(cfg.DebugDirs, []string{"/opt/sys-debug"}) || !cfg.Offline {
		t.Errorf("root's file not read: %+v", cfg)
	}
	// The user's file comes after it: lists joined, its scalars win.
	user := filepath.Join(home, ".config", "pyattach", "config.toml")
	os.MkdirAll(filepath.Dir(user), 0o755)
	os.WriteFile(user, []byte("debug_dirs = [\"/opt/mine\"]\noffline = false\n"), 0o644)
	cfg = load()
	if !reflect.DeepEqual(cfg.DebugDirs, []string{"/opt/sys-debug", "/opt/mine"}) || cfg.Offline || !reflect.DeepEqual(cfg.Files, []string{file, user}) {
		t.Errorf("system then user: %+v", cfg)
	}
	os.Remove(user)
	os.Chmod(file, 0o646)
	ignored(load(), file+" is writable by others")
	os.Chmod(file, 0o644)
	os.Chown(file, 4242, 4242)
	ignored(load(), file+" is owned by uid 4242")
	os.Chown(file, 0, 0)
	os.Chmod(filepath.Dir(file), 0o775)
	ignored(load(), filepath.Dir(file)+fmt.Sprintf(" is writable by its group (gid %d)", 0))
}
