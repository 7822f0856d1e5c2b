//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/pyversion"
	"github.com/pyattach/pyattach/detect/testenv"
)

// tasksApp is the shared asyncio program (testdata/asyncio/app.py):
// named workers under a TaskGroup (worker -> middle -> leaf ->
// asyncio.sleep), a task awaiting another, one awaiting a Future nobody
// completes, two waiting on each other's Event, two awaiting each other
// (a cycle), and a thread whose loop runs a task that blocks.
func tasksApp(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "asyncio", "app.py"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tasksOut is what dump --tasks --json prints of tasks and threads.
type tasksOut struct {
	Threads []struct {
		TID  int     `json:"tid"`
		Name *string `json:"name"`
		Task *struct {
			ID   uint64 `json:"id"`
			Name string `json:"name"`
		} `json:"task"`
	} `json:"threads"`
	Tasks []struct {
		ID     uint64 `json:"id"`
		Name   string `json:"name"`
		State  string `json:"state"`
		Frames []struct {
			Function string `json:"function"`
			File     string `json:"file"`
			Line     *int   `json:"line"`
		} `json:"frames"`
		Awaiting        *uint64  `json:"awaiting"`
		AwaitingType    string   `json:"awaiting_type"`
		AwaitedBy       []uint64 `json:"awaited_by"`
		RunningInThread *int     `json:"running_in_thread"`
	} `json:"tasks"`
	TasksTotal int        `json:"tasks_total"`
	TaskCycles [][]uint64 `json:"task_cycles"`
	TasksError string     `json:"tasks_error"`
}

func parseTasks(t *testing.T, what, js string) tasksOut {
	t.Helper()
	var d tasksOut
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatalf("%s: bad JSON: %v\n%s", what, err, js)
	}
	if d.TasksError != "" {
		t.Fatalf("%s: tasks_error %q", what, d.TasksError)
	}
	return d
}

// byName is the tasks of d by name.
func (d tasksOut) byName() map[string]int {
	out := map[string]int{}
	for i, tk := range d.Tasks {
		out[tk.Name] = i
	}
	return out
}

