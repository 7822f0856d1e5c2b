package dap_test

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/dap"
	"github.com/pyattach/pyattach/cmd/internal/dap/daptest"
)

// fake is an adapter with a walker: one thread (1) whose stack is
// clock_nanosleep, an eval frame running two Python frames, a helper,
// an eval frame running one, main.
type fake struct {
	t  *testing.T
	w  *dap.Writer
	mu sync.Mutex
	// seqs the fake was sent, in order
	seqs     []int64
	commands []string
	evals    []string
	seq      int64
	paused   chan struct{}
	revSeq   int64
	revDone  chan dap.Message
	srcFile  string

	// As lldb-vscode 14: no instructionPointerReference in frames
	// (names: the adapter's frame names by index, where changed), and
	// only "`" commands (anything else is an expression that does not
	// parse).
	noIP         bool
	names        map[int]string
	backtickOnly bool
	// version: the initialize response's "__lldb" version (lldb-dap 19).
	version string
	// escape: the commandEscapePrefix the fake runs commands with.
	escape string
	// cut: as lldb 19 on LTO-split functions, the debugger unwinds only
	// the innermost frame, short of the eval loop.
	cut bool
}

var fakeFrames = []map[string]any{
	{"id": 1000, "name": "clock_nanosleep", "line": 0, "column": 0, "instructionPointerReference": "0x10"},
	{"id": 1001, "name": "_PyEval_EvalFrameDefault", "line": 0, "column": 0, "instructionPointerReference": "0x20", "custom": "kept"},
	{"id": 1002, "name": "_PyFunction_Vectorcall", "line": 0, "column": 0, "instructionPointerReference": "0x30"},
	{"id": 1003, "name": "_PyEval_EvalFrameDefault", "line": 0, "column": 0, "instructionPointerReference": "0x40"},
	{"id": 1004, "name": "main", "line": 7, "column": 0, "instructionPointerReference": "0x50", "source": map[string]any{"name": "main.c", "sourceReference": 5}},
}

func (f *fake) stackJSON() string {
	native := []map[string]any{
		{"pc": 0x10, "function": "clock_nanosleep", "kind": "c", "python": []any{}},
		{"pc": 0x20, "function": "_PyEval_EvalFrameDefault", "kind": "eval", "python": []any{
			map[string]any{"name": "inner", "file": f.srcFile, "line": 3, "frame": 111},
			map[string]any{"name": "middle", "file": "<frozen zipimport>", "line": 9, "frame": 112},
		}},
		{"pc": 0x30, "function": "_PyFunction_Vectorcall", "kind": "helper", "python": []any{}},
		{"pc": 0x40, "function": "_PyEval_EvalFrameDefault", "kind": "eval", "python": []any{map[string]any{"name": "<module>", "file": "/nonexistent/app.py", "line": 20, "frame": 113}}},
		{"pc": 0x50, "function": nil, "kind": "c", "python": []any{}},
	}
	answer := map[string]any{"native": native, "merged": true, "exception": map[string]any{"type": "ValueError", "value": "ValueError('bad')", "ref": 555}}
	if f.cut {
		var all []any
		for _, n := range native {
			all = append(all, n["python"].([]any)...)
		}
		answer["native"], answer["merged"], answer["why"], answer["python"] = native[:1], false, "0 _PyEval_EvalFrameDefault frames but 2 groups of Python frames", all
	}
	b, _ := json.Marshal(answer)
	return string(b)
}

func (f *fake) send(m map[string]any) {
	f.mu.Lock()
	f.seq++
	m["seq"] = f.seq
	f.mu.Unlock()
	b, _ := json.Marshal(m)
	var msg dap.Message
	_ = json.Unmarshal(b, &msg)
	_ = f.w.Write(msg)
}

func (f *fake) respond(req dap.Message, body any) {
	seq, _ := req.Int("seq")
	f.send(map[string]any{"type": "response", "request_seq": seq, "command": req.Str("command"), "success": true, "body": body})
}

func (f *fake) failResp(req dap.Message, msg string) {
	seq, _ := req.Int("seq")
	f.send(map[string]any{"type": "response", "request_seq": seq, "command": req.Str("command"), "success": false, "message": msg})
}

