package dump

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func render(t *testing.T, h Header, native bool, walkerJSON string) (Output, string, []string) {
	t.Helper()
	wd, err := ParseWalker([]byte(walkerJSON))
	if err != nil {
		t.Fatal(err)
	}
	return Render(h, wd, native)
}

func checkText(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderFrames(t *testing.T) {
	res, text, warnings := render(t, Header{PID: 42, Version: "3.11.99"}, false, `{
	  "threads": [
	    {"tid": 42, "name": "python3", "frames": [
	      {"function": "leaf", "file": "/app.py", "line": 4, "source": "time.sleep(1)"},
	      {"function": "<module>", "file": "/app.py", "line": null, "source": null}]},
	    {"tid": 43, "name": null, "frames": [], "error": "bad\u001b[2J thread state"}
	  ],
	  "cost": {"reads": 1234, "bytes": 56789, "seconds": 0.01}}`)
	checkText(t, text, `Process 42: Python 3.11.99, 2 threads

Thread 42 "python3":
Traceback (most recent call first):
  File "/app.py", line 4, in leaf
    time.sleep(1)
  File "/app.py", line ?, in <module>

Thread 43:
Unable to locate python frame
`)
	if len(warnings) != 1 || warnings[0] != `thread 43: bad\x1b[2J thread state` {
		t.Errorf("warnings = %q", warnings)
	}
	b, _ := json.Marshal(res)
	want := `{"pid":42,"python":{"version":"3.11.99"},"threads":[{"tid":42,"name":"python3","os_name":null,"interpreter":null,"holds_gil":null,"state":null,"frames":[{"function":"leaf","file":"/app.py","line":4},{"function":"\u003cmodule\u003e","file":"/app.py","line":null}],"exception":null},{"tid":43,"name":null,"os_name":null,"interpreter":null,"holds_gil":null,"state":null,"frames":[],"error":"bad\u001b[2J thread state","exception":null}]}`
	if string(b) != want {
		t.Errorf("JSON:\n%s\nwant:\n%s", b, want)
	}
}

// The exception a thread handles: a line under its header, the target's
// strings escaped; in the JSON as the walker wrote it.
func TestRenderException(t *testing.T) {
	res, text, _ := render(t, Header{PID: 9, Version: "3.12.1"}, false, `{"threads": [
	  {"tid": 9, "name": "h", "frames": [{"function": "handler", "file": "/app.py", "line": 12}],
	   "exception": {"type": "Value\u001b[2JError", "message": "bad\nvalue",
	     "frames": [{"file": "/a\u001b.py", "line": 5, "function": "check"}, {"file": "/app.py", "line": 9, "function": "handler"}]}}]}`)
	checkText(t, text, `Process 9: Python 3.12.1, 1 threads

Thread 9 "h":
  Handling Value\x1b[2JError: bad\nvalue (raised at /a\x1b.py:5 in check)
Traceback (most recent call first):
  File "/app.py", line 12, in handler
`)
	e := res.Threads[0].Exception
	if e == nil || e.Type != "Value\x1b[2JError" || *e.Message != "bad\nvalue" || len(e.Frames) != 2 || *e.Frames[0].Line != 5 {
		t.Errorf("exception = %+v", e)
	}
}

// What the target names (code objects, files, its thread, source
// lines) is escaped in the text and kept as it is in the JSON.
func TestRenderEscapes(t *testing.T) {
	res, text, _ := render(t, Header{Core: "core.7", CorePID: 7, Version: "3.12.1"}, false, `{"threads": [
	  {"tid": 7, "name": "r\u001b]0;T\u0007", "frames": [
	    {"function": "f\nFile \"x\"", "file": "/a\u001b[31m.py", "line": 1, "source": "x = '\u202e'"}]}]}`)
	checkText(t, text, `Core core.7 (process 7): Python 3.12.1, 1 threads

Thread 7 "r\x1b]0;T\x07":
Traceback (most recent call first):
  File "/a\x1b[31m.py", line 1, in f\nFile "x"
    x = '\u202e'
`)
	if f := res.Threads[0].Frames[0]; f.Function != "f\nFile \"x\"" || f.File != "/a\x1b[31m.py" || *res.Threads[0].Name != "r\x1b]0;T\x07" {
		t.Errorf("JSON changed what the target wrote: %+v", res.Threads[0])
	}
	if res.Core != "core.7" || res.PID != 0 {
		t.Errorf("core %q pid %d", res.Core, res.PID)
	}
}

func TestRenderOmittedFrames(t *testing.T) {
	frames := func(names ...string) string {
		var fs []string
		for _, n := range names {
			fs = append(fs, `{"function": "`+n+`", "file": "d.py", "line": 1}`)
		}
		return strings.Join(fs, ",")
	}
	res, text, _ := render(t, Header{PID: 1, Version: "3.11"}, false, `{"threads": [
	  {"tid": 1, "frames": [`+frames("in1", "in2", "out1", "out2")+`], "frames_omitted": 5906, "frames_omitted_at": 2},
	  {"tid": 2, "frames": [`+frames("only")+`], "frames_omitted": 1, "frames_omitted_at": 1}]}`)
	checkText(t, text, `Process 1: Python 3.11, 2 threads

Thread 1:
Traceback (most recent call first):
  File "d.py", line 1, in in1
  File "d.py", line 1, in in2
  ... 5,906 frames not shown ...
  File "d.py", line 1, in out1
  File "d.py", line 1, in out2

Thread 2:
Traceback (most recent call first):
  File "d.py", line 1, in only
  ... 1 frame not shown ...
`)
	if th := res.Threads[0]; th.FramesOmitted != 5906 || th.FramesOmittedAt != 2 || len(th.Frames) != 4 {
		t.Errorf("JSON thread: %+v", th)
	}
}

func TestRenderTruncatedWalk(t *testing.T) {
	res, text, _ := render(t, Header{PID: 9, Version: "3.13.1"}, false, `{
	  "truncated": "500000 memory reads", "threads": [
	  {"tid": 9, "frames": [{"function": "f", "file": "p.py", "line": 3}], "partial": true},
	  {"tid": 10, "frames": [], "partial": true}]}`)
	checkText(t, text, `Process 9: Python 3.13.1, 2 threads

Thread 9:
Traceback (most recent call first):
  File "p.py", line 3, in f
  ... stack not read further: the walk stopped ...

Thread 10:
Traceback (most recent call first):
  ... stack not read further: the walk stopped ...
`)
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"partial":true`) || !strings.HasSuffix(string(b), `"truncated":"500000 memory reads"}`) {
		t.Errorf("JSON: %s", b)
	}
}

func TestRenderNative(t *testing.T) {
	// The walker could not merge them: both lists, and why.
	res, text, _ := render(t, Header{PID: 5, Version: "3.11.99"}, true, `{"threads": [
	  {"tid": 5, "name": "python3", "frames": [{"function": "f", "file": "n.py", "line": 2}], "native": [
	    {"function": "clock_nanosleep", "file": null, "line": null, "pc": 140000000000000},
	    {"function": "pysleep", "file": "./Modules/timemodule.c", "line": 2098, "pc": 5000000},
	    {"function": "evil\u001b[2J", "file": "/x\u0007.c", "line": null, "pc": 16},
	    {"function": null, "file": null, "line": null, "pc": 0}],
	   "stack": null, "stack_unmerged": "0 _PyEval_EvalFrameDefault frames but 1 group of Python frames"},
	  {"tid": 6, "frames": []}]}`)
	checkText(t, text, `Process 5: Python 3.11.99, 2 threads

Thread 5 "python3":
Traceback (most recent call first):
  File "n.py", line 2, in f
Python and native frames not merged: 0 _PyEval_EvalFrameDefault frames but 1 group of Python frames
Native stack (most recent call first):
  #0  0x00007f544a44c000 in clock_nanosleep ()
  #1  0x00000000004c4b40 in pysleep () at ./Modules/timemodule.c:2098
  #2  0x0000000000000010 in evil\x1b[2J () at /x\x07.c
  #3  0x0000000000000000 in ?? ()

Thread 6:
Unable to locate python frame
`)
	if n := res.Threads[1].Native; n == nil || len(*n) != 0 {
		t.Errorf("--native: a thread without C frames has native %v, want []", n)
	}
	if n := *res.Threads[0].Native; len(n) != 4 || *n[1].Line != 2098 || n[3].Function != nil {
		t.Errorf("native frames: %+v", n)
	}
	b, _ := json.Marshal(res.Threads[0])
	if strings.Contains(string(b), `"stack":`) || !strings.Contains(string(b), `"stack_unmerged":"0 _PyEval_EvalFrameDefault frames but 1 group of Python frames"`) {
		t.Errorf("unmerged thread's JSON: %s", b)
	}
}

// TestRenderMerged: the walker's merged stack (references to frames and
// native) becomes one list, innermost first, in JSON and in text: a C
// frame where a Python frame calls sorted, the Python frames where the
// eval loop stood; the target's strings escaped in the text only.
func TestRenderMerged(t *testing.T) {
	res, text, _ := render(t, Header{PID: 7, Version: "3.11.99"}, true, `{"threads": [
	  {"tid": 7, "frames": [
	    {"function": "key", "file": "a.py", "line": 3, "source": "time.sleep(1)"},
	    {"function": "outer\u001b[2J", "file": "a.py", "line": 6}], "native": [
	    {"function": "clock_nanosleep", "file": null, "line": null, "pc": 4096, "block_pc": 4096},
	    {"function": "_PyEval_EvalFrameDefault", "file": null, "line": null, "pc": 8192, "block_pc": 8191},
	    {"function": "list_sort\u0007", "file": "Objects/listobject.c", "line": 2317, "pc": 12288, "block_pc": 12287},
	    {"function": "_PyEval_EvalFrameDefault", "file": null, "line": null, "pc": 16384, "block_pc": 16383},
	    {"function": null, "file": null, "line": null, "pc": 20480, "block_pc": 20479}],
	   "stack": [{"kind": "native", "index": 0}, {"kind": "python", "index": 0}, {"kind": "native", "index": 2},
	             {"kind": "python", "index": 1}, {"kind": "native", "index": 4}], "stack_unmerged": null}]}`)
	checkText(t, text, `Process 7: Python 3.11.99, 1 threads

Thread 7:
Stack (most recent call first):
  (C) 0x0000000000001000 in clock_nanosleep ()
  File "a.py", line 3, in key
    time.sleep(1)
  (C) 0x0000000000003000 in list_sort\x07 () at Objects/listobject.c:2317
  File "a.py", line 6, in outer\x1b[2J
  (C) 0x0000000000005000 in ?? ()
`)
	b, err := json.Marshal(res.Threads[0].Stack)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"kind":"native","function":"clock_nanosleep","file":null,"line":null,"pc":4096},` +
		`{"kind":"python","function":"key","file":"a.py","line":3,"pc":null},` +
		`{"kind":"native","function":"list_sort\u0007","file":"Objects/listobject.c","line":2317,"pc":12288},` +
		`{"kind":"python","function":"outer\u001b[2J","file":"a.py","line":6,"pc":null},` +
		`{"kind":"native","function":null,"file":null,"line":null,"pc":20480}]`
	if string(b) != want {
		t.Errorf("stack JSON:\n%s\nwant\n%s", b, want)
	}
	if n := res.Threads[0].Native; n == nil || len(*n) != 5 {
		t.Errorf("native kept beside the stack: %+v", n)
	}

	// A reference the walker's frames do not have: not merged.
	res, text, _ = render(t, Header{PID: 7, Version: "3.11.99"}, true, `{"threads": [
	  {"tid": 7, "frames": [], "native": [{"function": "f", "pc": 1}], "stack": [{"kind": "python", "index": 0}]}]}`)
	if res.Threads[0].Stack != nil || !strings.Contains(text, "not merged: the walker's merged stack names a frame it does not have") {
		t.Errorf("bad reference merged:\n%s", text)
	}
}

func TestParseWalkerBad(t *testing.T) {
	if _, err := ParseWalker([]byte(`{"threads": [`)); err == nil || !strings.Contains(err.Error(), "bad JSON") {
		t.Errorf("ParseWalker = %v, want a bad-JSON error", err)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 5906: "5,906", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// gdb's messages decide the error: attaching refused (with the tracer
// that holds the process), or its last line.
func TestGDBFailure(t *testing.T) {
	proc := t.TempDir()
	for p, files := range map[string]map[string]string{
		"42": {"status": "Name:\tpython3\nTracerPid:\t77\n"},
		"77": {"comm": "strace\n"},
		"43": {"status": "TracerPid:\t0\n"},
	} {
		os.MkdirAll(filepath.Join(proc, p), 0o755)
		for n, c := range files {
			os.WriteFile(filepath.Join(proc, p, n), []byte(c), 0o644)
		}
	}
	for _, tt := range []struct {
		pid    int
		out    string
		kind   Kind
		tracer string
		msg    string
	}{
		{42, "Attaching to process 42\nptrace: Operation not permitted.\n", KindAttach, "77 (strace)", "dump 42: gdb cannot attach: ptrace: Operation not permitted."},
		{43, "Could not attach to process.  If your uid matches...\n", KindAttach, "", "dump 43: gdb cannot attach: Could not attach to process.  If your uid matches..."},
		{43, "warning: something\nPython Exception <class 'ImportError'>: nope\n", KindNoStacks, "", "dump 43: gdb wrote no stacks: Python Exception <class 'ImportError'>: nope"},
	} {
		tg := &Target{PID: tt.pid, procRoot: proc}
		err := tg.gdbFailure(tt.out, nil)
		var e *Error
		if !errors.As(err, &e) || e.Kind != tt.kind || e.Tracer != tt.tracer || err.Error() != tt.msg {
			t.Errorf("gdbFailure(%q) = %v (%+v), want kind %d, tracer %q, %q", tt.out, err, e, tt.kind, tt.tracer, tt.msg)
		}
	}
}

// A thread that called into a subinterpreter: its frames of each
// interpreter under an "In interpreter N" line, each frame's interpreter
// in the JSON; an outer interpreter's frames that could not be read end
// the stack with why.
func TestRenderInterpreters(t *testing.T) {
	res, text, warnings := render(t, Header{PID: 42, Version: "3.14.99"}, false, `{
	  "threads": [
	    {"tid": 42, "name": "MainThread", "interpreter": 0, "frames": [
	      {"function": "<module>", "file": "/app.py", "line": 9, "interpreter": 0}]},
	    {"tid": 43, "name": "runner", "interpreter": 1, "partial": true,
	     "error": "frames in interpreter 0 not read: cannot read 8 bytes at 0x10", "frames": [
	      {"function": "leaf", "file": "<script>", "line": 2, "interpreter": 1},
	      {"function": "<module>", "file": "<script>", "line": 3, "interpreter": 1},
	      {"function": "exec", "file": "/i.py", "line": 221, "interpreter": 0}]}
	  ],
	  "truncated": "thread state at 0x20: frames in interpreter 0 not read: cannot read 8 bytes at 0x10"}`)
	checkText(t, text, `Process 42: Python 3.14.99, 2 threads

Thread 42 "MainThread", interpreter 0, state unknown:
Traceback (most recent call first):
  File "/app.py", line 9, in <module>

Thread 43 "runner", interpreter 1, state unknown:
Traceback (most recent call first):
  In interpreter 1:
  File "<script>", line 2, in leaf
  File "<script>", line 3, in <module>
  In interpreter 0:
  File "/i.py", line 221, in exec
  ... stack not read further: frames in interpreter 0 not read: cannot read 8 bytes at 0x10 ...
`)
	if len(warnings) != 1 {
		t.Errorf("warnings = %q", warnings)
	}
	b, _ := json.Marshal(res.Threads[1])
	for _, want := range []string{`"interpreter":1,`, `{"function":"leaf","file":"\u003cscript\u003e","line":2,"interpreter":1}`,
		`{"function":"exec","file":"/i.py","line":221,"interpreter":0}`, `"partial":true`, `"error":"frames in interpreter 0 not read`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	if res.Truncated == "" {
		t.Errorf("truncated is empty")
	}
}

// TestParseWalkerRuns: a frame the walker wrote once with "repeat" N
// stands for N+1 equal frames; a bad count is bad JSON.
func TestParseWalkerRuns(t *testing.T) {
	wd, err := ParseWalker([]byte(`{"threads": [{"tid": 1, "frames": [
		{"function": "down", "file": "/app.py", "line": 9, "repeat": 2},
		{"function": "<module>", "file": "/app.py", "line": 12}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range wd.Threads[0].Frames {
		got = append(got, fmt.Sprintf("%s:%d:%d", f.Function, *f.Line, f.Repeat))
	}
	if want := "down:9:0 down:9:0 down:9:0 <module>:12:0"; strings.Join(got, " ") != want {
		t.Errorf("frames %q, want %q", got, want)
	}
	for _, bad := range []string{`-1`, `16777217`} {
		if _, err := ParseWalker([]byte(`{"threads": [{"tid": 1, "frames": [{"function": "f", "file": "f", "line": 1, "repeat": ` + bad + `}]}]}`)); err == nil || !strings.Contains(err.Error(), "bad JSON") {
			t.Errorf("repeat %s: err %v, want bad JSON", bad, err)
		}
	}
}

// TestRenderEqualFrames: a frame equal to the one before it is written
// again in full; one that differs only in its source line or locals is
// written as itself.
func TestRenderEqualFrames(t *testing.T) {
	_, text, _ := render(t, Header{PID: 1, Version: "3.13.5"}, false, `{"threads": [{"tid": 1, "frames": [
		{"function": "down", "file": "/app.py", "line": 9, "source": "return down(n - 1)", "repeat": 1},
		{"function": "down", "file": "/app.py", "line": 9, "source": "return up(n - 1)"},
		{"function": "down", "file": "/app.py", "line": 9, "source": "return up(n - 1)", "locals": [["n", "3"]]},
		{"function": "down", "file": "/app.py", "line": 9, "source": "return up(n - 1)", "locals": [["n", "4"]]}]}]}`)
	for s, want := range map[string]int{`File "/app.py", line 9, in down`: 5, "return down(n - 1)": 2, "return up(n - 1)": 3, "n = 3": 1, "n = 4": 1} {
		if got := strings.Count(text, s); got != want {
			t.Errorf("%q written %d times, want %d:\n%s", s, got, want, text)
		}
	}
}
