package pywalk

import (
	"bufio"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
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
	"time"

	"github.com/pyattach/pyattach/detect/pyoffsets"
	"github.com/pyattach/pyattach/detect/testenv"
)

// Debian's own builds of 3.13, 3.14 and 3.15, installed with their -dbg
// packages in the roots scripts/make-roots.sh makes with debootstrap,
// each run in its own mount and PID namespace: the container case, and
// versions that no offset table needs to know.

// rootInterp is one Python version in one root (testenv.Roots).
type rootInterp = testenv.Root

// inRoot is app.py running in a root: pid is the interpreter's pid as
// this machine sees it; a core the kernel dumps lands in dir.
type inRoot struct {
	pid  int
	dir  string
	done chan struct{} // closed when the namespace's processes have ended
}

// startInRoot runs app.py with the root's interpreter in new mount and
// PID namespaces, chrooted into the root, app.py's directory
// bind-mounted on the root's /mnt and the working directory there (where
// the kernel writes a core). The interpreter runs under the root's sh,
// the namespace's init, so that it gets signals as any process does.
func startInRoot(t *testing.T, ri rootInterp) inRoot {
	t.Helper()
	proc, line := startSourceInRoot(t, ri, appPy, testenv.TimeSleep...)
	if line != "ready" {
		t.Fatalf("%s in %s: app.py did not start: it printed %q", ri.Exe(), ri.Dir, line)
	}
	return proc
}

// startSourceInRoot is startInRoot for src as app.py, which prints one
// line when it is ready: that line is returned, once every thread of it
// sits in one of the C library functions sleeps names
// (testenv.WaitSyscall).
func startSourceInRoot(t *testing.T, ri rootInterp, src string, sleeps ...string) (inRoot, string) {
	t.Helper()
	unshare := testenv.Need(t, "unshare")
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "app.py"), []byte(src), 0o644)
	cmd := exec.Command(unshare, "--pid", "--mount", "--fork", "--kill-child", "--mount-proc="+filepath.Join(ri.Dir, "proc"),
		"sh", "-c", `mount --bind "$2" "$1/mnt" && ulimit -c unlimited && exec chroot "$1" /bin/sh -c 'cd /mnt && "$0" /mnt/app.py; :' "$3"`,
		"sh", ri.Dir, d, ri.Exe())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	ready := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		ready <- s.Text()
		for s.Scan() {
		}
	}()
	var line string
	select {
	case line = <-ready:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s in %s: app.py printed no ready line", ri.Exe(), ri.Dir)
	}
	pid := descendant(cmd.Process.Pid, "python"+ri.Minor)
	if pid == 0 {
		t.Fatalf("no python%s under unshare's pid %d (it printed %q)", ri.Minor, cmd.Process.Pid, line)
	}
	if len(sleeps) > 0 {
		testenv.WaitSyscall(t, pid, testenv.AllThreads(), sleeps...)
	}
	return inRoot{pid: pid, dir: d, done: done}, line
}

// descendant finds the process below pid whose executable is named exe.
func descendant(pid int, exe string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	for _, c := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(c)
		if err != nil {
			continue
		}
		if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", n)); filepath.Base(l) == exe {
			return n
		}
		if d := descendant(n, exe); d != 0 {
			return d
		}
	}
	return 0
}

// Without libthread_db for the root's glibc, gdb names threads by LWP
// only: "Thread 2 (LWP 349 "python3.13"):".
var rootGdbThreadRe = regexp.MustCompile(`^Thread \d+ \((?:.*\()?LWP (\d+)`)

// noTables makes the walker find no offset table, so that only the
// _Py_DebugOffsets in memory can give it a layout.
const noTables = `{"0.0": {}}`

