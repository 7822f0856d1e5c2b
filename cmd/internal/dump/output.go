package dump

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
)

// Output is what --json prints; its fields are documented in the
// command's help and in cmd/pyattach/help/json.md.
type Output struct {
	PID       int      `json:"pid,omitempty"`
	Core      string   `json:"core,omitempty"`
	Python    Python   `json:"python"`
	Threads   []Thread `json:"threads"`
	Truncated string   `json:"truncated,omitempty"`
	// With --tasks: the asyncio tasks (at most --max-tasks of them),
	// how many there are, the await cycles (task ids in await order) and
	// why none could be listed.
	Tasks      *[]Task     `json:"tasks,omitempty"`
	TasksTotal *int        `json:"tasks_total,omitempty"`
	TaskCycles *[][]uint64 `json:"task_cycles,omitempty"`
	TasksError string      `json:"tasks_error,omitempty"`
}

// Task is one asyncio task (pyattach_walk_tasks): its id (the Task
// object's address), name, state (pending, cancelled, done), coroutine
// stack innermost first, the task or future it awaits (null: none;
// AwaitingType that object's type), the tasks that await it, the thread
// running it now (its id as the process knows it).
type Task struct {
	ID              uint64      `json:"id"`
	Name            *string     `json:"name"`
	State           *string     `json:"state"`
	Frames          []TaskFrame `json:"frames"`
	Awaiting        *uint64     `json:"awaiting"`
	AwaitingType    string      `json:"awaiting_type,omitempty"`
	AwaitedBy       []uint64    `json:"awaited_by"`
	RunningInThread *int        `json:"running_in_thread,omitempty"`
	Error           string      `json:"error,omitempty"`
}

// TaskFrame is one coroutine frame of a task.
type TaskFrame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     *int   `json:"line"`
}

// TaskRef names the task a thread runs now.
type TaskRef struct {
	ID   uint64  `json:"id"`
	Name *string `json:"name"`
}

// Python is the interpreter of the target.
type Python struct {
	Version string `json:"version"`
}

// Thread is one OS thread and its stacks, innermost frame first.
type Thread struct {
	TID  int     `json:"tid"`
	Name *string `json:"name"`
	ThreadFacts
	Frames          []Frame `json:"frames"`
	FramesOmitted   int     `json:"frames_omitted,omitempty"`
	FramesOmittedAt int     `json:"frames_omitted_at,omitempty"`
	Partial         bool    `json:"partial,omitempty"`
	// Unsettled (--no-block): the times the stack was read, each time
	// changing while it was; its frames are not given.
	Unsettled int `json:"unsettled,omitempty"`
	// Error says why the thread's frames, or some of them, were not read.
	Error  string         `json:"error,omitempty"`
	Native *[]NativeFrame `json:"native,omitempty"`
	// Stack (--native) is the thread's one stack, innermost first: its
	// C frames with each eval loop frame replaced by the Python frames
	// it runs. Absent when they cannot be matched: StackUnmerged says
	// why, and Frames and Native are the two lists.
	Stack         *[]StackFrame `json:"stack,omitempty"`
	StackUnmerged string        `json:"stack_unmerged,omitempty"`
	// Exception is the one the thread is handling (null: none).
	Exception *Exception `json:"exception"`
	// Task (--tasks) is the asyncio task the thread runs now.
	Task *TaskRef `json:"task,omitempty"`
}

// StackFrame is one frame of a merged stack: Kind "python" (PC null)
// or "native" (File and Line null where no line table was read,
// Function null where no symbol table names it).
type StackFrame struct {
	Kind     string  `json:"kind"`
	Function *string `json:"function"`
	File     *string `json:"file"`
	Line     *int    `json:"line"`
	PC       *uint64 `json:"pc"`
}

// Exception is the exception a thread handles (in an except block):
// its type's name, str() of its first argument (else that argument's
// repr), and its traceback's frames, innermost (where it was raised)
// first.
type Exception struct {
	Type    string          `json:"type"`
	Message *string         `json:"message"`
	Frames  []ExceptionLine `json:"frames"`
}

