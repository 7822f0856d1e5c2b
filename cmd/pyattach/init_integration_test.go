package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
	"github.com/pyattach/pyattach/lldbgen"
)

// TestInitGDBAnyInterpreter: one project .gdbinit from
// `pyattach init`, read by a plain gdb started in the project, sets gdb
// up for whatever process it attaches to: Debian's python3.11 in the
// project's --copies venv, then pyenv's 3.12, one gdb each and both in
// one session; and for a core opened without its program. A process
// pyattach cannot set up for gets one line saying why.
func TestInitGDBAnyInterpreter(t *testing.T) {
	gdb := testenv.Need(t, "gdb")
	gcore := testenv.Need(t, "gcore")
	project := t.TempDir()
	henv := homeEnv(t)
	testenv.Venv(t, testenv.Debian(t).Exe, filepath.Join(project, ".venv"), "--copies")
	mustRunIn(t, "pyattach init", project, henv, pyattachBin(t), "--offline", "init", "--gdb", project)
	py312 := testenv.Pyenv(t, "3.12")
	pids := map[string]int{
		"debian 3.11 venv":       testenv.StartPython(t, filepath.Join(project, ".venv", "bin", "python"), ""),
		"pyenv " + py312.Version: testenv.StartPython(t, py312.Exe, ""),
	}
	gdbinit := filepath.Join(project, ".gdbinit")
	var session []string
	for what, pid := range pids {
		out, _ := runIn(t, project, henv, gdb, "-nx", "-x", gdbinit, "-batch", "-p", strconv.Itoa(pid), "-ex", "py-bt")
		checkPyBt(t, what+": plain gdb -x .gdbinit -p", out)
		if strings.Contains(out, "pyattach:") {
			t.Errorf("%s: pyattach complained:\n%s", what, out)
		}
		session = append(session, "-ex", "attach "+strconv.Itoa(pid), "-ex", "py-bt", "-ex", "detach")
	}
	out, _ := runIn(t, project, henv, gdb, append([]string{"-nx", "-x", gdbinit, "-batch"}, session...)...)
	if n := strings.Count(out, "Traceback (most recent call first):"); n != 2 || strings.Contains(out, "pyattach:") {
		t.Errorf("one gdb attached in turn to both: %d tracebacks, want 2:\n%s", n, out)
	}
	checkPyBt(t, "one gdb, both processes", out)

	// A core, opened without its program.
	dir := t.TempDir()
	pid := pids["pyenv "+py312.Version]
	mustRunIn(t, "gcore", dir, nil, gcore, "-o", filepath.Join(dir, "core"), strconv.Itoa(pid))
	out, _ = runIn(t, project, henv, gdb, "-nx", "-x", gdbinit, "-batch", "-c", filepath.Join(dir, "core."+strconv.Itoa(pid)), "-ex", "py-bt")
	checkPyBt(t, "plain gdb -x .gdbinit -c CORE", out)

	// Not Python: one line naming it, and the command that checks.
	sh := exec.Command("sh", "-c", "echo ready; exec sleep 600")
	testenv.Start(t, sh)
	sleep := sh.Process.Pid
	out, _ = runIn(t, project, henv, gdb, "-nx", "-x", gdbinit, "-batch", "-p", strconv.Itoa(sleep))
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "pyattach") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "not a Python process") || !strings.Contains(lines[0], "ps -ef") {
		t.Errorf("gdb attached to sleep: want one pyattach line naming the mismatch and a command:\n%s", out)
	}
}