// rootGdb runs gdb on the root's interpreter (sysroot: the root as the
// process sees it), with the walker loaded; tables is a Python
// expression for setup's tables ("None": the shipped ones).
func rootGdb(dir, sysroot string, ri rootInterp, tables string, args ...string) []string {
	a := []string{"-nx", "-batch", "-iex", "set auto-load off",
		"-iex", "set sysroot " + sysroot,
		"-iex", "set debug-file-directory " + filepath.Join(sysroot, "usr/lib/debug"),
		"-ex", fmt.Sprintf("python import sys; sys.path.insert(0, %q)", dir),
		"-ex", fmt.Sprintf("python import pyattach_gdb; pyattach_gdb.setup(version=%q, tables=%s)", ri.Minor, tables),
		filepath.Join(sysroot, ri.Exe()),
	}
	return append(a, args...)
}

// TestWalkerDebianRoots: Debian's 3.13, 3.14 and 3.15 (optimised, with
// their -dbg packages' debug files), each running in its own mount and
// PID namespace, in the host's gdb and lldb, live and from a gcore core:
// py-bt prints app.py's frames and lines for every thread, also with no
// offset table at all (the offsets come from _Py_DebugOffsets in the
// process's memory). CPython's own py-bt from the root's -dbg package
// is the oracle where it works; on 3.13 it cannot read the optimised
// eval loop's frame, which is why the walker exists.
func TestWalkerDebianRoots(t *testing.T) {
	testenv.NeedRoot(t, "running a root's Python in its own namespaces (unshare, chroot)")
	dir := walkerDebuggers(t)
	for _, ri := range testenv.Roots(t) {
		t.Run(ri.Suite+"-python"+ri.Minor, func(t *testing.T) {
			testenv.Parallel(t)
			proc := startInRoot(t, ri)
			pid := proc.pid
			proot := fmt.Sprintf("/proc/%d/root", pid)
			ps := strconv.Itoa(pid)

			ours := run(t, nil, "gdb", rootGdb(dir, proot, ri, "None", "-p", ps, "-ex", "thread apply all py-bt")...)
			got := stacks(ours, rootGdbThreadRe)
			checkApp(t, "gdb", got)
			if len(got) != 2 {
				t.Errorf("gdb: %d threads, want 2 (main and worker-1)", len(got))
			}
			// Source lines are read in the process's root.
			if !strings.Contains(ours, "    middle(0)") {
				t.Errorf("gdb: no source line of app.py (read under %s)", proot)
			}

			bare := run(t, nil, "gdb", rootGdb(dir, proot, ri, noTables, "-p", ps, "-ex", "thread apply all py-bt",
				"-ex", "python print('layout from', getattr(pyattach_gdb.walker().L, 'source', 'tables'))")...)
			sameStacks(t, "gdb, no offset table", stacks(bare, rootGdbThreadRe), got)
			if !strings.Contains(bare, "layout from _Py_DebugOffsets") {
				t.Errorf("gdb, no offset table: the layout did not come from _Py_DebugOffsets")
			}

			lldbOut := run(t, testenv.LLDBEnv(), "lldb", lldbArgs(dir, interp{version: ri.Minor}, "-p", ps)...)
			sameStacks(t, "lldb", stacks(lldbOut, lldbThreadRe), got)

			oracle := filepath.Join(proot, "usr/share/gdb/auto-load", ri.Exe()+"-gdb.py")
			var cp, both string
			if _, err := os.Stat(oracle); err != nil {
				t.Errorf("the root's -dbg package has no %s: %v", oracle, err)
			} else {
				cp = run(t, nil, "gdb", "-nx", "-batch", "-iex", "set auto-load off", "-iex", "set sysroot "+proot,
					"-iex", "set debug-file-directory "+filepath.Join(proot, "usr/lib/debug"),
					filepath.Join(proot, ri.Exe()), "-p", ps, "-ex", "source "+oracle, "-ex", "thread apply all py-bt")
				theirs := stacks(cp, rootGdbThreadRe)
				works := strings.Contains(cp, `File "/mnt/app.py"`)
				switch {
				case ri.Minor == "3.13":
					// The case the walker exists for.
					if works || !strings.Contains(cp, "(unable to read python frame information)") {
						t.Errorf("CPython's own py-bt on Debian's optimised 3.13 was expected to fail with \"unable to read python frame information\"")
					}
				case works:
					sameStacks(t, "gdb vs CPython's py-bt", got, theirs)
				default:
					// Nothing to compare with: the subtest's name says so.
					t.Run("cpython_py-bt_reads_no_frame_here_not_compared", func(t *testing.T) {
						t.Logf("CPython's own py-bt for %s:\n%s", ri.Minor, cp)
					})
				}
				// Both loaded: py-bt is CPython's where it reads every frame,
				// the walker's otherwise; either way app.py's frames.
				both = run(t, nil, "gdb", rootGdb(dir, proot, ri, "None", "-p", ps, "-ex", "source "+oracle,
					"-ex", "python pyattach_gdb.claim()", "-ex", "thread apply all py-bt")...)
				checkApp(t, "gdb with CPython's extension loaded", stacks(both, rootGdbThreadRe))
			}

			// A gcore core of the same process, read with the root as
			// sysroot. gdb 13 cannot read the guard pages that glibc 2.42+
			// puts inside thread stacks (MADV_GUARD_INSTALL, on Linux 6.13+):
			// it then leaves the whole stack mapping out of the core, and the
			// worker's frames that live on its C stack with it. Only the main
			// thread is then complete.
			core, gc := gcore(t, ps, "-iex", "set sysroot "+proot, filepath.Join(proot, ri.Exe()))
			want, name := got, "gcore_core_every_thread"
			if gcoreIncomplete(gc) {
				want, name = map[int][]frame{pid: got[pid]}, "gcore_core_main_thread_only_gdb_left_stack_memory_out"
			}
			only := func(m map[int][]frame) map[int][]frame {
				out := map[int][]frame{}
				for id := range want {
					out[id] = m[id]
				}
				return out
			}
			var coreOut, lldbCore string
			t.Run(name, func(t *testing.T) {
				if len(want) != len(got) {
					t.Logf("gcore could not read all of the process's memory:\n%s", gc)
				}
				coreOut = run(t, nil, "gdb", rootGdb(dir, ri.Dir, ri, noTables, core, "-ex", "thread apply all py-bt")...)
				sameStacks(t, "gdb gcore core", only(stacks(coreOut, rootGdbThreadRe)), want)
				lldbCore = run(t, testenv.LLDBEnv(), "lldb", lldbArgs(dir, interp{version: ri.Minor}, "-c", core, filepath.Join(ri.Dir, ri.Exe()))...)
				sameStacks(t, "lldb gcore core", only(stacks(lldbCore, lldbThreadRe)), want)
			})

			// The kernel's core of the same process (SIGABRT), written in its
			// working directory, /mnt: every thread complete.
			var kgdb, klldb string
			t.Run("kernel_core", func(t *testing.T) {
				if pat, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); strings.TrimSpace(string(pat)) != "core" {
					testenv.Missing(t, "kernel.core_pattern is %q, not core: the kernel writes no core in the process's directory (sysctl kernel.core_pattern=core)", strings.TrimSpace(string(pat)))
				}
				syscall.Kill(pid, syscall.SIGABRT)
				select {
				case <-proc.done:
				case <-time.After(60 * time.Second):
					t.Fatal("the aborted interpreter did not end")
				}
				kcore := filepath.Join(proc.dir, "core")
				if _, err := os.Stat(kcore); err != nil {
					t.Fatalf("the kernel wrote no core: %v", err)
				}
				kgdb = run(t, nil, "gdb", rootGdb(dir, ri.Dir, ri, noTables, kcore, "-ex", "thread apply all py-bt")...)
				sameStackSet(t, "gdb kernel core", stacks(kgdb, rootGdbThreadRe), got)
				klldb = run(t, testenv.LLDBEnv(), "lldb", lldbArgs(dir, interp{version: ri.Minor}, "-c", kcore, filepath.Join(ri.Dir, ri.Exe()))...)
				sameStackSet(t, "lldb kernel core", stacks(klldb, lldbThreadRe), got)
			})
			if t.Failed() {
				t.Logf("gdb:\n%s\ngdb, no table:\n%s\nlldb:\n%s\nCPython's py-bt:\n%s\nboth:\n%s\ngdb core:\n%s\nlldb core:\n%s\ngdb kernel core:\n%s\nlldb kernel core:\n%s",
					ours, bare, lldbOut, cp, both, coreOut, lldbCore, kgdb, klldb)
			}
		})
	}
}

