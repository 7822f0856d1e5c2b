package main

import (
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// fakePythonC is a program that resolves as CPython 3.12 and prints each
// of its arguments in hex, one "arg:" line each.
const fakePythonC = `#include <stdio.h>
const unsigned long Py_Version = 0x030c01f0;
void Py_Initialize(void) {}
int Py_Main(int argc, char **argv) {
	Py_Initialize();
	for (int i = 1; i < argc; i++) {
		printf("arg:");
		for (char *p = argv[i]; *p; p++) printf("%02x", (unsigned char)*p);
		printf("\n");
	}
	return 0;
}
void *_PyEval_EvalFrameDefault(void *t, void *f, int e) { return f; }
int main(int argc, char **argv) { return Py_Main(argc, argv); }
`

// crlf turns the pty's line ends (lldb runs the program on one) into "\n".
func crlf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// fakePython compiles fakePythonC into dir/bin/python3.12.
func fakePython(t *testing.T, dir string) string {
	t.Helper()
	gcc := testenv.Need(t, "gcc")
	src := filepath.Join(dir, "python.c")
	exe := filepath.Join(dir, "bin", "python3.12")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(fakePythonC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-g", "-rdynamic", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return exe
}

// lldbEnv is the environment for running lldb 14 (Debian's names a wrong
// Python path) with HOME and the XDG directories under dir.
func lldbEnv(dir, cache string) []string {
	return []string{
		"PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages",
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_CACHE_HOME=" + cache,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
	}
}

func TestSecurityCheckLLDBArgs(t *testing.T) {
	for _, args := range [][]string{
		{"-p", "1234", "-b", "-o", "bt"},
		{"--", "./python", "a b", "-x", "--y", `a"b`, `a'b`, `a\b`, `\`, "$HOME", "a$(id)", "~", "*", "#x", ";id", "a\tb", "\x01", "\xff", "é", `a"b c"d`, "{"},
		{"-f", "/srv/a'b\"c\\d e/python", "--", "x"},
		{"-c", "/tmp/core'1", "./python"},
		{"./python", "-n", "python"},
	} {
		if err := checkLLDBArgs(args); err != nil {
			t.Errorf("checkLLDBArgs(%q): %v", args, err)
		}
	}
	for _, tc := range []struct {
		args []string
		what string
	}{
		{[]string{"--", "./python", "a\nplatform shell touch PWNED"}, "program argument 1"},
		{[]string{"--", "./python", "ok", "a\rb"}, "program argument 2"},
		{[]string{"--", "./python", "a`1+1`b"}, "program argument 1"},
		{[]string{"--", "./python", ""}, "program argument 1"},
		{[]string{"--", "./python", " a"}, "program argument 1"},
		{[]string{"--", "./python", "a "}, "program argument 1"},
		{[]string{"--", "./python", "a\v"}, "program argument 1"},
		{[]string{"--", "./python", `"a`}, "program argument 1"},
		{[]string{"--", "./python", "'a'"}, "program argument 1"},
		{[]string{"./python", "x", "\n"}, "program argument 2"},
		{[]string{"--", "p\nplatform shell touch PWNED"}, "program"},
		{[]string{"-f", "p`x`"}, "program"},
		{[]string{"--", "-a"}, "program"},
		{[]string{"-c", "core\nplatform shell id"}, "core file"},
		{[]string{"-n", "py\nplatform shell id"}, "process name"},
		{[]string{"--attach-name=`x`"}, "process name"},
	} {
		err := checkLLDBArgs(tc.args)
		var ae *LLDBArgError
		if !errors.As(err, &ae) || ae.What != tc.what {
			t.Errorf("checkLLDBArgs(%q) = %v; want an LLDBArgError on the %s", tc.args, err, tc.what)
			continue
		}
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("error is not one line: %q", err)
		}
	}
}

// Every argument checkLLDBArgs lets through reaches the program byte for
// byte through real lldb 14, and what it refuses does not.
func TestSecurityLLDBRunArgsExact(t *testing.T) {
	lldb := testenv.Need(t, "lldb")
	dir := t.TempDir()
	py := fakePython(t, dir)
	accepted := []string{"a b", "-x", "--y", `a"b`, `a'b`, `a\b`, `\`, `\\`, `x\`, `\"`, "$HOME", "a$(id)",
		"~", "~/x", "*", "#x", ";id", "a\tb", "\x01", "\xff\xfe", "é", `a"b c"d`, "{", "}", "a 'b", `a "b`, "a'", `x"`, "-", "--"}
	for _, a := range accepted {
		if r := lldbRunArgProblem(a); r != "" {
			t.Fatalf("%q refused: %s", a, r)
		}
	}
	out := mustRunIn(t, "lldb", dir, lldbEnv(dir, filepath.Join(dir, "cache")), lldb, append([]string{"-b", "-o", "run", "--", py}, accepted...)...)
	var got []string
	for _, l := range strings.Split(crlf(out), "\n") {
		if h, ok := strings.CutPrefix(l, "arg:"); ok {
			b, _ := hex.DecodeString(h)
			got = append(got, string(b))
		}
	}
	if strings.Join(got, "\x00") != strings.Join(accepted, "\x00") {
		t.Errorf("lldb passed %q\nwant %q\n%s", got, accepted, out)
	}
	// What is refused, lldb 14 changes (one lldb run per argument).
	for _, a := range []string{"a`1+1`b", "", " a", "a ", "\ta", `"a`, "'a", `"a"`} {
		if lldbRunArgProblem(a) == "" {
			t.Errorf("%q not refused", a)
		}
		out, _ := runIn(t, dir, lldbEnv(dir, filepath.Join(dir, "cache")), lldb, "-b", "-o", "run", "--", py, a, "end")
		want := "arg:" + hex.EncodeToString([]byte(a)) + "\narg:656e64\n"
		if strings.Contains(crlf(out), "arg:656e64\n") && strings.Contains(crlf(out), want) {
			t.Errorf("lldb passes %q exactly; pyattach need not refuse it", a)
		}
	}
}

// A newline in the program's arguments or name runs the rest of it as an
// lldb command in lldb 14 itself; pyattach lldb refuses it before lldb
// starts, naming the argument.
func TestSecurityLLDBArgsNewlineInjection(t *testing.T) {
	lldb := testenv.Need(t, "lldb")
	dir := t.TempDir()
	py := fakePython(t, dir)
	env := lldbEnv(dir, filepath.Join(dir, "cache"))
	pwned := filepath.Join(dir, "PWNED")
	inject := "x\nplatform shell touch " + pwned

	// The crafted argument is live: plain lldb runs the injected command.
	mustRunIn(t, "lldb", dir, env, lldb, "-b", "--", py, inject)
	if _, err := os.Stat(pwned); err != nil {
		t.Fatalf("control: lldb 14 did not run the injected command; the test proves nothing")
	}
	os.Remove(pwned)

	// A program file whose name holds the newline, and the plain "p" the
	// first line names, so that "target create" succeeds.
	prog := "p\nplatform shell touch PWNED\n#"
	for _, f := range []string{prog, "p"} {
		data, _ := os.ReadFile(py)
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustRunIn(t, "lldb", dir, env, lldb, "-b", "--", prog)
	if _, err := os.Stat(pwned); err != nil {
		t.Fatalf("control: lldb 14 did not run the command in the program's name; the test proves nothing")
	}
	os.Remove(pwned)
	bin := pyattachBin(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-b", "--", py, "ok", inject}, `pyattach: error: lldb program argument 2 "x\nplatform shell touch `},
		{[]string{"-b", "-o", "run", py, inject}, `pyattach: error: lldb program argument 1 "x\nplatform shell`},
		{[]string{"-b", "--", prog}, `pyattach: error: lldb program "p\nplatform shell touch `},
		{[]string{"-b", "-f", prog}, `pyattach: error: lldb program "p\nplatform shell touch `},
		{[]string{"-b", "--", py, "a`1+1`b"}, "holds a backtick"},
	} {
		out, err := runIn(t, dir, env, bin, append([]string{"--offline", "lldb"}, tc.args...)...)
		if err == nil {
			t.Errorf("pyattach lldb %q: no error\n%s", tc.args, out)
		}
		if !strings.Contains(out, tc.want) || !strings.Contains(out, "\n  hint: ") || strings.Count(out, "\n") != 2 {
			t.Errorf("pyattach lldb %q: output\n%s\nwant one error line holding %q and a hint", tc.args, out, tc.want)
		}
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("pyattach lldb %q: the injected command ran", tc.args)
		}
	}
}

// The script's file name reaches lldb exactly even when $XDG_CACHE_HOME
// holds quotes and backticks (lldb's -S pastes it between single quotes,
// where a backtick pair is evaluated), and the script runs.
func TestSecurityLLDBScriptPathQuoted(t *testing.T) {
	testenv.Need(t, "lldb")
	dir := t.TempDir()
	py := fakePython(t, dir)
	cache := filepath.Join(dir, "c'a\"b`script open('PWNED','w')` x\\")
	env := lldbEnv(dir, cache)
	out := mustRunIn(t, "pyattach lldb", dir, env, pyattachBin(t), "--offline", "lldb", "-b",
		"-o", "script print('LOADED', 'pyattach_lldb' in __import__('sys').modules)", "-o", "run", "--", py, "z")
	// The script (sourced quietly, through a wrapper in the same
	// directory) loaded the walker.
	if !strings.Contains(out, "\nLOADED True") {
		t.Errorf("lldb did not source the script by its exact name:\n%s", out)
	}
	if strings.Contains(out, "error:") || !strings.Contains(crlf(out), "\narg:7a\n") {
		t.Errorf("lldb reported an error or did not run the program:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Errorf("the backtick in the cache path was evaluated")
	}
}

// gdb opens -ix/-x files by name after tilde expansion: a cache path with
// blanks, quotes and backticks works, one with a blank before "~" (which
// gdb would read as another, planted file) is refused.
func TestSecurityGDBScriptPath(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	dir := t.TempDir()
	py := fakePython(t, dir)
	home := filepath.Join(dir, "home")

	cache := filepath.Join(dir, "c'a\"b`id` $HOME x")
	// pyattach's debug store exists (as after "symbols install"), so the
	// script names it and "show debug-file-directory" proves gdb read it.
	if err := os.MkdirAll(filepath.Join(dir, "data", "pyattach", "debug"), 0o700); err != nil {
		t.Fatal(err)
	}
	out := mustRunIn(t, "pyattach gdb", dir, lldbEnv(dir, cache), pyattachBin(t), "--offline", "gdb", "-batch", "-ex", "show debug-file-directory", "--args", py)
	if !strings.Contains(out, filepath.Join(dir, "data", "pyattach", "debug")) {
		t.Errorf("gdb did not read pyattach's script:\n%s", out)
	}

	// The control: gdb reads "DIR ~/s.gdb" as "DIR $HOME/s.gdb".
	pwned := filepath.Join(dir, "PWNED")
	tilde := filepath.Join(dir, "t ~")
	planted := filepath.Join(dir, "t "+home, "s.gdb")
	if err := os.MkdirAll(filepath.Dir(planted), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planted, []byte("shell touch "+pwned+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRunIn(t, "gdb", dir, []string{"HOME=" + home}, gdb, "-nx", "-batch", "-ix", tilde+"/s.gdb")
	if _, err := os.Stat(pwned); err != nil {
		t.Fatalf("control: gdb did not read the planted file; the test proves nothing")
	}
	os.Remove(pwned)

	out, err := runIn(t, dir, lldbEnv(dir, tilde), pyattachBin(t), "--offline", "gdb", "-batch", "--args", py)
	if err == nil || !strings.Contains(out, "has a blank before '~'") || !strings.Contains(out, "hint: ") {
		t.Errorf("pyattach gdb with XDG_CACHE_HOME=%q: %v\n%s", tilde, err, out)
	}
}
