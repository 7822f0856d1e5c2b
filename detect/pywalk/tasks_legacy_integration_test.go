package pywalk

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// legacyTasksPy runs asyncio tasks that hold still: a TaskGroup of workers
// (worker -> middle -> leaf -> asyncio.sleep), a task awaiting another
// task, one waiting on a Future that never completes, and a second event
// loop in another thread with its own tasks. Its one line names every
// task (asyncio.all_tasks of both loops): "ready NAME NAME ...".
const legacyTasksPy = `import asyncio, threading


async def leaf(n):
    await asyncio.sleep(1000)


async def middle(n):
    await leaf(n)


async def worker(n):
    await middle(n)


async def waiter(fut):
    await fut


async def awaiter(t):
    await t


def names():
    return [t.get_name() for t in asyncio.all_tasks()]


async def other(started, out):
    asyncio.current_task().set_name("other-main")
    t = asyncio.create_task(worker(9), name="other-worker")
    await asyncio.sleep(0)
    out.extend(names())
    started.set()
    await t


async def main():
    asyncio.current_task().set_name("main")
    started, other_names = threading.Event(), []
    threading.Thread(target=asyncio.run, args=(other(started, other_names),), daemon=True).start()
    fut = asyncio.get_running_loop().create_future()
    async with asyncio.TaskGroup() as tg:
        for i in range(3):
            tg.create_task(worker(i), name="worker-%d" % i)
        target = tg.create_task(worker(3), name="awaited")
        tg.create_task(awaiter(target), name="awaiter")
        tg.create_task(waiter(fut), name="future-waiter")
        await asyncio.sleep(0)
        started.wait()
        print("ready " + " ".join(sorted(names() + other_names)), flush=True)


asyncio.run(main())
`

// subinterpTasksPy runs an event loop in a subinterpreter (in a thread)
// and one in the main interpreter; its one line names every task.
const subinterpTasksPy = `import asyncio, threading
try:
    import _interpreters as interpreters
except ImportError:
    import _xxsubinterpreters as interpreters

code = """
import asyncio

async def sub_worker():
    await asyncio.sleep(1000)

async def main():
    asyncio.current_task().set_name("sub-main")
    await asyncio.gather(*[asyncio.create_task(sub_worker(), name="sub-%d" % i) for i in range(2)])

asyncio.run(main())
"""
threading.Thread(target=interpreters.run_string, args=(interpreters.create(), code), daemon=True).start()


async def worker():
    await asyncio.sleep(1000)


async def main():
    asyncio.current_task().set_name("main")
    t = asyncio.create_task(worker(), name="main-worker")
    await asyncio.sleep(1)
    print("ready main main-worker sub-0 sub-1 sub-main", flush=True)
    await t


asyncio.run(main())
`

// tasksSnippet runs legacy_task_addrs in gdb through the walker and
// prints each task's name (TaskObj.task_name), the total and the error.
const tasksSnippet = `import pyattach_gdb
import pyattach_walk_tasks_legacy as tl
w = pyattach_gdb.walker()
addrs, total, err = tl.legacy_task_addrs(w, 1000)
for a in addrs:
    print("@@task 0x%x %s" % (a, w.string(w.ptrv(a + w.L.off("TaskObj.task_name")))))
print("@@total %d" % total)
print("@@error %s" % err)
`

// tasksLLDBSnippet is tasksSnippet for lldb, imported as a module.
const tasksLLDBSnippet = `import lldb
import pyattach_lldb
import pyattach_walk_tasks_legacy as tl
target = lldb.debugger.GetSelectedTarget()
w = pyattach_lldb._walker(target, target.GetProcess())
addrs, total, err = tl.legacy_task_addrs(w, 1000)
for a in addrs:
    print("@@task 0x%x %s" % (a, w.string(w.ptrv(a + w.L.off("TaskObj.task_name")))))
print("@@total %d" % total)
print("@@error %s" % err)
`

var taskLineRe = regexp.MustCompile(`(?m)^@@task (0x[0-9a-f]+) (.*)$`)

// checkTasks compares the tasks the walker found in gdb's output with
// the names the program printed.
func checkTasks(t *testing.T, what, out string, want []string) {
	t.Helper()
	var names []string
	addrs := map[string]bool{}
	for _, m := range taskLineRe.FindAllStringSubmatch(out, -1) {
		if addrs[m[1]] {
			t.Errorf("%s: task %s listed twice", what, m[1])
		}
		addrs[m[1]] = true
		names = append(names, m[2])
	}
	sort.Strings(names)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("%s: tasks %q, the program has %q", what, names, want)
	}
	if !strings.Contains(out, fmt.Sprintf("@@total %d\n", len(want))) {
		t.Errorf("%s: the total is not %d", what, len(want))
	}
	if !strings.Contains(out, "@@error None\n") {
		t.Errorf("%s: legacy_task_addrs gave an error", what)
	}
	if t.Failed() {
		t.Logf("%s:\n%s", what, out)
	}
}

// readyTasks is the task names of legacyTasksPy's ready line.
func readyTasks(t *testing.T, line string) []string {
	t.Helper()
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "ready" {
		t.Fatalf("the asyncio program printed %q", line)
	}
	return f[1:]
}