func (f *fake) serve(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		m, err := dap.ReadMessage(br)
		if err != nil {
			return
		}
		seq, _ := m.Int("seq")
		f.mu.Lock()
		f.seqs = append(f.seqs, seq)
		f.commands = append(f.commands, m.Str("command"))
		f.mu.Unlock()
		if m.Str("type") == "response" {
			f.revDone <- m
			continue
		}
		args := m.Obj("arguments")
		switch m.Str("command") {
		case "initialize":
			body := map[string]any{"supportsConfigurationDoneRequest": true}
			if f.version != "" {
				body["__lldb"] = map[string]any{"version": f.version}
			}
			f.respond(m, body)
			f.send(map[string]any{"type": "event", "event": "initialized"})
		case "attach", "launch":
			b, _ := json.Marshal(args)
			f.respond(m, map[string]any{"echo": string(b)})
		case "configurationDone":
			f.respond(m, nil)
			f.send(map[string]any{"type": "event", "event": "stopped", "body": map[string]any{"reason": "pause", "threadId": 1}})
		case "runInTerminalPlease":
			f.mu.Lock()
			f.seq++
			f.revSeq = f.seq
			s := f.seq
			f.mu.Unlock()
			b, _ := json.Marshal(map[string]any{"type": "request", "seq": s, "command": "runInTerminal", "arguments": map[string]any{"args": []string{"x"}}})
			var msg dap.Message
			_ = json.Unmarshal(b, &msg)
			_ = f.w.Write(msg)
			go func() {
				r := <-f.revDone
				rs, _ := r.Int("request_seq")
				f.respond(m, map[string]any{"reverseOK": rs == s, "reverseBody": string(r["body"])})
			}()
		case "threads":
			f.respond(m, map[string]any{"threads": []any{map[string]any{"id": 1, "name": "python3"}, map[string]any{"id": 2, "name": "python3"}}})
		case "stackTrace":
			start, _ := args.Int("startFrame")
			// As lldb-dap: at most 3 frames per answer, with totalFrames.
			all := fakeFrames
			if f.cut {
				all = fakeFrames[:1]
			}
			start = min(start, int64(len(all)))
			end := min(int(start)+3, len(all))
			frames := all[start:end]
			if f.noIP {
				frames = nil
				for i, fr := range fakeFrames[start:end] {
					c := map[string]any{}
					for k, v := range fr {
						if k != "instructionPointerReference" {
							c[k] = v
						}
					}
					if n, ok := f.names[int(start)+i]; ok {
						c["name"] = n
					}
					frames = append(frames, c)
				}
			}
			f.respond(m, map[string]any{"stackFrames": frames, "totalFrames": len(all)})
		case "scopes":
			id, _ := args.Int("frameId")
			f.respond(m, map[string]any{"scopes": []any{map[string]any{"name": fmt.Sprint("Locals of ", id), "variablesReference": 77}}})
		case "variables":
			ref, _ := args.Int("variablesReference")
			if ref != 77 && ref != 78 {
				f.failResp(m, "bad ref")
				continue
			}
			f.respond(m, map[string]any{"variables": []any{map[string]any{"name": fmt.Sprint("c", ref), "value": "1", "variablesReference": 78}}})
		case "continue":
			f.respond(m, map[string]any{"allThreadsContinued": true})
			f.send(map[string]any{"type": "event", "event": "continued", "body": map[string]any{"threadId": 1}})
		case "pause":
			f.respond(m, nil)
			close(f.paused)
		case "source":
			ref, _ := args.Int("sourceReference")
			f.respond(m, map[string]any{"content": fmt.Sprint("adapter source ", ref)})
		case "evaluate":
			expr := args.Str("expression")
			f.mu.Lock()
			f.evals = append(f.evals, expr)
			f.mu.Unlock()
			fid, _ := args.Int("frameId")
			cmd, escaped := strings.CutPrefix(expr, f.escape)
			switch {
			case f.backtickOnly && !strings.HasPrefix(expr, "`"):
				f.failResp(m, "expression failed to parse")
			case expr == "source LATE":
				// Said while gdb's late setup runs: the editor must see
				// it after the stop it was held behind.
				f.send(map[string]any{"type": "event", "event": "output", "body": map[string]any{"category": "console", "output": "late output\n"}})
				f.respond(m, map[string]any{"result": "", "variablesReference": 0})
			case expr == "slow":
				go func() {
					<-f.paused
					f.respond(m, map[string]any{"result": "slow done", "variablesReference": 0})
				}()
			case escaped && strings.HasPrefix(cmd, "pyattach-dap "):
				f.respond(m, map[string]any{"result": "noise\n" + f.walker(strings.Fields(cmd)[1:]) + "\n", "variablesReference": 0})
			default:
				f.respond(m, map[string]any{"result": fmt.Sprintf("%s @%d", expr, fid), "variablesReference": 42})
			}
		default:
			f.respond(m, nil)
		}
	}
}

