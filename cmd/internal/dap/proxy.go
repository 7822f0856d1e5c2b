package dap

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Kind names the adapter behind the proxy.
type Kind string

const (
	// GDB is gdb's own DAP server (gdb -i=dap).
	GDB Kind = "gdb"
	// LLDB is lldb-dap (formerly lldb-vscode).
	LLDB Kind = "lldb"
)

// Setup is what pyattach applies for the target an attach or launch
// request names.
type Setup struct {
	// Early are gdb commands run (evaluate, context repl) before the
	// attach or launch request is forwarded; Late are run when the
	// first stopped event after it arrives, before that event is
	// forwarded.
	Early, Late []string
	// InitCommands are prepended to lldb-dap's initCommands,
	// PostRunCommands to its postRunCommands.
	InitCommands, PostRunCommands []string
	// Root is the directory the target's files are read under, as
	// this machine opens them ("/proc/PID/root" for a process in a
	// container, a bundle's root): "" for this machine's own files.
	Root string
	// Warnings are shown in the editor's debug console.
	Warnings []string
}

// Config configures a Proxy.
type Config struct {
	Kind Kind
	// Prepare resolves the target of an attach or launch request
	// (command is "attach" or "launch", args its arguments) and returns
	// what to apply. An error is shown in the debug console and the
	// request is forwarded as it is.
	Prepare func(command string, args Message) (*Setup, error)
	// Log receives the proxy's own diagnostics (stderr: stdout is the
	// protocol).
	Log io.Writer
	// CallTimeout bounds each of the proxy's own requests to the
	// adapter (0: one minute).
	CallTimeout time.Duration
}

// srcBase is the first sourceReference the proxy hands out: an
// adapter's own references (small numbers, or lldb-dap's frame ids)
// stay below it and pass through unchanged.
const srcBase int64 = 1 << 40

// Proxy relays DAP messages between an editor and an adapter.
type Proxy struct {
	cfg     Config
	editor  *Writer
	adapter io.Writer

	// outMu orders the messages to the editor: their seq and their
	// writing, and the messages held while gdb's late setup runs.
	outMu sync.Mutex
	eseq  int64
	hold  bool
	held  []held

	// inMu orders the messages to the adapter.
	inMu sync.Mutex
	aseq int64

	mu      sync.Mutex
	pending map[int64]*pending // by the seq the adapter was sent
	reverse map[int64]int64    // editor seq of a reverse request -> adapter seq
	nextID  int64
	nextSrc int64
	frames  map[int64]*frame
	refs    map[int64]*ref
	sources map[int64]string // handed-out sourceReference -> file
	stacks  map[int64][]Message
	excs    map[int64]*exception // by thread, this stop
	setup   *Setup
	late    []string // gdb: run at the first stop after the attach
	escape  string   // lldb-dap's commandEscapePrefix
	// escapeUnsure: the editor named a commandEscapePrefix other than
	// "`" and the adapter did not say its lldb version (lldb-dap 19
	// and later do): it may predate commandEscapePrefix (lldb-vscode
	// 17 and older run only "`" commands), which its first answer
	// tells.
	escapeUnsure bool
	lldbMajor    int  // the lldb version the adapter announced (0: none)
	lines1       bool // the editor counts lines from 1
	cols1        bool
	done         chan struct{}
	doneOnce     sync.Once
}

// held is a message to the editor held back while gdb's late setup
// runs; reverse is the adapter's seq of a reverse request (-1 for other
// messages).
type held struct {
	m       Message
	reverse int64
}

// notReverse is the reverse seq of a message that is no reverse request.
const notReverse = -1

type pending struct {
	editorSeq int64
	command   string
	ch        chan Message // the proxy's own request
}

// frame is a stack frame the proxy handed out.
type frame struct {
	adapterID int64 // the adapter's frame (a C frame, or the eval frame of a Python frame)
	py        *pyFrame
	thread    int64
	innermost bool // the thread's innermost Python frame
}

