package dap

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
)

// walkerPrefix starts the one line of the walker's answer.
const walkerPrefix = "pyattach-dap: "

// walker runs `pyattach-dap WORDS` in the debugger and decodes its
// answer into out; an {"error"} answer is an error.
func (p *Proxy) walker(out any, words ...string) error {
	resp, err := p.evalCommand("pyattach-dap " + strings.Join(words, " "))
	if err != nil {
		return err
	}
	text := resp.Obj("body").Str("result")
	line := ""
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(l, "\r"), walkerPrefix); ok {
			line = v
		}
	}
	if line == "" {
		return fmt.Errorf("pyattach-dap %s: no answer from the walker (%s)", words[0], safetext.Escape(firstLine(text)))
	}
	var e struct {
		Error *string `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		return fmt.Errorf("pyattach-dap %s: %v", words[0], err)
	}
	if e.Error != nil {
		return fmt.Errorf("pyattach-dap %s: %s", words[0], safetext.Escape(*e.Error))
	}
	if err := json.Unmarshal([]byte(line), out); err != nil {
		return fmt.Errorf("pyattach-dap %s: %v", words[0], err)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// --- stackTrace ---

type nativeFrame struct {
	PC uint64 `json:"pc"`
	// Function is the frame's function as the debugger names it (null
	// when it names none): never shown, only compared.
	Function *string   `json:"function"`
	Kind     string    `json:"kind"`
	Python   []pyFrame `json:"python"`
}

type stackAnswer struct {
	Native    []nativeFrame `json:"native"`
	Merged    bool          `json:"merged"`
	Why       string        `json:"why"`
	Exception *exception    `json:"exception"`
	// Python lists every Python frame of the thread when the debugger
	// stopped unwinding before the eval loop: they follow the C frames.
	Python []pyFrame `json:"python"`
}

// cutShort says whether st is a stack the debugger stopped unwinding
// before its first eval loop frame, with Python frames to show after
// its C frames.
func (st *stackAnswer) cutShort() bool {
	if st.Merged || len(st.Python) == 0 {
		return false
	}
	for _, n := range st.Native {
		if n.Kind == "eval" {
			return false
		}
	}
	return true
}

func (p *Proxy) stackTrace(req Message, args Message) {
	tid, ok := args.Int("threadId")
	if !ok {
		p.fail(req, "stackTrace needs a threadId")
		return
	}
	frames, err := p.stack(tid)
	if err != nil {
		p.fail(req, err.Error())
		return
	}
	start, _ := args.Int("startFrame")
	levels, _ := args.Int("levels")
	total := int64(len(frames))
	start = min(max(start, 0), total)
	end := total
	if levels > 0 && levels < total-start {
		end = start + levels
	}
	p.respond(req, map[string]any{"stackFrames": frames[start:end], "totalFrames": total})
}

// stack is thread tid's whole stack with the proxy's ids, merged with
// its Python frames where the walker can; cached until the program runs.
func (p *Proxy) stack(tid int64) ([]Message, error) {
	p.mu.Lock()
	if s, ok := p.stacks[tid]; ok {
		p.mu.Unlock()
		return s, nil
	}
	p.mu.Unlock()
	frames, err := p.adapterStack(tid)
	if err != nil {
		return nil, err
	}
	var st stackAnswer
	werr := p.walker(&st, "stack", strconv.FormatInt(tid, 10))
	if werr == nil && !st.Merged && !st.cutShort() {
		werr = fmt.Errorf("Python frames not merged: %s", safetext.Escape(st.Why))
	}
	if werr == nil && !linesUp(st.Native, frames) {
		werr = fmt.Errorf("the walker's frames (%d) do not line up with the adapter's (%d)", len(st.Native), len(frames))
	}
	if werr != nil {
		p.logf("thread %d: %v", tid, werr)
		st = stackAnswer{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Message
	innermost := true
	for i, f := range frames {
		aid, _ := f.Int("id")
		if werr != nil || st.Native[i].Kind != "eval" || len(st.Native[i].Python) == 0 {
			c := f.Clone()
			id := p.newID()
			p.frames[id] = &frame{adapterID: aid, thread: tid}
			c.Set("id", id)
			if werr == nil && st.Native[i].Kind == "helper" {
				c.Set("presentationHint", "subtle")
			}
			out = append(out, c)
			continue
		}
		for _, py := range st.Native[i].Python {
			py := py
			id := p.newID()
			p.frames[id] = &frame{adapterID: aid, py: &py, thread: tid, innermost: innermost}
			innermost = false
			out = append(out, p.pyStackFrame(id, &py))
		}
	}
	if werr == nil && st.cutShort() {
		// A label, as editors show "[async boundary]", then the Python
		// frames the walker read from memory, on the innermost C frame.
		aid, _ := frames[len(frames)-1].Int("id")
		id := p.newID()
		p.frames[id] = &frame{adapterID: aid, thread: tid}
		label := Message{}
		label.Set("id", id)
		label.Set("name", "[the debugger did not unwind further; Python frames read from memory]")
		label.Set("line", 0)
		label.Set("column", 0)
		label.Set("presentationHint", "label")
		out = append(out, label)
		for _, py := range st.Python {
			py := py
			id := p.newID()
			p.frames[id] = &frame{adapterID: aid, py: &py, thread: tid, innermost: innermost}
			innermost = false
			out = append(out, p.pyStackFrame(id, &py))
		}
	}
	if st.Exception != nil {
		p.excs[tid] = st.Exception
	}
	p.stacks[tid] = out
	return out, nil
}

// adapterStack is the adapter's whole stack of thread tid.
func (p *Proxy) adapterStack(tid int64) ([]Message, error) {
	var all []Message
	for len(all) < 100000 {
		resp, err := p.call("stackTrace", map[string]any{"threadId": tid, "startFrame": len(all), "levels": 0})
		if err != nil {
			return nil, err
		}
		body := resp.Obj("body")
		var frames []Message
		if err := json.Unmarshal(body["stackFrames"], &frames); err != nil {
			return nil, fmt.Errorf("stackTrace: the adapter's frames: %v", err)
		}
		all = append(all, frames...)
		total, ok := body.Int("totalFrames")
		if len(frames) == 0 || !ok || int64(len(all)) >= total {
			break
		}
	}
	for _, f := range all {
		if f == nil {
			return nil, errors.New("stackTrace: a frame of the adapter's is not an object")
		}
	}
	return all, nil
}

// linesUp says whether the walker's native frames are the adapter's:
// as many, each at the same pc, or, where the adapter gives a frame no
// instructionPointerReference (lldb-vscode 14 gives none), with the
// same function name (when the debugger names one).
func linesUp(native []nativeFrame, frames []Message) bool {
	if len(native) != len(frames) || len(native) == 0 {
		return false
	}
	for i, f := range frames {
		if ip := f.Str("instructionPointerReference"); ip != "" {
			pc, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(ip), "0x"), 16, 64)
			if err != nil || pc != native[i].PC {
				return false
			}
			continue
		}
		if fn := native[i].Function; fn != nil && *fn != "" && f.Str("name") != *fn {
			return false
		}
	}
	return true
}

// pyStackFrame is the editor's StackFrame of Python frame py. Called
// with p.mu held.
func (p *Proxy) pyStackFrame(id int64, py *pyFrame) Message {
	m := Message{}
	m.Set("id", id)
	m.Set("name", py.Name)
	line := py.Line
	if !p.lines1 && line > 0 {
		line--
	}
	m.Set("line", line)
	col := 1
	if !p.cols1 {
		col = 0
	}
	m.Set("column", col)
	m.Set("source", p.pySource(py.File))
	return m
}

// pySource is the Source of a Python file: its path when the editor can
// open it as the process sees it, else a reference the proxy serves.
// Called with p.mu held.
func (p *Proxy) pySource(file string) map[string]any {
	root := ""
	if p.setup != nil {
		root = p.setup.Root
	}
	name := safetext.Escape(path.Base(file))
	if path.IsAbs(file) {
		cand := path.Clean(root + file)
		if openable(root, cand) {
			return map[string]any{"name": name, "path": cand}
		}
	}
	var id int64
	for k, v := range p.sources {
		if v == file {
			id = k
		}
	}
	if id == 0 {
		p.nextSrc++
		id = p.nextSrc
		p.sources[id] = file
	}
	return map[string]any{"name": name, "path": safetext.Escape(file), "sourceReference": id, "origin": "read by pyattach from the process"}
}

// openable says whether file (under root when not "") is a regular file
// this user can read; under a root, it must still be under the root once
// cleaned (a co_filename of "/../../etc/x" names the root's parent) and
// no symbolic link may be on its way (this machine would resolve it
// outside the root).
func openable(root, file string) bool {
	if root != "" {
		if !strings.HasPrefix(file, strings.TrimSuffix(root, "/")+"/") {
			return false
		}
		for d := file; len(d) > len(root); d = path.Dir(d) {
			fi, err := os.Lstat(d)
			if err != nil || fi.Mode()&os.ModeSymlink != 0 {
				return false
			}
		}
	}
	fi, err := os.Stat(file)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// --- source ---

func (p *Proxy) source(req Message, args Message) {
	id, _ := args.Int("sourceReference")
	if s := args.Obj("source"); s != nil {
		if n, ok := s.Int("sourceReference"); ok && n > 0 {
			id = n
		}
	}
	if id < srcBase {
		p.forward(req, nil)
		return
	}
	p.mu.Lock()
	file, ok := p.sources[id]
	p.mu.Unlock()
	if !ok {
		p.fail(req, fmt.Sprintf("unknown sourceReference %d", id))
		return
	}
	p.goHandle(req, func() {
		var a struct {
			Text string `json:"text"`
		}
		if err := p.walker(&a, "source", hex.EncodeToString([]byte(file))); err != nil {
			p.fail(req, err.Error())
			return
		}
		p.respond(req, map[string]any{"content": a.Text, "mimeType": "text/x-python"})
	})
}

// --- threads ---

func (p *Proxy) threads(req Message) {
	resp, err := p.call("threads", map[string]any{})
	if err != nil {
		if resp != nil {
			out := resp.Clone()
			out["request_seq"] = req["seq"]
			p.toEditor(out)
			return
		}
		p.fail(req, err.Error())
		return
	}
	body := resp.Obj("body")
	var ts []Message
	_ = json.Unmarshal(body["threads"], &ts)
	var a struct {
		Threads []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"threads"`
	}
	if err := p.walker(&a, "threads"); err == nil {
		names := map[int64]string{}
		for _, t := range a.Threads {
			names[t.ID] = t.Name
		}
		for _, t := range ts {
			if t == nil {
				continue
			}
			id, _ := t.Int("id")
			if n, ok := names[id]; ok {
				t.Set("name", n)
			}
		}
		body.Set("threads", ts)
	}
	out := resp.Clone()
	out["request_seq"] = req["seq"]
	out.Set("body", body)
	p.toEditor(out)
}