// TestLLDBQuietScripts: pyattach's lldb scripts are sourced
// without echoing their commands: before py-bt's traceback come only
// the driver's own lines and lldb's attach report; an error in a script
// sourced that way is still shown.
func TestLLDBQuietScripts(t *testing.T) {
	lldb := testenv.Need(t, "lldb")
	pid := startVenvCopies(t, testenv.Debian(t).Exe)
	out := mustRunIn(t, "pyattach lldb", t.TempDir(), homeEnv(t), pyattachBin(t), "lldb", "-p", strconv.Itoa(pid), "-b", "-o", "py-bt")
	checkPyBt(t, "pyattach lldb -p", out)
	before, _, _ := strings.Cut(out, "Traceback (most recent call first):")
	lines := strings.Split(strings.TrimSpace(before), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "(lldb) #") || strings.HasPrefix(l, "(lldb) script") || strings.HasPrefix(l, "(lldb) command script") || strings.HasPrefix(l, "Executing commands in") {
			t.Errorf("lldb echoed pyattach's script: %q", l)
		}
	}
	// command source (the script before the target), process attach,
	// its 3-line stop report, 2 lines of module and architecture,
	// command source (the script once the target exists: the walker's
	// frame provider in lldb 22), the py-bt command.
	if len(lines) > 9 {
		t.Errorf("%d lines before the traceback, want at most 9:\n%s", len(lines), before)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.lldb")
	wrapper := filepath.Join(dir, "wrapper.lldb")
	text, err := lldbgen.QuietSource(bad)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := lldbgen.QuietSourceCommand(wrapper)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("# a comment\nsettings set no-such.setting 1\nscript print('PRINTED')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrapper, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = runIn(t, dir, []string{"PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages"}, lldb, "-b", "-O", cmd)
	if !strings.Contains(out, "no-such.setting") || !strings.Contains(out, "PRINTED") || strings.Contains(out, "a comment") {
		t.Errorf("a quietly sourced script must show its errors and prints, not its commands:\n%s", out)
	}
}

// TestInitLLDBTrust: lldb reads no project .lldbinit by
// itself and warns about it at every start. `init --lldb` says what to
// run; `init --lldb --trust` adds the one ~/.lldbinit line after which a
// plain `lldb -p PID` started in the project reads the file once (py-bt
// works), without the warning, also when the user's own ~/.lldbinit
// turns target.load-cwd-lldbinit on; started elsewhere lldb does not
// read it. Once the line is there, init stops asking for it (for gdb's
// line too).
func TestInitLLDBTrust(t *testing.T) {
	lldb := testenv.Need(t, "lldb")
	project := t.TempDir()
	henv := append(homeEnv(t), "PYTHONPATH=/usr/lib/llvm-14/lib/python3.11/dist-packages")
	home := strings.TrimPrefix(henv[0], "HOME=")
	testenv.Venv(t, testenv.Debian(t).Exe, filepath.Join(project, ".venv"), "--copies")
	pid := strconv.Itoa(testenv.StartPython(t, filepath.Join(project, ".venv", "bin", "python"), ""))
	const marker = "PROJECT-LLDBINIT-READ"
	mark := func() {
		f, err := os.OpenFile(filepath.Join(project, ".lldbinit"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("script print(\"" + marker + "\")\n"); err != nil {
			t.Fatal(err)
		}
	}
	const warning = "not being read"

	out := mustRunIn(t, "pyattach init --lldb", project, henv, pyattachBin(t), "--offline", "init", "--lldb", "--gdb", project)
	if !strings.Contains(out, "pyattach init --lldb --trust") {
		t.Errorf("init --lldb without --trust must say what makes lldb read the file:\n%s", out)
	}
	mark()
	out, _ = runIn(t, project, henv, lldb, "-b", "-o", "py-bt", "-p", pid)
	if !strings.Contains(out, warning) || strings.Contains(out, marker) {
		t.Errorf("untrusted: lldb should warn and skip the project file:\n%s", out)
	}

	out = mustRunIn(t, "pyattach init --lldb --trust", project, henv, pyattachBin(t), "--offline", "init", "--lldb", "--gdb", "--trust", project)
	if !strings.Contains(out, "trusted "+filepath.Join(project, ".lldbinit")) {
		t.Errorf("init --lldb --trust:\n%s", out)
	}
	mark()
	userInit := filepath.Join(home, ".lldbinit")
	for _, prefix := range []string{"", "settings set target.load-cwd-lldbinit true\n"} {
		if prefix != "" {
			data, err := os.ReadFile(userInit)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(userInit, append([]byte(prefix), data...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, _ = runIn(t, project, henv, lldb, "-b", "-o", "py-bt", "-p", pid)
		checkPyBt(t, "trusted: plain lldb -p in the project "+strconv.Quote(prefix), out)
		if n := strings.Count(out, marker); n != 1 || strings.Contains(out, warning) {
			t.Errorf("trusted (~/.lldbinit starting %q): project file read %d times, want 1, and no warning:\n%s", prefix, n, out)
		}
	}
	out, _ = runIn(t, t.TempDir(), henv, lldb, "-b", "-o", "script print('started')")
	if strings.Contains(out, marker) {
		t.Errorf("lldb started in another directory read the project file:\n%s", out)
	}

	out = mustRunIn(t, "pyattach init again", project, henv, pyattachBin(t), "--offline", "init", "--lldb", "--gdb", project)
	if strings.Contains(out, "--trust") || strings.Contains(out, "add this line") {
		t.Errorf("init repeated a trust hint although the lines are there:\n%s", out)
	}
}