// ExceptionLine is one entry of an exception's traceback.
type ExceptionLine struct {
	File     string `json:"file"`
	Line     *int   `json:"line"`
	Function string `json:"function"`
}

// line is the text output's line for the exception, under the thread's
// header: Handling TYPE: MESSAGE (raised at FILE:LINE in FUNCTION).
func (e *Exception) line() string {
	var b strings.Builder
	b.WriteString("  Handling " + safetext.Escape(e.Type))
	if e.Message != nil && *e.Message != "" {
		b.WriteString(": " + safetext.Escape(*e.Message))
	}
	if len(e.Frames) > 0 {
		f := e.Frames[0]
		line := "?"
		if f.Line != nil {
			line = strconv.Itoa(*f.Line)
		}
		fmt.Fprintf(&b, " (raised at %s:%s in %s)", safetext.Escape(f.File), line, safetext.Escape(f.Function))
	}
	return b.String() + "\n"
}

// ThreadFacts is who a thread is and what it does, as the walker reads
// them (pyattach_walk_threads): OSName the kernel's name of the thread
// (Name is threading's when known, else this), Interpreter the id of its
// interpreter, HoldsGIL whether it holds the GIL (null: a free-threaded
// build, or unknown), State one of running, idle, waiting-for-gil, gc
// (null: unknown; a core's come from its threads' registers, see
// Target.syscalls).
type ThreadFacts struct {
	OSName       *string `json:"os_name"`
	Interpreter  *int64  `json:"interpreter"`
	HoldsGIL     *bool   `json:"holds_gil"`
	State        *string `json:"state"`
	FreeThreaded bool    `json:"-"`
}

// header is a thread's header line in the text output, as the walker's
// thread_header writes it in py-threads:
// Thread TID "NAME" (os name "OS"), interpreter N, [Has the GIL], STATE:
func (f ThreadFacts) header(tid int, name *string) string {
	var b strings.Builder
	b.WriteString("Thread " + strconv.Itoa(tid))
	if name != nil {
		b.WriteString(` "` + safetext.Escape(*name) + `"`)
	}
	if f.OSName != nil && (name == nil || *f.OSName != *name) {
		b.WriteString(` (os name "` + safetext.Escape(*f.OSName) + `")`)
	}
	if f.Interpreter != nil {
		fmt.Fprintf(&b, ", interpreter %d", *f.Interpreter)
	}
	switch {
	case f.FreeThreaded:
		b.WriteString(", [no GIL (free-threaded)]")
	case f.HoldsGIL != nil && *f.HoldsGIL:
		b.WriteString(", [Has the GIL]")
	}
	if f.State != nil {
		b.WriteString(", " + safetext.Escape(*f.State))
	} else if f.Interpreter != nil {
		b.WriteString(", state unknown")
	}
	return b.String()
}

// Frame is a Python frame.
type Frame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     *int   `json:"line"`
	// Interpreter is the id of the interpreter the frame runs in: a
	// thread that called into a subinterpreter runs frames of several.
	Interpreter *int64 `json:"interpreter,omitempty"`
	// Locals (--locals) are the frame's local variables and their reprs.
	Locals Locals `json:"locals,omitempty"`
}

// Locals are a frame's local variables in the code object's order, as
// the walker writes them ([[name, repr], ...]); in JSON an object of
// name -> repr, in that order.
type Locals [][2]string

// MarshalJSON writes the locals as one object, in their order.
func (l Locals) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, kv := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(kv[0])
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(kv[1])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// NativeFrame is one of gdb's own frames (--native).
type NativeFrame struct {
	Function *string `json:"function"`
	File     *string `json:"file"`
	Line     *int    `json:"line"`
	PC       uint64  `json:"pc"`
}