// --- scopes, variables, evaluate of Python frames ---

type pyVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type"`
	Ref   uint64 `json:"ref"`
}

type varsAnswer struct {
	Vars []pyVar `json:"vars"`
	More int64   `json:"more"`
}

func (p *Proxy) pyScopes(req Message, f *frame) {
	p.mu.Lock()
	id := p.newID()
	p.refs[id] = &ref{locals: f.py.Addr}
	scopes := []map[string]any{{"name": "Locals", "presentationHint": "locals", "variablesReference": id, "expensive": false}}
	if e := p.excs[f.thread]; e != nil && f.innermost {
		eid := p.newID()
		p.refs[eid] = &ref{exc: e}
		scopes = append(scopes, map[string]any{"name": "Exception", "variablesReference": eid, "expensive": false})
	}
	p.mu.Unlock()
	p.respond(req, map[string]any{"scopes": scopes})
}

func (p *Proxy) variables(req Message, args Message) {
	v, _ := args.Int("variablesReference")
	p.mu.Lock()
	r := p.refs[v]
	p.mu.Unlock()
	if r == nil {
		p.fail(req, fmt.Sprintf("unknown variablesReference %d (the program ran since, or it was never handed out)", v))
		return
	}
	if r.adapter != 0 {
		args.Set("variablesReference", r.adapter)
		p.forward(req, args)
		return
	}
	p.goHandle(req, func() {
		var vars []map[string]any
		if r.exc != nil {
			vars = []map[string]any{p.varOf(pyVar{Name: r.exc.Type, Value: r.exc.Value, Type: r.exc.Type, Ref: r.exc.Ref})}
		} else {
			var a varsAnswer
			var err error
			if r.locals != 0 {
				err = p.walker(&a, "locals", strconv.FormatUint(r.locals, 10))
			} else {
				err = p.walker(&a, "children", strconv.FormatUint(r.children, 10))
			}
			if err != nil {
				p.fail(req, err.Error())
				return
			}
			for _, x := range a.Vars {
				vars = append(vars, p.varOf(x))
			}
			if a.More > 0 {
				vars = append(vars, map[string]any{"name": "...", "value": fmt.Sprintf("(%d more)", a.More), "variablesReference": 0})
			}
		}
		start, _ := args.Int("start")
		count, _ := args.Int("count")
		n := int64(len(vars))
		start = min(max(start, 0), n)
		end := n
		if count > 0 && count < n-start {
			end = start + count
		}
		if vars == nil {
			vars = []map[string]any{}
		}
		p.respond(req, map[string]any{"variables": vars[start:end]})
	})
}