// TestLegacyTaskAddrs: legacy_task_addrs finds every asyncio task of
// both event loops of legacyTasksPy (by each Task's task_name, read through the
// walker in gdb, and in lldb but in the roots), live and from a gcore core, under pyenv's 3.11 and
// 3.12, a stripped copy of 3.12, Debian's 3.11, and Debian's 3.13 and
// the free-threaded 3.13t in the trixie root (their own namespaces); and
// the tasks of a subinterpreter's event loop beside the main one's.
func TestLegacyTaskAddrs(t *testing.T) {
	dir := walkerDebuggers(t)
	snippet := filepath.Join(t.TempDir(), "tasks.py")
	lldbSnippet := filepath.Join(t.TempDir(), "tasks_lldb.py")
	if err := os.WriteFile(snippet, []byte(tasksSnippet), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lldbSnippet, []byte(tasksLLDBSnippet), 0o644); err != nil {
		t.Fatal(err)
	}
	lldbTasks := func(in interp, args ...string) string {
		args = append(append([]string{"-b"}, args...),
			"-o", "command script import "+filepath.Join(dir, "pyattach_lldb.py"),
			"-o", fmt.Sprintf("script pyattach_lldb.setup(version=%q, flags=%q)", in.version, in.flags),
			"-o", "command script import "+lldbSnippet)
		return run(t, testenv.LLDBEnv(), "lldb", args...)
	}
	type build struct {
		name    string
		exe     string
		version string
		flags   string
		strip   bool
	}
	var builds []build
	for _, minor := range []string{"3.11", "3.12"} {
		p := testenv.Pyenv(t, minor)
		exe := filepath.Join(p.Prefix, "bin", "python"+minor)
		builds = append(builds, build{"pyenv-" + p.Version, exe, p.Version, p.ABIFlags, false})
		if minor == "3.12" {
			builds = append(builds, build{"pyenv-" + p.Version + "-stripped", exe, p.Version, p.ABIFlags, true})
		}
	}
	deb := testenv.Debian(t)
	builds = append(builds, build{"system-" + filepath.Base(deb.Exe), deb.Exe, deb.Version, deb.ABIFlags, false})
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			testenv.Parallel(t)
			in := interp{version: b.version, flags: b.flags}
			exe, env := b.exe, []string(nil)
			if b.strip {
				exe, env = testenv.Stripped(t, b.exe)
			}
			app := filepath.Join(t.TempDir(), "app.py")
			os.WriteFile(app, []byte(legacyTasksPy), 0o644)
			cmd := exec.Command(exe, app)
			cmd.Env = append(os.Environ(), env...)
			want := readyTasks(t, testenv.Start(t, cmd))
			pid := strconv.Itoa(cmd.Process.Pid)
			live := run(t, nil, "gdb", gdbArgs(dir, in, "-p", pid, "-ex", "source "+snippet)...)
			checkTasks(t, "gdb live", live, want)
			checkTasks(t, "lldb live", lldbTasks(in, "-p", pid), want)
			core, _ := gcore(t, pid)
			cmd.Process.Signal(syscall.SIGKILL)
			fromCore := run(t, nil, "gdb", gdbArgs(dir, in, exe, core, "-ex", "source "+snippet)...)
			checkTasks(t, "gdb gcore core", fromCore, want)
			checkTasks(t, "lldb gcore core", lldbTasks(in, "-c", core, exe), want)
		})
	}
	// Tasks of every interpreter: a subinterpreter's event loop too
	// (3.12+: a subinterpreter of its own GIL runs _asyncio).
	t.Run("pyenv-subinterpreter", func(t *testing.T) {
		testenv.Parallel(t)
		p := testenv.Pyenv(t, "3.12+")
		in := interp{version: p.Version, flags: p.ABIFlags}
		app := filepath.Join(t.TempDir(), "app.py")
		os.WriteFile(app, []byte(subinterpTasksPy), 0o644)
		cmd := exec.Command(filepath.Join(p.Prefix, "bin", "python3"), app)
		want := readyTasks(t, testenv.Start(t, cmd))
		live := run(t, nil, "gdb", gdbArgs(dir, in, "-p", strconv.Itoa(cmd.Process.Pid), "-ex", "source "+snippet)...)
		checkTasks(t, "gdb live", live, want)
	})
	// Debian's 3.13 and the free-threaded 3.13t that make-roots.sh
	// builds, in the trixie root.
	t.Run("roots", func(t *testing.T) {
		testenv.NeedRoot(t, "running a root's Python in its own namespaces (unshare, chroot)")
		var roots []rootInterp
		for _, r := range testenv.Roots(t) {
			if strings.HasPrefix(r.Minor, "3.13") {
				roots = append(roots, r)
			}
		}
		if len(roots) == 0 {
			testenv.Missing(t, "no Debian root with Python 3.13; make it with: sudo scripts/make-roots.sh")
		}
		for _, ri := range roots {
			t.Run(ri.Suite+"-python"+ri.Minor, func(t *testing.T) {
				testenv.Parallel(t)
				proc, line := startSourceInRoot(t, ri, legacyTasksPy, "epoll_wait")
				want := readyTasks(t, line)
				proot := fmt.Sprintf("/proc/%d/root", proc.pid)
				ps := strconv.Itoa(proc.pid)
				live := run(t, nil, "gdb", rootGdb(dir, proot, ri, "None", "-p", ps, "-ex", "source "+snippet)...)
				checkTasks(t, "live", live, want)
				core, _ := gcore(t, ps, "-iex", "set sysroot "+proot, filepath.Join(proot, ri.Exe()))
				fromCore := run(t, nil, "gdb", rootGdb(dir, ri.Dir, ri, "None", core, "-ex", "source "+snippet)...)
				checkTasks(t, "gcore core", fromCore, want)
			})
		}
	})
}