func (f *fake) walker(w []string) string {
	out := func(v any) string {
		b, _ := json.Marshal(v)
		return "pyattach-dap: " + string(b)
	}
	switch w[0] {
	case "stack":
		if w[1] != "1" {
			return out(map[string]any{"error": "no thread " + w[1]})
		}
		return "pyattach-dap: " + f.stackJSON()
	case "threads":
		return out(map[string]any{"threads": []any{map[string]any{"id": 1, "name": "MainThread"}}})
	case "locals":
		return out(map[string]any{"vars": []any{
			map[string]any{"name": "n", "value": "3", "type": "int", "ref": 0},
			map[string]any{"name": "items", "value": "[1, 2]", "type": "list", "ref": 999},
		}, "more": 2})
	case "children":
		if w[1] == "999" {
			return out(map[string]any{"vars": []any{map[string]any{"name": "[0]", "value": "1", "type": "int", "ref": 0}}, "more": 0})
		}
		return out(map[string]any{"vars": []any{map[string]any{"name": "args", "value": "('bad',)", "type": "tuple", "ref": 0}}, "more": 0})
	case "source":
		b, err := hex.DecodeString(w[1])
		if err != nil {
			return out(map[string]any{"error": "bad hex"})
		}
		return out(map[string]any{"text": "text of " + string(b)})
	}
	return out(map[string]any{"error": "unknown"})
}

// setup starts a proxy on a fake adapter and returns an editor's client.
func setup(t *testing.T, kind dap.Kind, prep func(string, dap.Message) (*dap.Setup, error), opts ...func(*fake)) (*daptest.Client, *fake) {
	t.Helper()
	edR, edW := io.Pipe() // editor -> proxy
	prR, prW := io.Pipe() // proxy -> editor
	adR, adW := io.Pipe() // proxy -> adapter
	faR, faW := io.Pipe() // adapter -> proxy
	dir := t.TempDir()
	src := filepath.Join(dir, "inner.py")
	if err := os.WriteFile(src, []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, w: dap.NewWriter(faW), paused: make(chan struct{}), revDone: make(chan dap.Message, 1), srcFile: src, escape: "`"}
	for _, o := range opts {
		o(f)
	}
	go f.serve(adR)
	p := dap.New(dap.Config{Kind: kind, Prepare: prep, Log: io.Discard}, prW, adW)
	done := make(chan error, 1)
	go func() { done <- p.Run(edR, faR) }()
	t.Cleanup(func() {
		edW.Close()
		faW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not end")
		}
	})
	c := daptest.New(edW, prR)
	c.Timeout = 20 * time.Second
	if _, err := c.Request("initialize", map[string]any{"adapterID": "x"}); err != nil {
		t.Fatal(err)
	}
	return c, f
}

