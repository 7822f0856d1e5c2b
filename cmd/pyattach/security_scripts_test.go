package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// scriptEnv is the test's environment with HOME and the XDG directories
// in home, then extra.
func scriptEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "DEBUGINFOD_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"DEBUGINFOD_URLS=")
	return append(env, extra...)
}

// runPyattach runs the built pyattach with env and returns its exit
// code, stdout and stderr.
func runPyattach(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// pyattachOK is runPyattach for a run that must exit 0: it returns
// stdout and stderr; what names the run in a failure.
func pyattachOK(t *testing.T, what, bin string, env []string, args ...string) (string, string) {
	t.Helper()
	code, stdout, stderr := runPyattach(t, bin, env, args...)
	if code != 0 {
		t.Fatalf("%s: exit code %d\n%s%s", what, code, stdout, stderr)
	}
	return stdout, stderr
}

// gdbLaunchArgs make real gdb load pyattach's scripts for Python and
// stop: the program is never run.
func gdbLaunchArgs(t *testing.T) []string {
	testenv.Need(t, "gdb")
	py := testenv.Debian(t).Exe
	return []string{"gdb", "-nx", "-batch", "-ex", "info inferiors", "--args", py, "-c", "pass"}
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "planted.gdb" {
			t.Errorf("written through the planted link: %s", filepath.Join(dir, e.Name()))
		}
	}
}