// Walker is what pyattach_gdb.dump writes.
type Walker struct {
	Error     string `json:"error"`
	Truncated string `json:"truncated"`
	// Cost is what the walk spent of its budget.
	Cost struct {
		Reads   int     `json:"reads"`
		Bytes   int     `json:"bytes"`
		Seconds float64 `json:"seconds"`
		// Stops and Pages: the direct reader's stops of the process and
		// the pages it copied while it was stopped.
		Stops int `json:"stops"`
		Pages int `json:"pages"`
		// Walks is how many times the stacks were walked (direct);
		// CopySeconds the time spent copying pages while the process was
		// stopped.
		Walks       int     `json:"walks"`
		CopySeconds float64 `json:"copy_seconds"`
		// Reused is how many threads' stacks the walk of the copy took
		// from the first walk, nothing they were read from having
		// changed.
		Reused int `json:"reused"`
	} `json:"cost"`
	Threads []WalkerThread `json:"threads"`
	// The asyncio tasks (dump with tasks), and the walker's text of them.
	Tasks      *[]Task    `json:"tasks"`
	TasksTotal int        `json:"tasks_total"`
	TaskCycles [][]uint64 `json:"task_cycles"`
	TasksError string     `json:"tasks_error"`
	TasksText  string     `json:"tasks_text"`
	// TasksUnsettled (--no-block): the times the tasks were read, each
	// time changing while they were; none is given.
	TasksUnsettled int `json:"tasks_unsettled"`
}

// WalkerThread is a thread as the walker writes it.
type WalkerThread struct {
	TID             int             `json:"tid"`
	Name            *string         `json:"name"`
	OSName          *string         `json:"os_name"`
	Interpreter     *int64          `json:"interpreter"`
	HoldsGIL        *bool           `json:"holds_gil"`
	State           *string         `json:"state"`
	FreeThreaded    bool            `json:"free_threaded"`
	Error           string          `json:"error"`
	FramesOmitted   int             `json:"frames_omitted"`
	FramesOmittedAt int             `json:"frames_omitted_at"`
	Partial         bool            `json:"partial"`
	Unsettled       int             `json:"unsettled"`
	Frames          []WalkerFrame   `json:"frames"`
	Native          *[]WalkerNative `json:"native"`
	Stack           *[]StackRef     `json:"stack"`
	StackUnmerged   *string         `json:"stack_unmerged"`
	Exception       *Exception      `json:"exception"`
	Task            *TaskRef        `json:"task"`
}

// WalkerNative is a C frame as gdb unwinds it; BlockPC is an address
// inside its function (a caller's return address minus one).
type WalkerNative struct {
	NativeFrame
	BlockPC uint64 `json:"block_pc"`
}

// StackRef is a frame of the walker's merged stack (merge_stack):
// Frames[Index] for Kind "python", Native[Index] for "native".
type StackRef struct {
	Kind  string `json:"kind"`
	Index int    `json:"index"`
}

// WalkerFrame is a Python frame with its source line, when read.
type WalkerFrame struct {
	Frame
	Source *string `json:"source"`
	// Repeat is how many copies of this frame follow it: the walker
	// writes a run of equal frames (a deep recursion) once. ParseWalker
	// puts the copies back.
	Repeat int `json:"repeat"`
}

// maxWalkerFrames bounds the frames ParseWalker expands runs into.
const maxWalkerFrames = 1 << 24

// ParseWalker reads the walker's JSON.
func ParseWalker(data []byte) (*Walker, error) {
	var wd Walker
	if err := json.Unmarshal(data, &wd); err != nil {
		return nil, fmt.Errorf("dump: pyattach's walker wrote bad JSON: %w", err)
	}
	total := 0
	for i := range wd.Threads {
		th := &wd.Threads[i]
		n, runs := 0, false
		for _, f := range th.Frames {
			if f.Repeat < 0 || f.Repeat > maxWalkerFrames {
				return nil, fmt.Errorf("dump: pyattach's walker wrote bad JSON: a frame repeated %d times", f.Repeat)
			}
			n += 1 + f.Repeat
			runs = runs || f.Repeat > 0
		}
		if total += n; total > maxWalkerFrames {
			return nil, fmt.Errorf("dump: pyattach's walker wrote bad JSON: over %d frames", maxWalkerFrames)
		}
		if !runs {
			continue
		}
		frames := make([]WalkerFrame, 0, n)
		for _, f := range th.Frames {
			k := f.Repeat
			f.Repeat = 0
			for range k + 1 {
				frames = append(frames, f)
			}
		}
		th.Frames = frames
	}
	return &wd, nil
}