type pyFrame struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int64  `json:"line"`
	Addr uint64 `json:"frame"`
}

// ref is a variablesReference the proxy handed out.
type ref struct {
	adapter  int64  // the adapter's reference
	locals   uint64 // a Python frame's locals
	children uint64 // a Python object's children
	exc      *exception
}

type exception struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	Ref   uint64 `json:"ref"`
}

// New returns a proxy for an editor writing to editor and an adapter
// reading adapter.
func New(cfg Config, editor io.Writer, adapter io.Writer) *Proxy {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = time.Minute
	}
	return &Proxy{
		cfg: cfg, editor: NewWriter(editor), adapter: adapter,
		pending: map[int64]*pending{}, reverse: map[int64]int64{},
		frames: map[int64]*frame{}, refs: map[int64]*ref{}, sources: map[int64]string{},
		stacks: map[int64][]Message{}, excs: map[int64]*exception{},
		nextSrc: srcBase, escape: "`", lines1: true, cols1: true,
		done: make(chan struct{}),
	}
}

// Run relays messages until the editor or the adapter closes its
// stream. It returns nil on a clean end of either.
func (p *Proxy) Run(fromEditor, fromAdapter io.Reader) error {
	errc := make(chan error, 2)
	go func() {
		err := p.adapterLoop(bufio.NewReader(fromAdapter))
		p.doneOnce.Do(func() { close(p.done) })
		errc <- err
	}()
	go func() { errc <- p.editorLoop(bufio.NewReader(fromEditor)) }()
	return <-errc
}

func (p *Proxy) logf(format string, args ...any) {
	fmt.Fprintf(p.cfg.Log, "pyattach dap: "+format+"\n", args...)
}

// --- writing ---

// toEditor writes m with the editor side's next seq (held back while
// gdb's late setup runs).
func (p *Proxy) toEditor(m Message) {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	if p.hold {
		p.held = append(p.held, held{m: m, reverse: notReverse})
		return
	}
	p.writeEditorLocked(m, notReverse)
}

// writeEditorLocked writes m with the next seq; reverse, unless
// notReverse, is the adapter's seq of the reverse request m, recorded
// under the seq the editor will answer. Called with outMu held.
func (p *Proxy) writeEditorLocked(m Message, reverse int64) {
	p.eseq++
	m.Set("seq", p.eseq)
	if reverse != notReverse {
		p.mu.Lock()
		p.reverse[p.eseq] = reverse
		p.mu.Unlock()
	}
	if err := p.editor.Write(m); err != nil {
		p.logf("write to the editor: %v", err)
	}
}

// release writes the held messages, first (when not nil), and ends the
// hold. Called with outMu held.
func (p *Proxy) releaseLocked(first Message) {
	if first != nil {
		p.writeEditorLocked(first, notReverse)
	}
	for _, h := range p.held {
		p.writeEditorLocked(h.m, h.reverse)
	}
	p.hold, p.held = false, nil
}