func check[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestStackMerged(t *testing.T) {
	c, f := setup(t, dap.LLDB, nil)
	check[dap.Message](t)(c.Request("attach", map[string]any{"pid": 1}))
	check[dap.Message](t)(c.Request("configurationDone", nil))
	if _, _, err := c.Event("stopped", 0); err != nil {
		t.Fatal(err)
	}
	frames, total, err := c.StackTrace(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fr := range frames {
		s := fr.Name + "|" + fr.Hint
		if fr.Source != nil {
			s += fmt.Sprintf("|%s|%s|%d|%d", fr.Source.Name, fr.Source.Path, fr.Source.Ref, fr.Line)
		}
		got = append(got, s)
	}
	want := []string{
		"clock_nanosleep|",
		"inner||inner.py|" + f.srcFile + "|0|3",
		"middle||<frozen zipimport>|<frozen zipimport>|1099511627777|9",
		"_PyFunction_Vectorcall|subtle",
		"<module>||app.py|/nonexistent/app.py|1099511627778|20",
		"main||main.c||5|7",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || total != 6 {
		t.Fatalf("frames (total %d):\n%s\nwant:\n%s", total, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Ids are the proxy's, all different, none the adapter's.
	seen := map[int64]bool{}
	for _, fr := range frames {
		if seen[fr.ID] || fr.ID >= 1000 {
			t.Fatalf("frame id %d repeated or the adapter's", fr.ID)
		}
		seen[fr.ID] = true
	}
	// Unknown fields of the adapter's frames pass through.
	b := check[dap.Message](t)(c.Request("stackTrace", map[string]any{"threadId": 1}))
	if strings.Contains(string(b["stackFrames"]), `"custom"`) {
		t.Fatalf("the replaced eval frame leaked: %s", b["stackFrames"])
	}

	// Paging from the cached stack, totalFrames kept.
	page, total, err := c.StackTrace(1, 2, 2)
	if err != nil || total != 6 || len(page) != 2 || page[0].Name != "middle" || page[1].Name != "_PyFunction_Vectorcall" {
		t.Fatalf("page: %+v total %d err %v", page, total, err)
	}
	if page[0].ID != frames[2].ID {
		t.Fatalf("a cached stack keeps its ids: %d != %d", page[0].ID, frames[2].ID)
	}
	page, total, _ = c.StackTrace(1, 5, 10)
	if len(page) != 1 || page[0].Name != "main" || total != 6 {
		t.Fatalf("last page: %+v", page)
	}
	page, _, _ = c.StackTrace(1, 50, 10)
	if len(page) != 0 {
		t.Fatalf("page beyond the end: %+v", page)
	}
	// Only one walk: the stack is cached.
	n := 0
	for _, e := range f.evals {
		if strings.HasPrefix(e, "`pyattach-dap stack") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("walked %d times: %q", n, f.evals)
	}

	// A Python frame's scopes: Locals, and the Exception on the innermost.
	sc := check[[]daptest.Scope](t)(c.Scopes(frames[1].ID))
	if len(sc) != 2 || sc[0].Name != "Locals" || sc[1].Name != "Exception" {
		t.Fatalf("scopes: %+v", sc)
	}
	vars := check[[]daptest.Var](t)(c.Variables(sc[0].Ref))
	if len(vars) != 3 || vars[0].Name != "n" || vars[0].Value != "3" || vars[0].Ref != 0 || vars[1].Ref == 0 || vars[2].Value != "(2 more)" {
		t.Fatalf("locals: %+v", vars)
	}
	kids := check[[]daptest.Var](t)(c.Variables(vars[1].Ref))
	if len(kids) != 1 || kids[0].Name != "[0]" {
		t.Fatalf("children: %+v", kids)
	}
	exc := check[[]daptest.Var](t)(c.Variables(sc[1].Ref))
	if len(exc) != 1 || exc[0].Name != "ValueError" || exc[0].Value != "ValueError('bad')" || exc[0].Ref == 0 {
		t.Fatalf("exception: %+v", exc)
	}
	sc2 := check[[]daptest.Scope](t)(c.Scopes(frames[4].ID))
	if len(sc2) != 1 {
		t.Fatalf("an outer frame has no Exception scope: %+v", sc2)
	}
	// A C frame's scopes go to the adapter with its id; refs remapped.
	csc := check[[]daptest.Scope](t)(c.Scopes(frames[0].ID))
	if len(csc) != 1 || csc[0].Name != "Locals of 1000" || csc[0].Ref == 77 {
		t.Fatalf("C scopes: %+v", csc)
	}
	cv := check[[]daptest.Var](t)(c.Variables(csc[0].Ref))
	if len(cv) != 1 || cv[0].Name != "c77" || cv[0].Ref == 78 || cv[0].Ref == 0 {
		t.Fatalf("C variables: %+v", cv)
	}
	cv2 := check[[]daptest.Var](t)(c.Variables(cv[0].Ref))
	if cv2[0].Name != "c78" {
		t.Fatalf("nested C variables: %+v", cv2)
	}

	// evaluate: a local's name on hover; py-bt in the console goes to
	// the eval frame's C frame.
	ev := check[dap.Message](t)(c.Request("evaluate", map[string]any{"expression": "n", "frameId": frames[1].ID, "context": "hover"}))
	if ev.Str("result") != "3" {
		t.Fatalf("hover: %v", ev)
	}
	ev = check[dap.Message](t)(c.Request("evaluate", map[string]any{"expression": "py-bt", "frameId": frames[4].ID, "context": "repl"}))
	if ev.Str("result") != "py-bt @1003" {
		t.Fatalf("repl on a Python frame: %v", ev)
	}
	if r, _ := ev.Int("variablesReference"); r == 42 {
		t.Fatalf("evaluate's reference not remapped")
	}

	// source: a handed-out reference is read by the walker, the
	// adapter's own go to it, a forged one is refused.
	src := check[dap.Message](t)(c.Request("source", map[string]any{"sourceReference": frames[2].Source.Ref}))
	if src.Str("content") != "text of <frozen zipimport>" {
		t.Fatalf("source: %v", src)
	}
	src = check[dap.Message](t)(c.Request("source", map[string]any{"source": map[string]any{"sourceReference": 5}, "sourceReference": 5}))
	if src.Str("content") != "adapter source 5" {
		t.Fatalf("adapter source: %v", src)
	}
	if _, err := c.Request("source", map[string]any{"sourceReference": int64(1)<<40 + 99}); err == nil {
		t.Fatal("a forged sourceReference was served")
	}

	// threads renamed.
	th := check[dap.Message](t)(c.Request("threads", nil))
	if !strings.Contains(string(th["threads"]), `"name":"MainThread"`) || !strings.Contains(string(th["threads"]), `{"id":2,"name":"python3"}`) {
		t.Fatalf("threads: %s", th["threads"])
	}

	// Resume: every id dies.
	check[dap.Message](t)(c.Request("continue", map[string]any{"threadId": 1}))
	for _, req := range []struct {
		cmd  string
		args map[string]any
	}{
		{"scopes", map[string]any{"frameId": frames[0].ID}},
		{"scopes", map[string]any{"frameId": frames[1].ID}},
		{"variables", map[string]any{"variablesReference": sc[0].Ref}},
		{"variables", map[string]any{"variablesReference": csc[0].Ref}},
		{"evaluate", map[string]any{"expression": "n", "frameId": frames[1].ID, "context": "hover"}},
		{"setVariable", map[string]any{"variablesReference": cv[0].Ref, "name": "c", "value": "2"}},
	} {
		r := check[dap.Message](t)(c.Raw(req.cmd, req.args))
		if r.Bool("success") || !strings.Contains(r.Str("message"), "unknown") {
			t.Errorf("%s on a stale id: %v", req.cmd, r)
		}
	}
	// The adapter's stack is asked again after the resume.
	frames2, _, err := c.StackTrace(1, 0, 0)
	if err != nil || len(frames2) != 6 || frames2[0].ID <= frames[len(frames)-1].ID {
		t.Fatalf("after resume: %+v %v", frames2, err)
	}
}

func TestForgedIDs(t *testing.T) {
	c, _ := setup(t, dap.LLDB, nil)
	for _, req := range []struct {
		cmd  string
		args any
	}{
		{"scopes", map[string]any{"frameId": 1000}},
		{"scopes", map[string]any{"frameId": "x"}},
		{"scopes", map[string]any{"frameId": -1}},
		{"scopes", map[string]any{"frameId": 1e300}},
		{"variables", map[string]any{"variablesReference": 77}},
		{"variables", map[string]any{"variablesReference": nil}},
		{"variables", "not an object"},
		{"evaluate", map[string]any{"expression": "x", "frameId": 5}},
		{"setExpression", map[string]any{"expression": "x", "value": "1", "frameId": 5}},
		{"completions", map[string]any{"text": "x", "column": 1, "frameId": 5}},
		{"dataBreakpointInfo", map[string]any{"name": "x", "variablesReference": 77}},
		{"source", map[string]any{"sourceReference": int64(1) << 41}},
		{"stackTrace", map[string]any{}},
	} {
		r, err := c.Raw(req.cmd, req.args)
		if err != nil {
			t.Fatal(err)
		}
		if r.Bool("success") {
			t.Errorf("%s %v succeeded: %v", req.cmd, req.args, r)
		}
	}
	// The proxy still works.
	if _, err := c.Request("threads", nil); err != nil {
		t.Fatal(err)
	}
}

// A pause is relayed at once, even while an earlier request waits for
// the adapter (which answers it only after the pause).
func TestPauseNotBlocked(t *testing.T) {
	c, _ := setup(t, dap.LLDB, nil)
	_, slow := c.Send("evaluate", map[string]any{"expression": "slow", "context": "repl"})
	_, pause := c.Send("pause", map[string]any{"threadId": 1})
	if _, err := c.Wait("pause", pause); err != nil {
		t.Fatal(err)
	}
	r, err := c.Wait("evaluate", slow)
	if err != nil || r.Obj("body").Str("result") != "slow done" {
		t.Fatalf("slow: %v %v", r, err)
	}
}

// The editor's seqs and the proxy's own never collide on the adapter's
// side, reverse requests are relayed with their responses mapped back.
func TestSeqMapping(t *testing.T) {
	c, f := setup(t, dap.LLDB, nil)
	c.Reverse = func(req dap.Message) (any, error) {
		return map[string]any{"processId": 4242}, nil
	}
	frames, _, err := c.StackTrace(1, 0, 0) // the proxy's own requests
	if err != nil || len(frames) != 6 {
		t.Fatal(err)
	}
	r := check[dap.Message](t)(c.Request("runInTerminalPlease", nil))
	if !r.Bool("reverseOK") || !strings.Contains(r.Str("reverseBody"), "4242") {
		t.Fatalf("reverse request: %v", r)
	}
	r = check[dap.Message](t)(c.Request("evaluate", map[string]any{"expression": "1+1", "context": "repl"}))
	if r.Str("result") != "1+1 @0" {
		t.Fatalf("evaluate: %v", r)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[int64]bool{}
	last := int64(0)
	for i, s := range f.seqs {
		if seen[s] || s <= last {
			t.Fatalf("seq %d (%s) repeated or out of order: %v", s, f.commands[i], f.seqs)
		}
		seen[s], last = true, s
	}
}

// gdb: Early is run before the attach is forwarded, Late when the first
// stop arrives, before that stop is relayed; lldb: the commands join
// the user's.
func TestSetup(t *testing.T) {
	c, f := setup(t, dap.GDB, func(cmd string, args dap.Message) (*dap.Setup, error) {
		return &dap.Setup{Early: []string{"source EARLY"}, Late: []string{"source LATE", "set pyattach-bt-filter off"}, Warnings: []string{"a warning"}}, nil
	})
	check[dap.Message](t)(c.Request("attach", map[string]any{"pid": 1}))
	check[dap.Message](t)(c.Request("configurationDone", nil))
	if _, _, err := c.Event("stopped", 0); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	got := strings.Join(f.evals, ";")
	cmds := strings.Join(f.commands, ",")
	f.mu.Unlock()
	if got != "source EARLY;source LATE;set pyattach-bt-filter off" {
		t.Fatalf("evaluated: %q", got)
	}
	if !strings.HasPrefix(cmds, "initialize,evaluate,attach,configurationDone,evaluate,evaluate") {
		t.Fatalf("order: %s", cmds)
	}
	if !strings.Contains(c.Output(), "pyattach: a warning") {
		t.Fatalf("output: %q", c.Output())
	}
	// What the adapter sent during the late setup comes after the stop.
	_, stop, _ := c.Event("stopped", 0)
	late := -1
	for after := 0; late < 0; {
		e, i, err := c.Event("output", after)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(e["body"]), "late output") {
			late = i
		}
		after = i
	}
	if late < stop {
		t.Fatalf("the late setup's output (event %d) came before the stop (%d)", late, stop)
	}

	c2, _ := setup(t, dap.LLDB, func(cmd string, args dap.Message) (*dap.Setup, error) {
		return &dap.Setup{InitCommands: []string{"command source -s 1 'B'"}, PostRunCommands: []string{"command source -s 1 'A'"}}, nil
	})
	r := check[dap.Message](t)(c2.Request("attach", map[string]any{"pid": 1, "initCommands": []string{"user"}, "other": map[string]any{"x": 1}}))
	want := `{"initCommands":["command source -s 1 'B'","user"],"other":{"x":1},"pid":1,"postRunCommands":["command source -s 1 'A'"]}`
	if r.Str("echo") != want {
		t.Fatalf("attach arguments:\n%s\nwant\n%s", r.Str("echo"), want)
	}

	c3, _ := setup(t, dap.LLDB, func(cmd string, args dap.Message) (*dap.Setup, error) {
		return nil, fmt.Errorf("not a Python process")
	})
	r = check[dap.Message](t)(c3.Request("attach", map[string]any{"pid": 1}))
	if r.Str("echo") != `{"pid":1}` || !strings.Contains(c3.Output(), "not a Python process") {
		t.Fatalf("failed plan: %v %q", r, c3.Output())
	}
}

// Every request the proxy handles itself, with arguments of every wrong
// shape, gets a response, and the proxy goes on.
func TestGarbageArguments(t *testing.T) {
	c, _ := setup(t, dap.LLDB, nil)
	frames, _, err := c.StackTrace(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	py := frames[1].ID
	shapes := []string{`null`, `"x"`, `[1,2]`, `7`, `{}`, `{"frameId":"1"}`, `{"frameId":-5}`, `{"frameId":1e400}`,
		`{"variablesReference":{"a":1}}`, `{"threadId":"1"}`, `{"threadId":99}`, `{"sourceReference":-1}`,
		`{"source":{"sourceReference":"x"}}`, `{"source":7}`, `{"startFrame":-3,"levels":-1,"threadId":1}`,
		`{"startFrame":9223372036854775807,"levels":9223372036854775807,"threadId":1}`,
		fmt.Sprintf(`{"frameId":%d,"expression":7,"context":["hover"]}`, py),
		fmt.Sprintf(`{"frameId":%d,"expression":"n","context":"hover"}`, py),
		`{"variablesReference":1,"start":-1,"count":-1}`, `{"variablesReference":1,"start":1,"count":9223372036854775807}`, `{"initCommands":"x","commandEscapePrefix":7,"pid":1}`}
	for _, cmd := range []string{"stackTrace", "scopes", "variables", "evaluate", "setVariable", "setExpression",
		"completions", "source", "threads", "dataBreakpointInfo", "stepInTargets", "restartFrame", "attach"} {
		for _, a := range shapes {
			_, ch := c.Send(cmd, json.RawMessage(a))
			r, err := c.Wait(cmd, ch)
			if err != nil {
				t.Fatalf("%s %s: %v", cmd, a, err)
			}
			if r.Str("command") != cmd {
				t.Fatalf("%s %s: response %v", cmd, a, r)
			}
		}
	}
	// The attach above dropped every id: the stack again.
	frames, _, err = c.StackTrace(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sc := check[[]daptest.Scope](t)(c.Scopes(frames[1].ID))
	for _, a := range []map[string]any{{"start": 1, "count": int64(9223372036854775807)}, {"start": int64(9223372036854775807), "count": 5}, {"start": -1}} {
		a["variablesReference"] = sc[0].Ref
		if _, err := c.Request("variables", a); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.StackTrace(1, 0, 1); err != nil {
		t.Fatal(err)
	}
}

// mergedNames is thread 1's stack as names, after an attach with args.
func mergedNames(t *testing.T, c *daptest.Client, args map[string]any) string {
	t.Helper()
	check[dap.Message](t)(c.Request("attach", args))
	check[dap.Message](t)(c.Request("configurationDone", nil))
	if _, _, err := c.Event("stopped", 0); err != nil {
		t.Fatal(err)
	}
	frames, _, err := c.StackTrace(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fr := range frames {
		got = append(got, fr.Name)
	}
	return strings.Join(got, ",")
}

func (f *fake) evaluated() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.evals...)
}

// TestStackLinedUpByName: an adapter that gives frames no
// instructionPointerReference (lldb-vscode 14) has its frames lined up
// with the walker's by function name; one name that differs and the C
// frames stay as the adapter gives them.
func TestStackLinedUpByName(t *testing.T) {
	merged := "clock_nanosleep,inner,middle,_PyFunction_Vectorcall,<module>,main"
	c, _ := setup(t, dap.LLDB, nil, func(f *fake) { f.noIP = true })
	if got := mergedNames(t, c, map[string]any{"pid": 1}); got != merged {
		t.Errorf("without instructionPointerReference: %s, want %s", got, merged)
	}
	// main's frame: the walker names no function there; any name goes.
	c, _ = setup(t, dap.LLDB, nil, func(f *fake) { f.noIP, f.names = true, map[int]string{4: "0x50"} })
	if got := mergedNames(t, c, map[string]any{"pid": 1}); got != strings.Replace(merged, "main", "0x50", 1) {
		t.Errorf("a frame the walker names no function for: %s", got)
	}
	c, _ = setup(t, dap.LLDB, nil, func(f *fake) { f.noIP, f.names = true, map[int]string{2: "other"} })
	plain := "clock_nanosleep,_PyEval_EvalFrameDefault,other,_PyEval_EvalFrameDefault,main"
	if got := mergedNames(t, c, map[string]any{"pid": 1}); got != plain {
		t.Errorf("frames that do not line up: %s, want %s", got, plain)
	}
}

// TestStackCutShort: where the debugger stops unwinding before the
// eval loop (lldb 19 on LTO-split functions), the Python frames the
// walker read follow the C frames it found, after a label frame; where
// the walker's frames do not line up, the adapter's are shown alone.
func TestStackCutShort(t *testing.T) {
	c, _ := setup(t, dap.LLDB, nil, func(f *fake) { f.cut = true })
	want := "clock_nanosleep,[the debugger did not unwind further; Python frames read from memory],inner,middle,<module>"
	if got := mergedNames(t, c, map[string]any{"pid": 1}); got != want {
		t.Errorf("cut short: %s, want %s", got, want)
	}
	frames, _, err := c.StackTrace(1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 5 || frames[1].Hint != "label" || frames[2].Line != 3 {
		t.Errorf("frames: %+v", frames)
	}
	c, _ = setup(t, dap.LLDB, nil, func(f *fake) { f.cut, f.noIP, f.names = true, true, map[int]string{0: "other"} })
	if got := mergedNames(t, c, map[string]any{"pid": 1}); got != "other" {
		t.Errorf("not lined up: %s, want the adapter's frame alone", got)
	}
}

// TestEscapePrefix: the proxy's commands go with the attach request's
// commandEscapePrefix where the adapter knows it (it says its lldb
// version: lldb-dap 19 and later); an adapter that says none and
// answers such a command as an expression that does not parse
// (lldb-vscode 14) gets "`" commands from then on.
func TestEscapePrefix(t *testing.T) {
	merged := "clock_nanosleep,inner,middle,_PyFunction_Vectorcall,<module>,main"
	c, f := setup(t, dap.LLDB, nil, func(f *fake) { f.version, f.escape = "lldb version 19.1.7", "" })
	if got := mergedNames(t, c, map[string]any{"pid": 1, "commandEscapePrefix": ""}); got != merged {
		t.Errorf("lldb-dap 19, prefix \"\": %s", got)
	}
	if ev := f.evaluated(); len(ev) != 1 || ev[0] != "pyattach-dap stack 1" {
		t.Errorf("lldb-dap 19, prefix \"\": %q", ev)
	}

	c, f = setup(t, dap.LLDB, nil, func(f *fake) { f.backtickOnly = true })
	if got := mergedNames(t, c, map[string]any{"pid": 1, "commandEscapePrefix": ":"}); got != merged {
		t.Errorf("lldb-vscode 14, prefix \":\": %s", got)
	}
	check[dap.Message](t)(c.Request("threads", nil))
	want := []string{":pyattach-dap stack 1", "`pyattach-dap stack 1", "`pyattach-dap threads"}
	if ev := f.evaluated(); strings.Join(ev, "|") != strings.Join(want, "|") {
		t.Errorf("lldb-vscode 14, prefix \":\": %q, want %q", ev, want)
	}

	// Without commandEscapePrefix: "`", as every lldb-dap.
	c, f = setup(t, dap.LLDB, nil, func(f *fake) { f.backtickOnly = true })
	if got := mergedNames(t, c, map[string]any{"pid": 1}); got != merged {
		t.Errorf("lldb-vscode 14: %s", got)
	}
	if ev := f.evaluated(); len(ev) != 1 || ev[0] != "`pyattach-dap stack 1" {
		t.Errorf("lldb-vscode 14: %q", ev)
	}
}