// Header is what the first line of the text output names.
type Header struct {
	// PID is the process's, or Core the core file's (CorePID: the
	// process it was written from).
	PID     int
	Core    string
	CorePID int
	Version string
	// Cmdline (dump --subprocesses, escaped here) names the process
	// in the first line, and Parent, when it is not the target itself,
	// its parent: "Process PID (child of PARENT): CMDLINE", the
	// interpreter on the next line.
	Cmdline string
	Parent  int
}

// Render turns the walker's dump into the JSON value and the text
// output, and returns one warning per thread the walker could not read.
// native asks for a native list on every thread (empty when gdb gave
// none). Every string the target controls is escaped in the text
// (safetext.Escape); the JSON keeps them as they are.
func Render(h Header, wd *Walker, native bool) (Output, string, []string) {
	res := Output{PID: h.PID, Core: h.Core, Python: Python{Version: h.Version}, Threads: []Thread{}, Truncated: wd.Truncated}
	var text strings.Builder
	// The text's size, near enough: a deep stack's text is built without
	// copying it again and again as it grows.
	size := 256
	for _, th := range wd.Threads {
		size += 128
		for _, f := range th.Frames {
			size += 32 + len(f.File) + len(f.Function)
			if f.Source != nil {
				size += 5 + len(*f.Source)
			}
		}
	}
	text.Grow(size)
	switch {
	case h.Cmdline != "" && h.Parent != 0:
		fmt.Fprintf(&text, "Process %d (child of %d): %s\nPython %s, %d threads\n", h.PID, h.Parent, safetext.Escape(h.Cmdline), h.Version, len(wd.Threads))
	case h.Cmdline != "":
		fmt.Fprintf(&text, "Process %d: %s\nPython %s, %d threads\n", h.PID, safetext.Escape(h.Cmdline), h.Version, len(wd.Threads))
	case h.Core == "":
		fmt.Fprintf(&text, "Process %d: Python %s, %d threads\n", h.PID, h.Version, len(wd.Threads))
	default:
		fmt.Fprintf(&text, "Core %s (process %d): Python %s, %d threads\n", h.Core, h.CorePID, h.Version, len(wd.Threads))
	}
	var warnings []string
	for _, th := range wd.Threads {
		facts := ThreadFacts{OSName: th.OSName, Interpreter: th.Interpreter, HoldsGIL: th.HoldsGIL, State: th.State, FreeThreaded: th.FreeThreaded}
		dt := Thread{TID: th.TID, Name: th.Name, ThreadFacts: facts, Frames: make([]Frame, 0, len(th.Frames)),
			FramesOmitted: th.FramesOmitted, FramesOmittedAt: th.FramesOmittedAt, Partial: th.Partial, Unsettled: th.Unsettled, Error: th.Error, Exception: th.Exception}
		if th.Native != nil {
			ns := make([]NativeFrame, len(*th.Native))
			for i, n := range *th.Native {
				ns[i] = n.NativeFrame
			}
			dt.Native = &ns
		}
		if native && dt.Native == nil {
			dt.Native = &[]NativeFrame{}
		}
		stack, unmerged := mergedStack(th)
		if native {
			dt.Stack, dt.StackUnmerged = stack, unmerged
		}
		if th.Error != "" {
			warnings = append(warnings, fmt.Sprintf("thread %d: %s", th.TID, safetext.Escape(th.Error)))
		}
		dt.Task = th.Task
		text.WriteString("\n" + facts.header(th.TID, th.Name) + ":\n")
		if th.Task != nil {
			name := "?"
			if th.Task.Name != nil {
				name = *th.Task.Name
			}
			fmt.Fprintf(&text, "  Running asyncio task %s (%#x)\n", safetext.Escape(name), th.Task.ID)
		}
		if th.Exception != nil {
			text.WriteString(th.Exception.line())
		}
		for _, f := range th.Frames {
			dt.Frames = append(dt.Frames, f.Frame)
		}
		labelled := manyInterpreters(th.Frames)
		if native && stack != nil {
			// One stack: C frames and, where an eval loop frame stood,
			// the Python frames it runs.
			text.WriteString("Stack (most recent call first):\n")
			last := -1
			var fw frameWriter
			for _, r := range *th.Stack {
				if r.Kind == "python" {
					f := th.Frames[r.Index]
					if labelled && (last < 0 || !sameInterpreter(f.Interpreter, th.Frames[last].Interpreter)) {
						text.WriteString(interpreterLine(f.Interpreter))
					}
					last = r.Index
					fw.write(&text, f)
				} else {
					writeNative(&text, "  (C) ", (*th.Native)[r.Index].NativeFrame)
				}
			}
			res.Threads = append(res.Threads, dt)
			continue
		}
		if th.Unsettled > 0 {
			fmt.Fprintf(&text, "  ... stack not shown: it changed while it was read, %d times (the process was not stopped) ...\n", th.Unsettled)
			res.Threads = append(res.Threads, dt)
			continue
		}
		if len(th.Frames) == 0 && !th.Partial {
			text.WriteString("Unable to locate python frame\n")
		} else {
			text.WriteString("Traceback (most recent call first):\n")
		}
		var fw frameWriter
		for i, f := range th.Frames {
			if th.FramesOmitted > 0 && i == th.FramesOmittedAt {
				text.WriteString(OmittedLine(th.FramesOmitted))
			}
			if labelled && (i == 0 || !sameInterpreter(f.Interpreter, th.Frames[i-1].Interpreter)) {
				text.WriteString(interpreterLine(f.Interpreter))
			}
			fw.write(&text, f)
		}
		if th.FramesOmitted > 0 && th.FramesOmittedAt >= len(th.Frames) {
			text.WriteString(OmittedLine(th.FramesOmitted))
		}
		if th.Partial && th.Error != "" {
			text.WriteString("  ... stack not read further: " + safetext.Escape(th.Error) + " ...\n")
		} else if th.Partial {
			text.WriteString("  ... stack not read further: the walk stopped ...\n")
		}
		if native && unmerged != "" {
			text.WriteString("Python and native frames not merged: " + safetext.Escape(unmerged) + "\n")
		}
		if th.Native != nil && native {
			text.WriteString("Native stack (most recent call first):\n")
			for i, n := range *dt.Native {
				writeNative(&text, fmt.Sprintf("  #%-2d ", i), n)
			}
		}
		res.Threads = append(res.Threads, dt)
	}
	return res, text.String(), warnings
}