// gcoreIncomplete tells whether gcore left memory out of the core: a
// read that failed, other than of the vsyscall page (never readable).
func gcoreIncomplete(out string) bool {
	for _, m := range gcoreFailRe.FindAllStringSubmatch(out, -1) {
		if m[1] != "0xffffffffff600000" {
			return true
		}
	}
	return false
}

var gcoreFailRe = regexp.MustCompile(`Memory read failed for corefile section, \d+ bytes at (0x[0-9a-f]+)`)

// sameStackSet compares the stacks of a kernel core, whose thread ids are
// those of the process's own PID namespace, with the live ones: the same
// stacks, whatever the ids.
func sameStackSet(t *testing.T, what string, got, want map[int][]frame) {
	t.Helper()
	set := func(m map[int][]frame) []string {
		var out []string
		for _, fs := range m {
			out = append(out, fmt.Sprint(fs))
		}
		sort.Strings(out)
		return out
	}
	if g, w := set(got), set(want); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("%s: stacks\n %v\nwant\n %v", what, g, w)
	}
}

// debugOffsetsSources are the builds of 3.13+ with DWARF here: pyenv's
// and the roots'.
func debugOffsetsSources(t *testing.T) []pyoffsets.Source {
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".pyenv")
	}
	var out []pyoffsets.Source
	for _, s := range append(pyoffsets.Discover(root, "/usr/lib/debug"), pyoffsets.DiscoverRoots(pyoffsets.RootsDir())...) {
		var maj, min int
		fmt.Sscanf(s.Version, "%d.%d", &maj, &min)
		if maj == 3 && min >= 13 {
			out = append(out, s)
		}
	}
	return out
}

