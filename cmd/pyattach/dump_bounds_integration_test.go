package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/pywalk"
	"github.com/pyattach/pyattach/detect/testenv"
)

// deepApp recurses 10,000 deep (down, 10,001 frames, under main and
// <module>) and sleeps there.
const deepApp = `import sys, time
sys.setrecursionlimit(20000)
def down(n):
    if n == 0:
        print("ready", flush=True)
        time.sleep(600)
    down(n - 1)
def main():
    down(10000)
main()
`

// deepFrames is how many Python frames deepApp's main thread runs.
const deepFrames = 10001 + 2

// TestDumpDeepStack: a stack 10,000 deep in Debian's python3.11 and a
// pyenv 3.11+: dump keeps the innermost and the outermost frames
// (<module> shows) with one line counting those between, in text and
// JSON, as gdb's and lldb's py-bt do; --max-frames changes how many.
func TestDumpDeepStack(t *testing.T) {
	testenv.Need(t, "gdb")
	testenv.Need(t, "lldb")
	env := scriptEnv(t.TempDir())
	bin := pyattachBin(t)
	for name, py := range map[string]testenv.Python{"debian": testenv.Debian(t), "pyenv": testenv.Pyenv(t, "3.11+")} {
		t.Run(name+"-"+py.Version, func(t *testing.T) {
			ipid := testenv.StartPython(t, py.Exe, deepApp)
			pid := strconv.Itoa(ipid)

			marker := func(kept int) string {
				return omittedLine(deepFrames - kept)
			}
			// The default, 4,096 frames: 2,048 innermost, 2,048 outermost.
			out, _ := pyattachOK(t, "pyattach dump", bin, env, "dump", pid)
			if want := "  ... 5,907 frames not shown ...\n"; marker(4096) != want {
				t.Fatalf("marker %q, want %q", marker(4096), want)
			}
			checkDeepText(t, "dump", out, marker(4096), 2048)

			d := dumpJSON(t, env, "--max-frames", "10", pid)
			var main *dumpThread
			for i := range d.Threads {
				if d.Threads[i].TID == ipid {
					main = &d.Threads[i]
				}
			}
			if main == nil {
				t.Fatalf("no main thread in %+v", d.Threads)
			}
			var names []string
			for _, f := range main.Frames {
				names = append(names, f.Function)
			}
			want := "down down down down down down down down main <module>"
			if strings.Join(names, " ") != want || main.FramesOmitted != deepFrames-10 || main.FramesOmittedAt != 5 || main.Partial || d.Truncated != "" {
				t.Errorf("--max-frames 10 --json: frames %v, omitted %d at %d, partial %v, truncated %q; want %s, %d at 5",
					names, main.FramesOmitted, main.FramesOmittedAt, main.Partial, d.Truncated, want, deepFrames-10)
			}
			out, _ = pyattachOK(t, "pyattach dump --max-frames 6", bin, env, "dump", "--max-frames", "6", pid)
			checkDeepText(t, "dump --max-frames 6", out, marker(6), 3)
			out, _ = pyattachOK(t, "pyattach dump --max-frames 0", bin, env, "dump", "--max-frames", "0", pid)
			if strings.Contains(out, "not shown") || strings.Count(out, "  File ") != deepFrames {
				t.Errorf("dump --max-frames 0: %d frames, want all %d", strings.Count(out, "  File "), deepFrames)
			}

			gout, _ := pyattachOK(t, "pyattach gdb", bin, env, "gdb", "-p", pid, "-batch", "-ex", "pyattach-bt",
				"-ex", "pyattach-bt --max-frames 6", "-ex", "set pyattach-max-frames 4", "-ex", "pyattach-bt")
			bts := strings.Split(gout, "Traceback (most recent call first):\n")
			if len(bts) != 4 {
				t.Fatalf("gdb: %d tracebacks, want 3:\n%s", len(bts)-1, tail(gout))
			}
			checkDeepText(t, "gdb pyattach-bt", bts[1], marker(4096), 2048)
			checkDeepText(t, "gdb pyattach-bt --max-frames 6", bts[2], marker(6), 3)
			checkDeepText(t, "gdb pyattach-max-frames 4", bts[3], marker(4), 2)

			lout, _ := pyattachOK(t, "pyattach lldb", bin, env, "lldb", "-p", pid, "-b", "-o", "py-bt", "-o", "py-bt all --max-frames 6")
			bts = strings.Split(lout, "Traceback (most recent call first):\n")
			if len(bts) != 3 {
				t.Fatalf("lldb: %d tracebacks, want 2:\n%s", len(bts)-1, tail(lout))
			}
			checkDeepText(t, "lldb py-bt", bts[1], marker(4096), 2048)
			checkDeepText(t, "lldb py-bt all --max-frames 6", bts[2], marker(6), 3)
		})
	}
}

