package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// excApp's thread "handler" sleeps in an except block, handling the
// ValueError that check raised at line 5; the main thread handles none.
const excApp = `import threading, time

def check(v):
    if v < 0:
        raise ValueError("bad value")

def handler(ready):
    try:
        check(-1)
    except ValueError as e:
        ready.set()
        time.sleep(1000)

ready = threading.Event()
threading.Thread(target=handler, args=(ready,), name="handler", daemon=True).start()
ready.wait()
print("ready", flush=True)
time.sleep(1000)
`

// checkExcJSON checks dump --json: the thread "handler" handles the
// ValueError raised in check at app.py:5, the main thread none.
func checkExcJSON(t *testing.T, what, stdout string) {
	t.Helper()
	var d struct {
		Threads []struct {
			Name      *string          `json:"name"`
			Exception *json.RawMessage `json:"exception"`
		} `json:"threads"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, stdout)
	}
	handled := 0
	for _, th := range d.Threads {
		name := ptrStr(th.Name)
		if th.Exception == nil || string(*th.Exception) == "null" {
			if name == "handler" {
				t.Errorf("%s: thread handler has no exception:\n%s", what, stdout)
			}
			continue
		}
		if name != "handler" {
			t.Errorf("%s: thread %s has exception %s", what, name, *th.Exception)
			continue
		}
		handled++
		var e struct {
			Type    string  `json:"type"`
			Message *string `json:"message"`
			Frames  []struct {
				File     string `json:"file"`
				Line     *int   `json:"line"`
				Function string `json:"function"`
			} `json:"frames"`
		}
		if err := json.Unmarshal(*th.Exception, &e); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if e.Type != "ValueError" || ptrStr(e.Message) != "bad value" {
			t.Errorf("%s: exception %s, want ValueError: bad value", what, *th.Exception)
		}
		if len(e.Frames) != 2 || filepath.Base(e.Frames[0].File) != "app.py" || e.Frames[0].Function != "check" ||
			e.Frames[0].Line == nil || *e.Frames[0].Line != 5 ||
			e.Frames[1].Function != "handler" || e.Frames[1].Line == nil || *e.Frames[1].Line != 9 {
			t.Errorf("%s: traceback %s, want check at app.py:5, then handler at 9", what, *th.Exception)
		}
	}
	if handled != 1 {
		t.Errorf("%s: %d threads handle an exception, want 1", what, handled)
	}
}

// TestDumpException: pyattach dump (JSON and text), gdb's and lldb's py-exc show
// the exception a thread handles, with where it was raised, on that
// thread only: Debian's 3.11 and every pyenv 3.7+, live and from a core.
func TestDumpException(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	gcore := testenv.Need(t, "gcore")
	for _, in := range dumpInterpreters(t) {
		t.Run(in.name, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			pid := strconv.Itoa(testenv.StartPython(t, in.exe, excApp))

			stdout, _ := pyattachOK(t, "pyattach dump --json", pyattachBin(t), env, "dump", "--json", pid)
			checkExcJSON(t, "live", stdout)
			text, _ := pyattachOK(t, "pyattach dump", pyattachBin(t), env, "dump", pid)
			re := regexp.MustCompile(`(?m)^Thread \d+ "handler".*:\n  Handling ValueError: bad value \(raised at \S*app\.py:5 in check\)$`)
			if !re.MatchString(text) || strings.Count(text, "Handling ") != 1 {
				t.Errorf("dump text: want one line matching %s:\n%s", re, text)
			}

			out := mustRunIn(t, "pyattach gdb py-exc", "", env, pyattachBin(t), "gdb", "-nx", "-batch", "-p", pid, "-ex", "thread apply all py-exc")
			re = regexp.MustCompile(`(?m)^ValueError: bad value\n  raised at File "\S*app\.py", line 5, in check$`)
			if !re.MatchString(out) || strings.Count(out, "ValueError") != 1 || !strings.Contains(out, "No exception is being handled.") {
				t.Errorf("py-exc: want one exception matching %s and one thread with none:\n%s", re, out)
			}

			lout, _ := pyattachOK(t, "pyattach lldb py-exc", pyattachBin(t), env, "lldb", "-p", pid, "-b",
				"-o", "thread select 2", "-o", "py-exc", "-o", "thread select 1", "-o", "py-exc")
			re = regexp.MustCompile(`(?m)^ValueError: bad value\n  raised at File "\S*app\.py", line 5, in check$`)
			if !re.MatchString(lout) || strings.Count(lout, "ValueError") != 1 || !strings.Contains(lout, "No exception is being handled.") {
				t.Errorf("lldb py-exc: want one exception matching %s and one thread with none:\n%s", re, lout)
			}

			core := filepath.Join(t.TempDir(), "core")
			if out, err := exec.Command(gcore, "-o", core, pid).CombinedOutput(); err != nil {
				t.Fatalf("gcore: %v\n%s", err, out)
			}
			stdout, _ = pyattachOK(t, "pyattach dump --json core", pyattachBin(t), env, "dump", "--json", core+"."+pid)
			checkExcJSON(t, "core", stdout)
		})
	}
}