// runtimeBytes reads the initial bytes of _PyRuntime from the ELF file
// (it is initialised data): the _Py_DebugOffsets the build wrote.
func runtimeBytes(path string, n int) ([]byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, err
	}
	for _, s := range syms {
		if s.Name != "_PyRuntime" {
			continue
		}
		for _, sec := range f.Sections {
			if sec.Type != elf.SHT_NOBITS && sec.Addr <= s.Value && s.Value+uint64(n) <= sec.Addr+sec.Size && sec.Addr != 0 {
				b := make([]byte, n)
				_, err := sec.ReadAt(b, int64(s.Value-sec.Addr))
				return b, err
			}
		}
	}
	return nil, fmt.Errorf("%s: no _PyRuntime in initialised data", path)
}

// walkerPython runs a Python snippet on the host's python3 with the
// walker importable; the snippet prints JSON.
func walkerPython(t *testing.T, dir, code, stdin string, v any, args ...string) {
	t.Helper()
	py := testenv.Need(t, "python3")
	cmd := exec.Command(py, append([]string{"-c", "import sys; sys.path.insert(0, sys.argv[1])\n" + code, dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("python printed %q: %v", out, err)
	}
}

// TestDebugOffsetsMatchDWARF checks what the walker knows of each minor
// version's _Py_DebugOffsets against the DWARF of every 3.13+ build here
// (pyenv's, Debian's in the roots, their debug builds): the members'
// order (each a uint64_t after the cookie), the values of enum
// _frameowner, and the Layout built from the struct as the build wrote
// it into _PyRuntime equal, field for field, to the offsets generated
// from the same DWARF.
func TestDebugOffsetsMatchDWARF(t *testing.T) {
	sources := debugOffsetsSources(t)
	if len(sources) == 0 {
		testenv.Missing(t, "no build of Python 3.13+ with DWARF here (pyenv's, or the roots of scripts/make-roots.sh)")
	}
	dir := walkerDir(t)
	var members map[string][]string
	walkerPython(t, dir, `import json, pyattach_walk as w
print(json.dumps(dict(("%d.%d" % k, v) for k, v in w.DEBUG_OFFSETS_MEMBERS.items())))`, "", &members)
	for _, s := range sources {
		s := s
		t.Run(s.Kind+"-"+s.Version+s.ABIFlags+"-"+filepath.Base(s.Path), func(t *testing.T) {
			testenv.Parallel(t)
			minor := strings.Join(strings.SplitN(s.Version, ".", 3)[:2], ".")
			d := testenv.DWARF(t, s.Debug)
			dm, err := pyoffsets.DebugOffsets(d)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := members[minor]
			if !ok {
				t.Fatalf("the walker does not know _Py_DebugOffsets of %s", minor)
			}
			if len(dm) != len(want)+1 || dm[0].Name != "cookie" || dm[0].Offset != 0 || dm[0].Size != 8 {
				t.Errorf("_Py_DebugOffsets has %d members (first %+v); the walker knows %d after the cookie", len(dm), dm[0], len(want))
			}
			for i, m := range dm[1:] {
				if i >= len(want) {
					break
				}
				if m.Name != want[i] || m.Offset != int64(8+8*i) || m.Size != 8 {
					t.Errorf("member %d: DWARF %s at %d (%d bytes), walker %s at %d", i+1, m.Name, m.Offset, m.Size, want[i], 8+8*i)
				}
			}

			owners, err := pyoffsets.Enumerators(d, "_frameowner")
			if err != nil {
				t.Fatal(err)
			}
			var first int64
			walkerPython(t, dir, `import json, pyattach_walk as w
print(json.dumps(w.frame_owner_skipped(tuple(int(x) for x in sys.argv[2].split(".")))))`, "", &first, minor)
			for name, v := range owners {
				notCode := name == "FRAME_OWNED_BY_CSTACK" || name == "FRAME_OWNED_BY_INTERPRETER"
				if notCode != (v >= first) {
					t.Errorf("%s = %d, but the walker skips owners from %d on", name, v, first)
				}
			}
			if owners["FRAME_OWNED_BY_GENERATOR"] != 1 {
				t.Errorf("FRAME_OWNED_BY_GENERATOR = %d, the walker has 1", owners["FRAME_OWNED_BY_GENERATOR"])
			}

			path := s.Path
			raw, err := runtimeBytes(path, 8+8*len(want))
			if err != nil {
				t.Fatal(err)
			}
			var layout map[string]int64
			walkerPython(t, dir, `import json, binascii, pyattach_walk as w
raw = binascii.unhexlify(sys.stdin.read().strip())
L = w.debug_offsets_layout(lambda a, n: raw[a - 4096:a - 4096 + n], 4096, sys.argv[2])
print(json.dumps(L.f if L else None))`, hex.EncodeToString(raw), &layout, s.ABIFlags)
			if layout == nil {
				t.Fatal("the walker found no _Py_DebugOffsets in the build's _PyRuntime")
			}
			fromDWARF, err := pyoffsets.Generate(s)
			if err != nil {
				t.Fatal(err)
			}
			compared := 0
			for k, v := range layout {
				if g, ok := fromDWARF[k]; ok {
					compared++
					if g != v {
						t.Errorf("%s: %d from _Py_DebugOffsets, %d in the DWARF", k, v, g)
					}
				}
			}
			for _, k := range []string{"_PyRuntimeState.interpreters.head", "PyThreadState.current_frame", "_PyInterpreterFrame.f_executable",
				"_PyInterpreterFrame.owner", "PyCodeObject.co_filename", "PyCodeObject._co_firsttraceable", "sizeof(PyCompactUnicodeObject)",
				"PyASCIIObject.state.kind:bit_offset", "PyASCIIObject.state.ascii:bit_offset"} {
				if _, ok := fromDWARF[k]; !ok {
					t.Errorf("%s is not in the DWARF", k)
				}
				if _, ok := layout[k]; !ok {
					t.Errorf("%s is not in the layout built from _Py_DebugOffsets", k)
				}
			}
			t.Logf("%s %s: %d members, %d layout fields equal to the DWARF's", s.Version, s.ABIFlags, len(dm)-1, compared)
		})
	}
}
