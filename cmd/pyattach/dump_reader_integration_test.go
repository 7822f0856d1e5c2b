package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyattach/pyattach/detect/testenv"
)

// readerApp runs three threads, each a few calls deep with locals, one
// of them in an except block, and sleeps in all of them.
const readerApp = `import sys, threading, time
def leaf(n, tag):
    table = {"n": n, "tag": tag, "items": [1, 2.5, None]}
    time.sleep(1000)
def handler(n):
    try:
        raise KeyError("missing-%d" % n)
    except KeyError:
        leaf(n, "handling")
def worker(n):
    if n == 1:
        handler(n)
    leaf(n, "w%d" % n)
started = threading.Barrier(3)
def run(n):
    started.wait()
    worker(n)
for i in (1, 2):
    threading.Thread(target=run, args=(i,), name="reader-%d" % i, daemon=True).start()
started.wait()
time.sleep(0.2)
print("ready", flush=True)
worker(0)
`

// processState is field 3 of /proc/PID/stat ("S", "R", "t" ...) and the
// TracerPid of /proc/PID/status.
func processState(t *testing.T, pid int) (string, string) {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return fields[0], tracerPid(t, pid)
}

func tracerPid(t *testing.T, pid int) string {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, "TracerPid:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// checkRunning fails the test when any thread of pid is stopped or
// traced.
func checkRunning(t *testing.T, what string, pid int) {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		state, tracer := processState(t, tid)
		if state == "t" || state == "T" || tracer != "0" {
			t.Errorf("%s: thread %d of %d is left in state %s, traced by %s", what, tid, pid, state, tracer)
		}
	}
}

// TestDumpReaders: the direct reader (ptrace and a system python3 over
// /proc/PID/mem) and gdb print the same stacks, locals, names, states
// and exceptions of the same process, in JSON and text, on Debian's
// python3.11 and a pyenv build; -v says which ran; the process runs on
// after each, and after a walk cut by its budget.
func TestDumpReaders(t *testing.T) {
	testenv.Need(t, "gdb")
	env := scriptEnv(t.TempDir())
	for _, py := range []testenv.Python{testenv.Debian(t), testenv.Pyenv(t, "3.12")} {
		t.Run(py.Version, func(t *testing.T) {
			pid := testenv.StartPython(t, py.Exe, readerApp)
			arg := strconv.Itoa(pid)
			out := map[string]string{}
			for _, reader := range []string{"gdb", "direct"} {
				for _, format := range []string{"--json", "--max-frames=4096"} {
					stdout, stderr := pyattachOK(t, "dump --reader "+reader, pyattachBin(t), env, "dump", "-v", "--locals", format, "--reader", reader, arg)
					if !strings.Contains(stderr, "pyattach: reader: "+reader) {
						t.Errorf("dump -v --reader %s does not say it ran:\n%s", reader, stderr)
					}
					checkRunning(t, "after dump --reader "+reader, pid)
					out[reader+format] = stdout
				}
			}
			for _, format := range []string{"--json", "--max-frames=4096"} {
				if out["gdb"+format] != out["direct"+format] {
					t.Errorf("dump %s: the readers differ\n--- gdb\n%s\n--- direct\n%s", format, out["gdb"+format], out["direct"+format])
				}
			}
			text := out["direct--max-frames=4096"]
			for _, want := range []string{
				fmt.Sprintf("Thread %d \"MainThread\"", pid), "\"reader-1\"", "\"reader-2\"",
				"in leaf\n    time.sleep(1000)\n", "      tag = 'handling'\n", "      tag = 'w2'\n",
				"KeyError", "missing-1",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("direct reader's text has no %q:\n%s", want, text)
				}
			}
			_, stderr := pyattachOK(t, "dump -v", pyattachBin(t), env, "dump", "-v", arg)
			if !strings.Contains(stderr, "pyattach: reader: direct") || !strings.Contains(stderr, "python start") {
				t.Errorf("dump -v: the default reader is not the direct one, or its times are missing:\n%s", stderr)
			}
			code, _, stderr := runPyattach(t, pyattachBin(t), env, "dump", "--reader", "direct", "--max-reads", "20", arg)
			if code != 3 || !strings.Contains(stderr, "walk stopped") {
				t.Errorf("dump --max-reads 20: exit %d, want 3 (partial)\n%s", code, stderr)
			}
			checkRunning(t, "after a partial dump", pid)
		})
	}
}

// deepReaderApp recurses 30,000 deep, so that a walk of every frame
// with its locals holds the process stopped long enough to be seen.
const deepReaderApp = `import sys, time
sys.setrecursionlimit(40000)
def down(n, pad="x" * 40):
    if n == 0:
        print("ready", flush=True)
        time.sleep(600)
    down(n - 1)
down(30000)
`

// TestDumpDirectSignal: SIGTERM (and SIGINT) to pyattach while the
// direct reader holds the process stopped: pyattach ends and the
// process runs on, no thread stopped or traced.
func TestDumpDirectSignal(t *testing.T) {
	py := testenv.Debian(t)
	env := scriptEnv(t.TempDir())
	pid := testenv.StartPython(t, py.Exe, deepReaderApp)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		caught := false
		for try := 0; try < 5 && !caught; try++ {
			cmd := exec.Command(pyattachBin(t), "dump", "--reader", "direct", "--locals", "--max-frames", "0", "--max-reads", "0", "--timeout", "0", strconv.Itoa(pid))
			cmd.Env = env
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			me := strconv.Itoa(cmd.Process.Pid)
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var err error
			done := false
		watch:
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
				select {
				case err = <-exited:
					done = true
					break watch
				default:
				}
				// TracerPid is the tracing thread's id: one of pyattach's.
				if tr := tracerPid(t, pid); tr != "0" && isDir("/proc/"+me+"/task/"+tr) {
					cmd.Process.Signal(sig)
					caught = true
					err, done = <-exited, true
					break
				}
				time.Sleep(200 * time.Microsecond)
			}
			if !done {
				cmd.Process.Kill()
				<-exited
				t.Fatalf("%v: pyattach dump did not end within 60s", sig)
			}
			if caught && err == nil {
				t.Errorf("%v: pyattach exited 0", sig)
			}
		}
		if !caught {
			t.Fatalf("%v: never saw pyattach hold the process stopped", sig)
		}
		checkRunning(t, "after "+sig.String(), pid)
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