// checkTasks checks what a user of the app would: every task by name,
// the workers' coroutine stacks, the awaits, the cycle (and the event
// pair not called one), and the thread running "blocking" (live only:
// threads is false for the walker's own JSON of a core). groups: the
// TaskGroup's tasks are awaited by main (3.14+ record the edge; before,
// main awaits a Future of the group's own).
func checkTasks(t *testing.T, what string, d tasksOut, threads, groups bool) {
	t.Helper()
	names := d.byName()
	want := []string{"main", "worker-0", "worker-1", "worker-2", "waits-for-worker-0", "never-done",
		"event-a", "event-b", "cycle-a", "cycle-b", "ready", "blocking"}
	for _, n := range want {
		if _, ok := names[n]; !ok {
			t.Errorf("%s: no task %q among %v", what, n, names)
		}
	}
	if t.Failed() {
		return
	}
	if d.TasksTotal != len(d.Tasks) || len(d.Tasks) < len(want) {
		t.Errorf("%s: tasks_total %d, %d tasks listed", what, d.TasksTotal, len(d.Tasks))
	}
	task := func(n string) int { return names[n] }
	for _, w := range []string{"worker-0", "worker-1", "worker-2"} {
		var fns []string
		for _, f := range d.Tasks[task(w)].Frames {
			fns = append(fns, f.Function)
		}
		if strings.Join(fns, " ") != "sleep leaf middle worker" {
			t.Errorf("%s: %s's coroutine stack %v, want sleep leaf middle worker", what, w, fns)
		}
		if f := d.Tasks[task(w)].Frames; len(f) == 4 && (f[1].Line == nil || *f[1].Line != 30 || !strings.HasSuffix(f[1].File, "app.py")) {
			t.Errorf("%s: %s's leaf frame %+v, want app.py line 30", what, w, f[1])
		}
		if d.Tasks[task(w)].State != "pending" {
			t.Errorf("%s: %s is %q", what, w, d.Tasks[task(w)].State)
		}
		if groups && !hasID(d.Tasks[task(w)].AwaitedBy, d.Tasks[task("main")].ID) {
			t.Errorf("%s: %s is not awaited by main", what, w)
		}
	}
	w0 := d.Tasks[task("worker-0")]
	if a := d.Tasks[task("waits-for-worker-0")].Awaiting; a == nil || *a != w0.ID {
		t.Errorf("%s: waits-for-worker-0 awaits %v, want worker-0 (%#x)", what, a, w0.ID)
	}
	if !hasID(w0.AwaitedBy, d.Tasks[task("waits-for-worker-0")].ID) {
		t.Errorf("%s: worker-0 is not awaited by waits-for-worker-0", what)
	}
	nd := d.Tasks[task("never-done")]
	if nd.Awaiting == nil || !strings.Contains(nd.AwaitingType, "Future") {
		t.Errorf("%s: never-done awaits %v (%q), want a Future", what, nd.Awaiting, nd.AwaitingType)
	}
	a, b := d.Tasks[task("cycle-a")].ID, d.Tasks[task("cycle-b")].ID
	ea, eb := d.Tasks[task("event-a")].ID, d.Tasks[task("event-b")].ID
	found := false
	for _, c := range d.TaskCycles {
		s := append([]uint64(nil), c...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		lo, hi := min(a, b), max(a, b)
		if len(s) == 2 && s[0] == lo && s[1] == hi {
			found = true
		}
		if hasID(c, ea) || hasID(c, eb) {
			t.Errorf("%s: the event pair reported as a cycle %v: no await edge joins them", what, c)
		}
	}
	if !found {
		t.Errorf("%s: cycles %v lack cycle-a <-> cycle-b", what, d.TaskCycles)
	}
	bl := d.Tasks[task("blocking")]
	if len(bl.Frames) < 2 || bl.Frames[0].Function != "blocking" || bl.Frames[1].Function != "blocking_task" {
		t.Errorf("%s: blocking's frames %+v, want blocking, blocking_task", what, bl.Frames)
	}
	if !threads {
		return
	}
	var runner int
	for _, th := range d.Threads {
		if th.Task != nil {
			if th.Task.ID != bl.ID || th.Name == nil || *th.Name != "other-loop" {
				t.Errorf("%s: thread %d (%v) runs task %+v, want other-loop running blocking", what, th.TID, th.Name, th.Task)
			}
			runner = th.TID
		}
	}
	if bl.RunningInThread == nil || *bl.RunningInThread != runner || runner == 0 {
		t.Errorf("%s: blocking runs in thread %v, the threads say %d", what, bl.RunningInThread, runner)
	}
}

func hasID(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// asyncioPS runs `python3.X -m asyncio ps` of the root (3.14+'s own
// tool, the oracle) inside pid's mount and PID namespaces and returns
// its tasks (id -> name) and await edges (task id -> awaiter ids).
func asyncioPS(t *testing.T, pid int, exe string) (map[uint64]string, map[uint64][]uint64) {
	t.Helper()
	nsenter := testenv.Need(t, "nsenter")
	nspid := strconv.Itoa(pid)
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "NSpid:" {
				nspid = f[len(f)-1]
			}
		}
	}
	out, err := exec.Command(nsenter, "-t", strconv.Itoa(pid), "-m", "-p", "-r", exe, "-m", "asyncio", "ps", nspid).CombinedOutput()
	if err != nil {
		t.Fatalf("%s -m asyncio ps: %v\n%s", exe, err, out)
	}
	tasks, edges := map[uint64]string{}, map[uint64][]uint64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[1], "0x") {
			continue
		}
		id, err1 := strconv.ParseUint(f[1][2:], 16, 64)
		by, err2 := strconv.ParseUint(strings.TrimPrefix(f[len(f)-1], "0x"), 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("asyncio ps: cannot read %q", sc.Text())
		}
		tasks[id] = f[2]
		if by != 0 {
			edges[id] = append(edges[id], by)
		}
	}
	if len(tasks) == 0 {
		t.Fatalf("asyncio ps printed no task:\n%s", out)
	}
	return tasks, edges
}

// checkOracle: every task and await edge asyncio ps prints is in d.
func checkOracle(t *testing.T, what string, d tasksOut, tasks map[uint64]string, edges map[uint64][]uint64) {
	t.Helper()
	ours := map[uint64]int{}
	for i, tk := range d.Tasks {
		ours[tk.ID] = i
	}
	for id, name := range tasks {
		i, ok := ours[id]
		if !ok {
			t.Errorf("%s: asyncio ps lists task %#x %q, pyattach does not", what, id, name)
			continue
		}
		if d.Tasks[i].Name != name {
			t.Errorf("%s: task %#x is %q, asyncio ps says %q", what, id, d.Tasks[i].Name, name)
		}
		for _, by := range edges[id] {
			if !hasID(d.Tasks[i].AwaitedBy, by) {
				t.Errorf("%s: asyncio ps says %q is awaited by %#x (%q); pyattach's awaited_by %v", what, name, by, tasks[by], d.Tasks[i].AwaitedBy)
			}
		}
	}
}

// checkTasksText checks the tree py-tasks and dump print: the workers'
// stacks (app is app.py's path as the process has it; with source lines
// when source: a container's /mnt/app.py is not on this machine), the
// awaits, the cycle.
func checkTasksText(t *testing.T, what, out, app string, d tasksOut, source bool) {
	t.Helper()
	names := d.byName()
	want := []string{fmt.Sprintf(`File "%s", line 30, in leaf`, app)}
	if source {
		want = append(want, "await asyncio.sleep(3600 + n)")
	}
	for _, s := range append(want,
		fmt.Sprintf("Task worker-0 (%#x) [pending]", d.Tasks[names["worker-0"]].ID),
		fmt.Sprintf("awaits task worker-0 (%#x)", d.Tasks[names["worker-0"]].ID),
		fmt.Sprintf("Task blocking (%#x) [pending], running in thread", d.Tasks[names["blocking"]].ID),
		"cycle: cycle-",
	) {
		if !strings.Contains(out, s) {
			t.Errorf("%s: no %q in:\n%s", what, s, out)
		}
	}
}