// A symbolic link planted by uid 65534 (nobody) in place of the scripts
// directory, or of pyattach's cache directory, is never followed:
// pyattach gdb refuses, names the link's owner and the fixes, and writes
// nothing where the link points.
func TestSecurityScriptsCachePlantedLink(t *testing.T) {
	testenv.NeedRoot(t, "to plant a link owned by uid 65534")
	args := gdbLaunchArgs(t)
	bin := pyattachBin(t)
	for _, at := range []string{"pyattach/scripts", "pyattach"} {
		t.Run(strings.ReplaceAll(at, "/", "_"), func(t *testing.T) {
			home := t.TempDir()
			attacker := filepath.Join(t.TempDir(), "attacker")
			os.Mkdir(attacker, 0o755)
			os.WriteFile(filepath.Join(attacker, "planted.gdb"), []byte("shell touch "+filepath.Join(home, "PWNED")+"\n"), 0o644)
			os.Chown(attacker, 65534, 65534)
			link := filepath.Join(home, ".cache", at)
			os.MkdirAll(filepath.Dir(link), 0o700)
			if err := os.Symlink(attacker, link); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(link, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runPyattach(t, bin, scriptEnv(home), args...)
			if code != 1 {
				t.Fatalf("exit code %d, want 1; stderr:\n%s", code, stderr)
			}
			for _, want := range []string{"pyattach: error: cannot write the script cache", "symbolic link owned by uid 65534 (nobody)", "hint: ", "XDG_CACHE_HOME", "--script"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			emptyDir(t, attacker)
			if _, err := os.Stat(filepath.Join(home, "PWNED")); err == nil {
				t.Error("the planted script ran")
			}
		})
	}
}

// The scripts real gdb reads are in a directory only the user can
// change: made 0700, and an existing one with a wider mode (an older
// pyattach made it 0755) is tightened before a script is written into
// it.
func TestSecurityScriptsCachePrivate(t *testing.T) {
	args := gdbLaunchArgs(t)
	home := t.TempDir()
	scripts := filepath.Join(home, ".cache", "pyattach", "scripts")
	os.MkdirAll(scripts, 0o755)
	os.Chmod(scripts, 0o777)
	pyattachOK(t, "pyattach gdb", pyattachBin(t), scriptEnv(home), args...)
	for _, d := range []string{filepath.Dir(scripts), scripts} {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %o, want 700", d, st.Mode().Perm())
		}
	}
	ents, _ := os.ReadDir(scripts)
	if len(ents) == 0 {
		t.Errorf("no script in %s", scripts)
	}
}

// --script FILE in a directory another user may write (mode 0777, not
// sticky) is refused: someone could replace the script before gdb reads
// it. In a directory of the user's own it is written.
func TestSecurityScriptFlagSharedDir(t *testing.T) {
	args := gdbLaunchArgs(t)
	bin := pyattachBin(t)
	home := t.TempDir()
	shared := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777)
	script := filepath.Join(shared, "attach.gdb")
	code, _, stderr := runPyattach(t, bin, scriptEnv(home), append([]string{"--script", script}, args...)...)
	if code != 1 || !strings.Contains(stderr, "--script "+script+": ") || !strings.Contains(stderr, "writable by") || !strings.Contains(stderr, "hint: another user could replace the script") {
		t.Errorf("exit code %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Lstat(script); err == nil {
		t.Errorf("%s written in a directory others can write", script)
	}
	own := filepath.Join(t.TempDir(), "mine", "attach.gdb")
	pyattachOK(t, "--script in an own directory", bin, scriptEnv(home), append([]string{"--script", own}, args...)...)
	if _, err := os.Stat(own); err != nil {
		t.Error(err)
	}
}

// A cache that cannot be written (XDG_CACHE_HOME is a file; HOME does
// not exist for an unprivileged user) says so, and the hint names the
// fixes: XDG_CACHE_HOME, --script.
func TestSecurityScriptsCacheUnwritable(t *testing.T) {
	args := gdbLaunchArgs(t)
	bin := pyattachBin(t)
	check := func(t *testing.T, code int, stderr string) {
		t.Helper()
		if code != 1 {
			t.Fatalf("exit code %d, want 1; stderr:\n%s", code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		// Warnings may come first (the stack walker, kept in the data
		// directory, could not be written either); the error is last.
		for len(lines) > 2 && (strings.HasPrefix(lines[0], "pyattach: warning: ") || strings.HasPrefix(lines[0], "  hint: ")) {
			lines = lines[1:]
		}
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "pyattach: error: cannot write the script cache: ") ||
			!strings.Contains(lines[1], "hint: set XDG_CACHE_HOME to a writable directory of your own") || !strings.Contains(lines[1], "--script FILE") {
			t.Errorf("stderr:\n%s", stderr)
		}
	}
	t.Run("file", func(t *testing.T) {
		home := t.TempDir()
		file := filepath.Join(home, "cache-file")
		os.WriteFile(file, nil, 0o644)
		code, _, stderr := runPyattach(t, bin, scriptEnv(home, "XDG_CACHE_HOME="+file), args...)
		check(t, code, stderr)
	})
	t.Run("nobody", func(t *testing.T) {
		testenv.NeedRoot(t, "to run as uid 65534")
		setpriv := testenv.Need(t, "setpriv")
		// A copy of the binary that uid 65534 may run.
		dir := t.TempDir()
		os.Chmod(dir, 0o755)
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		nbin := filepath.Join(dir, "pyattach")
		if err := os.WriteFile(nbin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		var env []string
		for _, kv := range scriptEnv("/nonexistent") {
			if !strings.HasPrefix(kv, "XDG_") {
				env = append(env, kv)
			}
		}
		code, _, stderr := runPyattach(t, setpriv, env, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", nbin}, args...)...)
		check(t, code, stderr)
		if !strings.Contains(stderr, "/nonexistent") {
			t.Errorf("the error does not name the directory:\n%s", stderr)
		}
	})
}

// fakeGDBSignals prints the SigIgn and SigBlk lines of its own
// /proc/self/status.
const fakeGDBSignals = `#include <stdio.h>
#include <string.h>

int main(void) {
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "SigIgn:", 7) || !strncmp(line, "SigBlk:", 7))
			fputs(line, stdout);
	return fclose(f) != 0;
}
`

// launchSignals runs a program with SIGINT ignored ("ign") or default
// ("dfl"), SIGTERM default and neither blocked, whatever it was started
// with: launch ign|dfl PROG ARGS...
const launchSignals = `#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	sigset_t set;
	if (argc < 3)
		return 2;
	signal(SIGINT, strcmp(argv[1], "ign") ? SIG_DFL : SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	execv(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
`

// gdb starts with the signal dispositions pyattach was started with:
// pyattach's SIGINT/SIGTERM handling is undone before exec, so a SIGINT
// ignored by the shell (a background job) stays ignored in the debugger.
// pyattach is started by launchSignals with the dispositions each case
// names, not by the test binary: a child of the test binary gets SIGINT
// as the binary has it, ignored when the binary was started ignoring it
// (as a background job) but default while a test runs Main in this
// process (its Notify is undone in the child).
func TestSecuritySignalDispositionsAtExec(t *testing.T) {
	py := testenv.Debian(t).Exe
	bin := pyattachBin(t)
	home := t.TempDir()
	fake := filepath.Join(t.TempDir(), "bin")
	// A "gdb" that prints its own ignored and blocked signal masks, as
	// the kernel reports them for the process pyattach execs (a shell
	// script would report the shell, whose masks change while it forks).
	testenv.CC(t, fake, "gdb", fakeGDBSignals)
	launch := testenv.CC(t, t.TempDir(), "launch", launchSignals)
	env := scriptEnv(home)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + fake + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	mask := func(out, name string) uint64 {
		for _, l := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if err == nil {
					return n
				}
			}
		}
		t.Fatalf("no %s in:\n%s", name, out)
		return 0
	}
	const sigint, sigterm = 1 << (2 - 1), 1 << (15 - 1)
	for _, tc := range []struct {
		name    string
		sigint  string
		ignored uint64
	}{{"default", "dfl", 0}, {"sigint_ignored", "ign", sigint}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(launch, tc.sigint, bin, "gdb", "--args", py, "-c", "pass")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := mask(string(out), "SigIgn") & (sigint | sigterm); got != tc.ignored {
				t.Errorf("gdb's ignored SIGINT/SIGTERM mask %#x, want %#x:\n%s", got, tc.ignored, out)
			}
			if got := mask(string(out), "SigBlk") & (sigint | sigterm); got != 0 {
				t.Errorf("gdb starts with SIGINT/SIGTERM blocked (%#x)", got)
			}
		})
	}
}