// checkDeepText checks py-bt lines of deepApp's main thread (from
// "Traceback" on) with half frames either side of the marker: the
// innermost down() at the sleep, then down()s, the marker, down()s,
// main and <module>.
func checkDeepText(t *testing.T, what, out, marker string, half int) {
	t.Helper()
	i := strings.Index(out, marker)
	if i < 0 || strings.Count(out, marker) != 1 {
		t.Errorf("%s: no line %q once in:\n%s", what, marker, tail(out))
		return
	}
	before, after := out[:i], out[i+len(marker):]
	if n := strings.Count(before, "  File "); n != half {
		t.Errorf("%s: %d frames before the marker, want %d", what, n, half)
	}
	if n := strings.Count(after[:endOfStack(after)], "  File "); n != half {
		t.Errorf("%s: %d frames after the marker, want %d", what, n, half)
	}
	if first := regexp.MustCompile(`  File .*\n`).FindString(before); !regexp.MustCompile(`^  File ".*app\.py", line 6, in down\n$`).MatchString(first) {
		t.Errorf("%s: the innermost frame is not down() at its sleep:\n%s", what, head(before))
	}
	if !regexp.MustCompile(`  File ".*app\.py", line 9, in main\n(    .*\n)?  File ".*app\.py", line 10, in <module>\n`).MatchString(after) {
		t.Errorf("%s: main and <module> are not the outermost frames:\n%s", what, tail(after))
	}
}