// TestTasksRoots: the asyncio program on Debian's 3.14 and 3.15 in
// their roots (pivot_root containers), and stripped copies: pyattach
// dump --tasks (JSON through both readers, and text) has every task and
// await edge the root's own `python3.X -m asyncio ps` prints, the
// workers' coroutine stacks, the awaits, the cycle; gdb's and lldb's
// py-tasks print the tree; a gcore core read through pyattach gdb with
// the root as sysroot gives the same tasks, and lldb's py-tasks the tree.
func TestTasksRoots(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	gcore := testenv.Need(t, "gcore")
	app := tasksApp(t)
	var roots []factsRoot
	for _, r := range factsRoots(t) {
		v, err := pyversion.Parse(strings.TrimSuffix(filepath.Base(r.exe), "t")[len("python"):])
		if err != nil || r.freeThreaded || v.Minor() < 14 || r.strip {
			continue
		}
		roots = append(roots, r)
		s := r
		s.name += "-stripped"
		s.strip = true
		roots = append(roots, s)
	}
	if len(roots) == 0 {
		testenv.Missing(t, "no root with Python 3.14 or newer in %s", testenv.RootsDir())
	}
	for _, r := range roots {
		t.Run(r.name, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			pid, _, program := startFactsRoot(t, r, app, false)
			ps := strconv.Itoa(pid)
			bin := pyattachBin(t)

			js, _ := pyattachOK(t, "dump --tasks --json", bin, env, "dump", "--tasks", "--json", ps)
			live := parseTasks(t, "dump --tasks --json", js)
			checkTasks(t, "dump --tasks --json", live, true, true)
			tasks, edges := asyncioPS(t, pid, r.exe)
			checkOracle(t, "dump --tasks --json", live, tasks, edges)

			js, _ = pyattachOK(t, "dump --tasks --json --reader gdb", bin, env, "dump", "--tasks", "--json", "--reader", "gdb", ps)
			viaGDB := parseTasks(t, "dump --tasks --json --reader gdb", js)
			checkTasks(t, "dump --tasks --json --reader gdb", viaGDB, true, true)
			checkOracle(t, "dump --tasks --json --reader gdb", viaGDB, tasks, edges)

			text, _ := pyattachOK(t, "dump --tasks", bin, env, "dump", "--tasks", ps)
			checkTasksText(t, "dump --tasks", text, "/mnt/app.py", live, true)
			if !strings.Contains(text, fmt.Sprintf("  Running asyncio task blocking (%#x)", live.Tasks[live.byName()["blocking"]].ID)) {
				t.Errorf("dump --tasks: the other-loop thread does not say it runs blocking:\n%s", text)
			}

			out := mustRunIn(t, "pyattach gdb py-tasks", "", env, bin, "gdb", "-nx", "-batch", "-p", ps, "-ex", "py-tasks")
			checkTasksText(t, "gdb py-tasks", out, "/mnt/app.py", live, true)
			out = mustRunIn(t, "pyattach lldb py-tasks", "", env, bin, "lldb", "-b", "-p", ps, "-o", "py-tasks")
			checkTasksText(t, "lldb py-tasks", out, "/mnt/app.py", live, true)

			core := filepath.Join(t.TempDir(), "core")
			if out, err := exec.Command(gcore, "-o", core, ps).CombinedOutput(); err != nil {
				t.Fatalf("gcore: %v\n%s", err, out)
			}
			core += "." + ps
			dumped := filepath.Join(t.TempDir(), "dump.json")
			out = mustRunIn(t, "pyattach gdb core py-tasks", "", env, bin, "gdb", "-nx", "-batch",
				"-iex", "set sysroot "+r.dir, program, core,
				"-ex", "py-tasks", "-ex", fmt.Sprintf("python pyattach_gdb.dump(%q, tasks=True)", dumped))
			checkTasksText(t, "core: gdb py-tasks", out, "/mnt/app.py", live, false)
			b, err := os.ReadFile(dumped)
			if err != nil {
				t.Fatalf("core: the walker wrote no JSON: %v\n%s", err, out)
			}
			// lldb finds the root's _asyncio module (3.14) by its name in
			// the root's lib-dynload: it has no sysroot for a core.
			minor := strings.TrimPrefix(filepath.Base(r.exe), "python")
			out = mustRunIn(t, "pyattach lldb core py-tasks", "", env, bin, "lldb",
				"-O", "settings append target.exec-search-paths "+filepath.Join(r.dir, "usr", "lib", "python"+minor, "lib-dynload"),
				program, "-c", core, "-b", "-o", "py-tasks")
			checkTasksText(t, "core: lldb py-tasks", out, "/mnt/app.py", live, false)
			fromCore := parseTasks(t, "core: walker JSON", string(b))
			checkTasks(t, "core: walker JSON", fromCore, false, true)
			checkOracle(t, "core: walker JSON", fromCore, tasks, edges)
		})
	}
}
