//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/testenv"
)

// tasksLegacyCase is one interpreter TestTasksLegacy runs the asyncio
// program under: a pyenv build (exe; strip: a stripped copy of it;
// core: a gcore core of it read too), or a root's (root set).
type tasksLegacyCase struct {
	name  string
	exe   string
	strip bool
	core  bool
	root  *factsRoot
}

// TestTasksLegacy: the asyncio program on Pythons without the asyncio
// debug offsets (3.11-3.13, whose tasks are found through sys.modules):
// pyenv's 3.11 and 3.12, a stripped copy of the 3.12, and Debian's 3.13
// in its root. pyattach dump --tasks --json (through both readers) has
// every task by name, the workers' coroutine stacks, the awaits, the
// cycle and the thread running "blocking"; dump --tasks and gdb's and
// lldb's py-tasks print the tree; a gcore core of the 3.12 read by dump
// --tasks and gdb's and lldb's py-tasks gives the same tasks.
func TestTasksLegacy(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	gcore := testenv.Need(t, "gcore")
	app := tasksApp(t)
	var cases []tasksLegacyCase
	for _, minor := range []string{"3.11", "3.12"} {
		p := testenv.Pyenv(t, minor)
		cases = append(cases, tasksLegacyCase{name: "pyenv-" + p.Version, exe: p.Exe, core: minor == "3.12"})
		if minor == "3.12" {
			cases = append(cases, tasksLegacyCase{name: "pyenv-" + p.Version + "-stripped", exe: p.Exe, strip: true})
		}
	}
	found := false
	for _, r := range factsRoots(t) {
		v, err := pyversion.Parse(filepath.Base(r.exe)[len("python"):])
		if err != nil || r.freeThreaded || r.strip || v.Minor() != 13 {
			continue
		}
		r := r
		cases = append(cases, tasksLegacyCase{name: r.name, root: &r})
		found = true
	}
	if !found {
		testenv.Missing(t, "no root with Debian's Python 3.13 in %s", testenv.RootsDir())
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			var pid int
			var appPath, program string
			if c.root != nil {
				pid, _, program = startFactsRoot(t, *c.root, app, false)
				appPath = "/mnt/app.py"
			} else {
				program = c.exe
				var pyenv []string
				if c.strip {
					program, pyenv = testenv.Stripped(t, c.exe)
				}
				pid = testenv.StartPython(t, program, app, pyenv...)
				appPath = processArg(t, pid, 1)
			}
			ps := strconv.Itoa(pid)
			bin := pyattachBin(t)

			js, _ := pyattachOK(t, "dump --tasks --json", bin, env, "dump", "--tasks", "--json", ps)
			live := parseTasks(t, "dump --tasks --json", js)
			checkTasks(t, "dump --tasks --json", live, true, false)
			js, _ = pyattachOK(t, "dump --tasks --json --reader gdb", bin, env, "dump", "--tasks", "--json", "--reader", "gdb", ps)
			checkTasks(t, "dump --tasks --json --reader gdb", parseTasks(t, "dump --tasks --json --reader gdb", js), true, false)
			text, _ := pyattachOK(t, "dump --tasks", bin, env, "dump", "--tasks", ps)
			checkTasksText(t, "dump --tasks", text, appPath, live, true)

			out := mustRunIn(t, "pyattach gdb py-tasks", "", env, bin, "gdb", "-nx", "-batch", "-p", ps, "-ex", "py-tasks")
			checkTasksText(t, "gdb py-tasks", out, appPath, live, true)
			out = mustRunIn(t, "pyattach lldb py-tasks", "", env, bin, "lldb", "-b", "-p", ps, "-o", "py-tasks")
			checkTasksText(t, "lldb py-tasks", out, appPath, live, true)

			if !c.core {
				return
			}
			core := filepath.Join(t.TempDir(), "core")
			if out, err := exec.Command(gcore, "-o", core, ps).CombinedOutput(); err != nil {
				t.Fatalf("gcore: %v\n%s", err, out)
			}
			core += "." + ps
			js, _ = pyattachOK(t, "core: dump --tasks --json", bin, env, "dump", "--tasks", "--json", core)
			fromCore := parseTasks(t, "core: dump --tasks --json", js)
			checkTasks(t, "core: dump --tasks --json", fromCore, true, false)
			text, _ = pyattachOK(t, "core: dump --tasks", bin, env, "dump", "--tasks", core)
			checkTasksText(t, "core: dump --tasks", text, appPath, live, true)
			out = mustRunIn(t, "pyattach gdb core py-tasks", "", env, bin, "gdb", "-nx", "-batch", program, core, "-ex", "py-tasks")
			checkTasksText(t, "core: gdb py-tasks", out, appPath, live, true)
			out = mustRunIn(t, "pyattach lldb core py-tasks", "", env, bin, "lldb", program, "-c", core, "-b", "-o", "py-tasks")
			checkTasksText(t, "core: lldb py-tasks", out, appPath, live, true)
		})
	}
}

// processArg is argument i of pid's command line (1: the script a
// Python runs).
func processArg(t *testing.T, pid, i int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	if i >= len(args) {
		t.Fatalf("pid %d's command line %q has no argument %d", pid, args, i)
	}
	return args[i]
}