// manyInterpreters reports whether frames run in more than one
// interpreter (a thread that called into a subinterpreter): their text
// is then labelled by interpreter, as the walker's format_frames does.
func manyInterpreters(frames []WalkerFrame) bool {
	for _, f := range frames[min(1, len(frames)):] {
		if !sameInterpreter(f.Interpreter, frames[0].Interpreter) {
			return true
		}
	}
	return false
}

func sameInterpreter(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// interpreterLine heads the frames a thread runs in one interpreter, as
// the walker's interpreter_line writes it.
func interpreterLine(id *int64) string {
	if id == nil {
		return "  In interpreter ?:\n"
	}
	return fmt.Sprintf("  In interpreter %d:\n", *id)
}

// frameWriter writes Python frames (writeFrame), the text of a frame
// equal to the one before it (a deep recursion) written again, not
// formatted again.
type frameWriter struct {
	last WalkerFrame
	text string
	ok   bool
}

func (w *frameWriter) write(text *strings.Builder, f WalkerFrame) {
	if !w.ok || !sameFrame(f, w.last) {
		var b strings.Builder
		writeFrame(&b, f)
		w.last, w.text, w.ok = f, b.String(), true
	}
	text.WriteString(w.text)
}

// sameFrame reports whether a and b are written alike: the same file,
// function, line and source line, and no locals.
func sameFrame(a, b WalkerFrame) bool {
	return a.File == b.File && a.Function == b.Function && len(a.Locals) == 0 && len(b.Locals) == 0 &&
		sameInt(a.Line, b.Line) && sameString(a.Source, b.Source)
}

func sameInt(a, b *int) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func sameString(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// writeFrame writes a Python frame: its File line, source line and
// locals.
func writeFrame(text *strings.Builder, f WalkerFrame) {
	line := "?"
	if f.Line != nil {
		line = strconv.Itoa(*f.Line)
	}
	fmt.Fprintf(text, "  File \"%s\", line %s, in %s\n", safetext.Escape(f.File), line, safetext.Escape(f.Function))
	if f.Source != nil && *f.Source != "" {
		text.WriteString("    " + safetext.Escape(*f.Source) + "\n")
	}
	// A repr is written escaped by the walker (repr() writes
	// backslashes as escapes): escaped again only if it is not.
	for _, kv := range f.Locals {
		fmt.Fprintf(text, "      %s = %s\n", safetext.Escape(kv[0]), safetext.EscapeControls(kv[1]))
	}
}

// writeNative writes a C frame after lead: pc, function, file:line.
func writeNative(text *strings.Builder, lead string, n NativeFrame) {
	fn := "??"
	if n.Function != nil {
		fn = safetext.Escape(*n.Function)
	}
	fmt.Fprintf(text, "%s0x%016x in %s ()", lead, n.PC, fn)
	if n.File != nil {
		fmt.Fprintf(text, " at %s", safetext.Escape(*n.File))
		if n.Line != nil {
			fmt.Fprintf(text, ":%d", *n.Line)
		}
	}
	text.WriteString("\n")
}

// mergedStack is the thread's merged stack (the walker's stack, its
// references resolved), or nil and why it is not merged ("" when the
// walker says nothing: no C frames were asked for). A reference out of
// range leaves it unmerged.
func mergedStack(th WalkerThread) (*[]StackFrame, string) {
	if th.Stack == nil || th.Native == nil {
		if th.StackUnmerged != nil {
			return nil, *th.StackUnmerged
		}
		return nil, ""
	}
	out := []StackFrame{}
	for _, r := range *th.Stack {
		switch {
		case r.Kind == "python" && r.Index >= 0 && r.Index < len(th.Frames):
			f := th.Frames[r.Index]
			fn, file := f.Function, f.File
			out = append(out, StackFrame{Kind: "python", Function: &fn, File: &file, Line: f.Line})
		case r.Kind == "native" && r.Index >= 0 && r.Index < len(*th.Native):
			n := (*th.Native)[r.Index]
			pc := n.PC
			out = append(out, StackFrame{Kind: "native", Function: n.Function, File: n.File, Line: n.Line, PC: &pc})
		default:
			return nil, "the walker's merged stack names a frame it does not have"
		}
	}
	return &out, ""
}

// OmittedLine is the line that stands for n frames not shown, as the
// walker's omitted_line writes it in py-bt.
func OmittedLine(n int) string {
	word := "frames"
	if n == 1 {
		word = "frame"
	}
	return fmt.Sprintf("  ... %s %s not shown ...\n", Thousands(n), word)
}

// Thousands is n with commas between groups of three digits.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// renderTasks adds the asyncio tasks the walker read to res and their
// text (the walker's tree, escaped there) after the threads' text.
func renderTasks(res *Output, wd *Walker, text string) string {
	tasks := []Task{}
	if wd.Tasks != nil {
		tasks = *wd.Tasks
	}
	for i := range tasks {
		if tasks[i].Frames == nil {
			tasks[i].Frames = []TaskFrame{}
		}
		if tasks[i].AwaitedBy == nil {
			tasks[i].AwaitedBy = []uint64{}
		}
	}
	cycles := wd.TaskCycles
	if cycles == nil {
		cycles = [][]uint64{}
	}
	total := wd.TasksTotal
	res.Tasks, res.TasksTotal, res.TaskCycles, res.TasksError = &tasks, &total, &cycles, wd.TasksError
	if wd.TasksUnsettled > 0 {
		res.TasksError = fmt.Sprintf("the tasks changed while they were read, %d times (the process was not stopped)", wd.TasksUnsettled)
		return text + "\nasyncio tasks: not shown: " + res.TasksError + "\n"
	}
	return text + "\nasyncio tasks:\n" + wd.TasksText
}