// endOfStack is where the frames of the first stack in out end.
func endOfStack(out string) int {
	if i := strings.Index(out, "in <module>\n"); i >= 0 {
		return i + len("in <module>\n")
	}
	return len(out)
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

// hostileC is a process that passes for Python 3.13: an executable
// named python3.13 that defines Py_Initialize and a _PyRuntime starting
// with _Py_DebugOffsets (cookie, version, the offsets the walker reads),
// whose interpreter list holds 256 interpreters of 4,096 thread states
// each, every one a distinct, loop-free chain. The first thread state
// is the main thread's (native_thread_id its tid), without frames.
const hostileC = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

#define NINTERP 256
#define NTHREAD 4096

struct interp { uint64_t next, threads_head, id; };
struct tstate { uint64_t next, thread_id, native_thread_id, current_frame, interp; };

uint64_t _PyRuntime[1024] = { OFFSETS };

void Py_Initialize(void) {}

int main(void) {
	struct interp *in = calloc(NINTERP, sizeof *in);
	struct tstate *ts = calloc((size_t)NINTERP * NTHREAD, sizeof *ts);
	if (!in || !ts)
		return 1;
	for (size_t i = 0; i < NINTERP; i++) {
		in[i].next = i + 1 < NINTERP ? (uint64_t)&in[i + 1] : 0;
		in[i].threads_head = (uint64_t)&ts[i * NTHREAD];
		in[i].id = i;
		for (size_t j = 0; j < NTHREAD; j++) {
			struct tstate *t = &ts[i * NTHREAD + j];
			t->next = j + 1 < NTHREAD ? (uint64_t)(t + 1) : 0;
			t->thread_id = 0x1000 + i * NTHREAD + j;
			t->native_thread_id = 4000000 + i * NTHREAD + j;
			t->interp = (uint64_t)&in[i];
		}
	}
	ts[0].native_thread_id = syscall(SYS_gettid);
	_PyRuntime[HEAD / 8] = (uint64_t)in;
	printf("ready\n");
	fflush(stdout);
	sleep(600);
	return 0;
}
`

// hostileOffsets is the initializer of hostileC's _PyRuntime: the
// cookie, PY_VERSION_HEX of 3.13.0, then _Py_DebugOffsets' members in
// the order the walker reads them, with the fields of hostileC's
// structures; the interpreter list's head is at byte head.
func hostileOffsets(t *testing.T, head int) string {
	t.Helper()
	py := testenv.Need(t, "python3")
	dir := t.TempDir()
	for name, b := range pywalk.Files() {
		testenv.WriteFile(t, filepath.Join(dir, name), b, 0o644)
	}
	cmd := exec.Command(py, "-c", "import json, pyattach_walk as w; print(json.dumps(w.DEBUG_OFFSETS_MEMBERS[(3, 13)]))")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the walker's _Py_DebugOffsets members: %v", err)
	}
	var members []string
	if err := json.Unmarshal(out, &members); err != nil {
		t.Fatal(err)
	}
	values := map[string]int{
		"version":                                  0x030d00f0,
		"runtime_state.interpreters_head":          head,
		"interpreter_state.next":                   0,
		"interpreter_state.threads_head":           8,
		"interpreter_state.id":                     16,
		"thread_state.size":                        40,
		"thread_state.next":                        0,
		"thread_state.thread_id":                   8,
		"thread_state.native_thread_id":            16,
		"thread_state.current_frame":               24,
		"thread_state.interp":                      32,
		"unicode_object.length":                    16,
		"unicode_object.state":                     32,
		"unicode_object.asciiobject_size":          40,
		"code_object.co_code_adaptive":             200,
		"interpreter_frame.previous":               8,
		"interpreter_frame.owner":                  70,
		"interpreter_frame.executable":             0,
		"interpreter_frame.instr_ptr":              56,
		"interpreter_frame.localsplus":             72,
		"interpreter_frame.size":                   80,
		"unicode_object.compactunicodeobject_size": 56,
	}
	cookie := binary.LittleEndian.Uint64([]byte("xdebugpy"))
	init := []string{fmt.Sprintf("[0] = %#x", cookie)}
	for i, m := range members {
		if v, ok := values[m]; ok {
			init = append(init, fmt.Sprintf("[%d] = %#x", 1+i, v))
		}
	}
	return strings.Join(init, ", ")
}

// TestDumpHostileThreadList: a process whose interpreter list holds
// 256 x 4,096 thread states. dump ends within its budget: it prints the
// thread it read, says on stderr that the walk stopped and why, exits 3,
// and leaves the process running, not stopped; --json says why in
// "truncated". gdb's pyattach-bt says so too.
func TestDumpHostileThreadList(t *testing.T) {
	testenv.Need(t, "gdb")
	const head = 4096
	dir := t.TempDir()
	src := strings.Replace(strings.Replace(hostileC, "OFFSETS", hostileOffsets(t, head), 1), "HEAD", strconv.Itoa(head), 1)
	exe := testenv.CC(t, dir, "python3.13", src, "-O1")
	cmd := exec.Command(exe)
	testenv.Start(t, cmd)
	ipid := cmd.Process.Pid
	pid := strconv.Itoa(ipid)
	env := scriptEnv(t.TempDir())
	bin := pyattachBin(t)

	running := func(what string) {
		t.Helper()
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(fields) == 0 || fields[0] == "t" || fields[0] == "T" {
			t.Errorf("%s: the process is left stopped: %s", what, s)
		}
		if tr := tracerOf("/proc", ipid); tr != "" {
			t.Errorf("%s: the process is still traced, by %s", what, tr)
		}
	}

	code, stdout, stderr := runPyattach(t, bin, env, "dump", pid)
	stopped := regexp.MustCompile(`(?m)^pyattach: walk stopped: thread states not all listed: [0-9,]+ listed with half the walk's budget \([0-9,]+ reads in [0-9.]+s\); stacks of 1 of 1 threads read; output is partial$`)
	if code != 3 || !stopped.MatchString(stderr) {
		t.Errorf("dump: exit %d, want 3 and the walk stopped, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "Process "+pid+": Python 3.13.0, 1 threads\n\nThread "+pid+" ") {
		t.Errorf("dump: the threads read are not printed:\n%s", stdout)
	}
	running("dump")

	// The time budget, with no limit of reads.
	code, stdout, stderr = runPyattach(t, bin, env, "dump", "--json", "--max-reads", "0", "--timeout", "2s", pid)
	var d dumpOutput
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("dump --json: %v\n%s", err, stdout)
	}
	if code != 3 || !strings.HasPrefix(d.Truncated, "thread states not all listed") || len(d.Threads) != 1 ||
		!strings.Contains(stderr, "pyattach: walk stopped: "+d.Truncated+"; output is partial") {
		t.Errorf("dump --json --timeout 2s: exit %d, truncated %q, %d threads, stderr:\n%s", code, d.Truncated, len(d.Threads), stderr)
	}
	running("dump --json")

	out, _ := pyattachOK(t, "pyattach gdb", bin, env, "gdb", "-p", pid, "-batch", "-ex", "set pyattach-max-reads 20000", "-ex", "pyattach-bt")
	if !strings.Contains(out, "pyattach: walk stopped: thread states not all listed") || !strings.Contains(out, "output is partial") {
		t.Errorf("gdb pyattach-bt: no line saying the walk stopped:\n%s", out)
	}
	running("gdb")
}