// toAdapter writes m with the adapter side's next seq; register, when
// not nil, records the pending request under that seq first.
func (p *Proxy) toAdapter(m Message, pend *pending) int64 {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	p.aseq++
	seq := p.aseq
	m.Set("seq", seq)
	if pend != nil {
		p.mu.Lock()
		p.pending[seq] = pend
		p.mu.Unlock()
	}
	body, err := json.Marshal(m)
	if err == nil {
		_, err = fmt.Fprintf(p.adapter, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	if err != nil {
		p.logf("write to the adapter: %v", err)
	}
	return seq
}

// respond answers the editor's request req with body (nil: none).
func (p *Proxy) respond(req Message, body any) {
	m := Message{}
	m.Set("type", "response")
	m["request_seq"] = req["seq"]
	m.Set("command", req.Str("command"))
	m.Set("success", true)
	if body != nil {
		m.Set("body", body)
	}
	p.toEditor(m)
}

// fail answers req with an error; msg is shown to the user.
func (p *Proxy) fail(req Message, msg string) {
	m := Message{}
	m.Set("type", "response")
	m["request_seq"] = req["seq"]
	m.Set("command", req.Str("command"))
	m.Set("success", false)
	m.Set("message", msg)
	m.Set("body", map[string]any{"error": map[string]any{"id": 1, "format": msg, "showUser": false}})
	p.toEditor(m)
}

// console shows text in the editor's debug console.
func (p *Proxy) console(text string) {
	m := Message{}
	m.Set("type", "event")
	m.Set("event", "output")
	m.Set("body", map[string]any{"category": "console", "output": text + "\n"})
	p.toEditor(m)
}

// forward sends the editor's request req (with args as its arguments
// when not nil) to the adapter; its response is relayed back.
func (p *Proxy) forward(req Message, args Message) {
	seq, _ := req.Int("seq")
	out := req.Clone()
	if args != nil {
		out.Set("arguments", args)
	}
	p.toAdapter(out, &pending{editorSeq: seq, command: req.Str("command")})
}

// errCall is the error of a request the adapter answered with
// success false.
type errCall struct{ msg string }

func (e *errCall) Error() string { return e.msg }

// call sends the proxy's own request to the adapter and waits for its
// response.
func (p *Proxy) call(command string, args any) (Message, error) {
	m := Message{}
	m.Set("type", "request")
	m.Set("command", command)
	m.Set("arguments", args)
	ch := make(chan Message, 1)
	p.toAdapter(m, &pending{command: command, ch: ch})
	t := time.NewTimer(p.cfg.CallTimeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if !r.Bool("success") {
			msg := r.Str("message")
			if b := r.Obj("body"); b != nil {
				if e := b.Obj("error"); e != nil && e.Str("format") != "" {
					msg = e.Str("format")
				}
			}
			return r, &errCall{command + ": " + msg}
		}
		return r, nil
	case <-p.done:
		return nil, errors.New(command + ": the adapter has ended")
	case <-t.C:
		return nil, errors.New(command + ": the adapter did not answer in time")
	}
}

// guard answers req with an error when the handler it is deferred in
// panics: one bad request must not end the session.
func (p *Proxy) guard(req Message) {
	if r := recover(); r != nil {
		p.logf("%s: internal error: %v", req.Str("command"), r)
		p.fail(req, fmt.Sprintf("pyattach: internal error: %v", r))
	}
}

// goHandle runs f for req on its own goroutine, guarded.
func (p *Proxy) goHandle(req Message, f func()) {
	go func() {
		defer p.guard(req)
		f()
	}()
}

// --- the editor's side ---

func (p *Proxy) editorLoop(r *bufio.Reader) error {
	for {
		m, err := ReadMessage(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("from the editor: %w", err)
		}
		switch m.Str("type") {
		case "request":
			if _, ok := m.Int("seq"); !ok {
				p.logf("a request without seq from the editor, ignored")
				continue
			}
			p.onRequest(m)
		case "response":
			p.onEditorResponse(m)
		default:
			p.logf("a message of type %q from the editor, ignored", m.Str("type"))
		}
	}
}

// resumes are the requests that let the program run: the proxy's
// frames and references die with them.
var resumes = map[string]bool{
	"continue": true, "next": true, "stepIn": true, "stepOut": true,
	"stepBack": true, "reverseContinue": true, "goto": true,
	"restart": true, "restartFrame": true, "launch": true, "attach": true,
}

func (p *Proxy) onRequest(req Message) {
	defer p.guard(req)
	cmd := req.Str("command")
	args := req.Obj("arguments")
	if args == nil {
		args = Message{}
	}
	if resumes[cmd] && cmd != "restartFrame" {
		p.resumed()
	}
	switch cmd {
	case "initialize":
		p.mu.Lock()
		if _, ok := args["linesStartAt1"]; ok {
			p.lines1 = args.Bool("linesStartAt1")
		}
		if _, ok := args["columnsStartAt1"]; ok {
			p.cols1 = args.Bool("columnsStartAt1")
		}
		p.mu.Unlock()
		p.forward(req, nil)
	case "attach", "launch":
		// In line: the requests after it (configurationDone) must reach
		// the adapter after it.
		p.start(req, args)
	case "stackTrace":
		p.goHandle(req, func() { p.stackTrace(req, args) })
	case "threads":
		p.goHandle(req, func() { p.threads(req) })
	case "source":
		p.source(req, args)
	case "variables":
		p.variables(req, args)
	case "setVariable":
		r, err := p.adapterRef(args)
		if err != nil {
			p.fail(req, err.Error())
			return
		}
		args.Set("variablesReference", r)
		p.forward(req, args)
	case "scopes", "evaluate", "setExpression", "completions", "stepInTargets",
		"restartFrame", "dataBreakpointInfo", "gotoTargets", "exceptionInfo":
		p.frameRequest(req, cmd, args)
	default:
		p.forward(req, nil)
	}
}

// adapterRef maps args.variablesReference, which must be one the proxy
// handed out for an adapter's reference.
func (p *Proxy) adapterRef(args Message) (int64, error) {
	v, _ := args.Int("variablesReference")
	p.mu.Lock()
	r := p.refs[v]
	p.mu.Unlock()
	switch {
	case r == nil:
		return 0, fmt.Errorf("unknown variablesReference %d (the program ran since, or it was never handed out)", v)
	case r.adapter == 0:
		return 0, errors.New("the variables of Python frames cannot be changed")
	}
	return r.adapter, nil
}

func (p *Proxy) frameRequest(req Message, cmd string, args Message) {
	if cmd == "dataBreakpointInfo" {
		if _, ok := args["variablesReference"]; ok {
			r, err := p.adapterRef(args)
			if err != nil {
				p.fail(req, err.Error())
				return
			}
			args.Set("variablesReference", r)
		}
	}
	id, has := args.Int("frameId")
	if _, present := args["frameId"]; present && !has {
		p.fail(req, "frameId is not an integer")
		return
	}
	if !has {
		p.forward(req, args)
		return
	}
	p.mu.Lock()
	f := p.frames[id]
	p.mu.Unlock()
	if f == nil {
		p.fail(req, fmt.Sprintf("unknown frameId %d (the program ran since, or it was never handed out)", id))
		return
	}
	if f.py != nil {
		switch cmd {
		case "scopes":
			p.goHandle(req, func() { p.pyScopes(req, f) })
			return
		case "evaluate":
			p.goHandle(req, func() { p.pyEvaluate(req, args, f) })
			return
		case "setExpression", "restartFrame", "gotoTargets":
			p.fail(req, "not supported for a Python frame")
			return
		}
	}
	if cmd == "restartFrame" {
		p.resumed()
	}
	args.Set("frameId", f.adapterID)
	p.forward(req, args)
}

// resumed drops every frame and reference: the program runs.
func (p *Proxy) resumed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frames = map[int64]*frame{}
	p.refs = map[int64]*ref{}
	p.stacks = map[int64][]Message{}
	p.excs = map[int64]*exception{}
}

// newID is the next frame id or variablesReference; never repeats.
// Called with p.mu held.
func (p *Proxy) newID() int64 {
	p.nextID++
	return p.nextID
}

func (p *Proxy) onEditorResponse(m Message) {
	rs, _ := m.Int("request_seq")
	p.mu.Lock()
	aseq, ok := p.reverse[rs]
	delete(p.reverse, rs)
	p.mu.Unlock()
	if !ok {
		p.logf("a response to request %d the editor was never sent, ignored", rs)
		return
	}
	out := m.Clone()
	out.Set("request_seq", aseq)
	p.toAdapter(out, nil)
}

// --- the adapter's side ---

func (p *Proxy) adapterLoop(r *bufio.Reader) error {
	defer func() {
		p.outMu.Lock()
		if p.hold {
			p.releaseLocked(nil)
		}
		p.outMu.Unlock()
	}()
	for {
		m, err := ReadMessage(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("from the adapter: %w", err)
		}
		p.fromAdapter(m)
	}
}

// fromAdapter handles one message of the adapter's; a panic in it is
// logged and the message dropped.
func (p *Proxy) fromAdapter(m Message) {
	defer func() {
		if r := recover(); r != nil {
			p.logf("a message from the adapter: internal error: %v", r)
		}
	}()
	switch m.Str("type") {
	case "response":
		p.onAdapterResponse(m)
	case "event":
		p.onEvent(m)
	case "request":
		// Answered with this seq as request_seq, whatever it is
		// (lldb-dap 19 numbers its messages 0).
		seq, _ := m.Int("seq")
		out := m.Clone()
		p.outMu.Lock()
		// The editor's seq is only known when written: record it
		// under outMu, before the editor can answer.
		if p.hold {
			p.held = append(p.held, held{m: out, reverse: seq})
		} else {
			p.writeEditorLocked(out, seq)
		}
		p.outMu.Unlock()
	default:
		p.logf("a message of type %q from the adapter, ignored", m.Str("type"))
	}
}

func (p *Proxy) onAdapterResponse(m Message) {
	rs, _ := m.Int("request_seq")
	p.mu.Lock()
	pend := p.pending[rs]
	delete(p.pending, rs)
	p.mu.Unlock()
	if pend == nil {
		p.logf("a response to request %d the adapter was never sent, ignored", rs)
		return
	}
	if pend.ch != nil {
		pend.ch <- m
		return
	}
	out := m.Clone()
	out.Set("request_seq", pend.editorSeq)
	if pend.command == "initialize" && out.Bool("success") {
		p.noteVersion(out.Obj("body"))
	}
	if out.Bool("success") {
		p.remapBody(pend.command, out)
	}
	p.toEditor(out)
}

// remapBody replaces the adapter's variablesReferences in a response's
// body by the proxy's own.
func (p *Proxy) remapBody(command string, m Message) {
	body := m.Obj("body")
	if body == nil {
		return
	}
	switch command {
	case "scopes":
		body.Set("scopes", p.remapList(body, "scopes"))
	case "variables":
		body.Set("variables", p.remapList(body, "variables"))
	case "evaluate", "setVariable", "setExpression":
		p.remapOne(body)
	default:
		return
	}
	m.Set("body", body)
}

func (p *Proxy) remapList(body Message, key string) []Message {
	var list []Message
	_ = json.Unmarshal(body[key], &list)
	for _, v := range list {
		if v != nil {
			p.remapOne(v)
		}
	}
	return list
}

func (p *Proxy) remapOne(v Message) {
	r, ok := v.Int("variablesReference")
	if !ok || r <= 0 {
		return
	}
	p.mu.Lock()
	id := p.newID()
	p.refs[id] = &ref{adapter: r}
	p.mu.Unlock()
	v.Set("variablesReference", id)
}

func (p *Proxy) onEvent(m Message) {
	switch m.Str("event") {
	case "continued":
		p.resumed()
	case "stopped":
		p.mu.Lock()
		p.stacks = map[int64][]Message{}
		p.excs = map[int64]*exception{}
		late := p.late
		p.late = nil
		p.mu.Unlock()
		if late != nil {
			p.outMu.Lock()
			p.hold = true
			p.outMu.Unlock()
			go func() {
				p.runAll(late)
				p.outMu.Lock()
				p.releaseLocked(m.Clone())
				p.outMu.Unlock()
			}()
			return
		}
	}
	p.toEditor(m.Clone())
}

// noteVersion records the lldb version an initialize response
// announces: lldb-dap 19 as "__lldb": {"version": "lldb version 19.1.7"},
// later ones as "$__lldb_version"; lldb-vscode 14 says none.
func (p *Proxy) noteVersion(body Message) {
	if body == nil {
		return
	}
	v := body.Str("$__lldb_version")
	if o := body.Obj("__lldb"); v == "" && o != nil {
		v = o.Str("version")
	}
	major := 0
	if rest, ok := strings.CutPrefix(v, "lldb version "); ok {
		for _, r := range rest {
			if r < '0' || r > '9' || major > 1000 {
				break
			}
			major = major*10 + int(r-'0')
		}
	}
	p.mu.Lock()
	p.lldbMajor = major
	p.mu.Unlock()
}

// evalCommand runs debugger command c (evaluate, context repl). With
// lldb, c is escaped as the adapter runs commands: the attach
// request's commandEscapePrefix where the adapter knows it, "`" where
// it predates it.
func (p *Proxy) evalCommand(c string) (Message, error) {
	args := func(expr string) map[string]any { return map[string]any{"expression": expr, "context": "repl"} }
	if p.cfg.Kind != LLDB {
		return p.call("evaluate", args(c))
	}
	p.mu.Lock()
	esc, unsure := p.escape, p.escapeUnsure
	p.mu.Unlock()
	resp, err := p.call("evaluate", args(esc+c))
	if !unsure {
		return resp, err
	}
	var ec *errCall
	if errors.As(err, &ec) {
		// An expression that did not parse: the adapter runs only
		// "`" commands.
		if r2, err2 := p.call("evaluate", args("`"+c)); err2 == nil {
			p.logf("the adapter ignores commandEscapePrefix %q: its commands run with \"`\"", esc)
			p.mu.Lock()
			p.escape, p.escapeUnsure = "`", false
			p.mu.Unlock()
			return r2, nil
		}
	}
	if err == nil {
		p.mu.Lock()
		p.escapeUnsure = false
		p.mu.Unlock()
	}
	return resp, err
}

// runAll runs debugger commands through evaluate (context repl); their
// failures are shown in the debug console.
func (p *Proxy) runAll(cmds []string) {
	for _, c := range cmds {
		if _, err := p.evalCommand(c); err != nil {
			p.console("pyattach: " + err.Error())
		}
	}
}

// --- attach and launch ---

func (p *Proxy) start(req Message, args Message) {
	cmd := req.Str("command")
	if p.cfg.Kind == LLDB {
		if v, ok := args["commandEscapePrefix"]; ok {
			var s string
			if json.Unmarshal(v, &s) == nil {
				p.mu.Lock()
				p.escape = s
				// commandEscapePrefix came with lldb-dap 18; the
				// version is announced from 19 on.
				p.escapeUnsure = s != "`" && p.lldbMajor == 0
				p.mu.Unlock()
			}
		}
	}
	var s *Setup
	if p.cfg.Prepare != nil {
		var err error
		s, err = p.cfg.Prepare(cmd, args)
		if err != nil {
			p.console("pyattach: " + cmd + " without Python frames: " + strings.ReplaceAll(err.Error(), "\n", "\n  "))
			s = nil
		}
	}
	if s == nil {
		p.forward(req, args)
		return
	}
	for _, w := range s.Warnings {
		p.console("pyattach: " + w)
	}
	p.mu.Lock()
	p.setup = s
	p.mu.Unlock()
	switch p.cfg.Kind {
	case GDB:
		p.runAll(s.Early)
		if len(s.Late) > 0 {
			p.mu.Lock()
			p.late = s.Late
			p.mu.Unlock()
		}
		p.forward(req, args)
	case LLDB:
		if len(s.InitCommands) > 0 {
			args.Set("initCommands", append(append([]string(nil), s.InitCommands...), strList(args, "initCommands")...))
		}
		if len(s.PostRunCommands) > 0 {
			args.Set("postRunCommands", append(append([]string(nil), s.PostRunCommands...), strList(args, "postRunCommands")...))
		}
		p.forward(req, args)
	}
}

// strList is field k as a list of strings (the strings of it).
func strList(m Message, k string) []string {
	var raw []json.RawMessage
	_ = json.Unmarshal(m[k], &raw)
	var out []string
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}