// varOf is the editor's Variable of x; an expandable value gets a new
// reference.
func (p *Proxy) varOf(x pyVar) map[string]any {
	v := map[string]any{"name": x.Name, "value": x.Value, "type": x.Type, "variablesReference": 0}
	if x.Ref != 0 {
		p.mu.Lock()
		id := p.newID()
		p.refs[id] = &ref{children: x.Ref}
		p.mu.Unlock()
		v["variablesReference"] = id
	}
	return v
}

// pyEvaluate answers an evaluate on a Python frame: a local's name
// (hover, watch, variables) with its value; anything else goes to the
// debugger on the eval loop's C frame (py-bt, py-locals typed in the
// console).
func (p *Proxy) pyEvaluate(req Message, args Message, f *frame) {
	expr := strings.TrimSpace(args.Str("expression"))
	switch args.Str("context") {
	case "hover", "watch", "variables", "clipboard":
		if isIdent(expr) {
			var a varsAnswer
			if err := p.walker(&a, "locals", strconv.FormatUint(f.py.Addr, 10)); err == nil {
				for _, x := range a.Vars {
					if x.Name == expr {
						v := p.varOf(x)
						p.respond(req, map[string]any{"result": v["value"], "type": v["type"], "variablesReference": v["variablesReference"]})
						return
					}
				}
			}
		}
	}
	args.Set("frameId", f.adapterID)
	p.forward(req, args)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127 || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}
