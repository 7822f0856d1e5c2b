package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/proc"
)

// CompletionCmd is `pyattach completion bash|zsh|fish`.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell to print the completion script for: bash, zsh or fish."`
}

// Run prints the script.
func (c *CompletionCmd) Run(app *App) error {
	s, ok := completionScripts[c.Shell]
	if !ok {
		return fmt.Errorf("completion: no script for shell %q", c.Shell)
	}
	_, err := io.WriteString(app.Stdout, s)
	return err
}

// CompleteCmd is the hidden `pyattach __complete -- WORD...` that the
// completion scripts run: WORDs are the command line after "pyattach" up
// to and including the word being completed. It prints "files" or
// "none" on the first line (whether the shell should also offer file
// names), then one candidate a line, "VALUE" or "VALUE<TAB>DESCRIPTION".
type CompleteCmd struct {
	Words []string `arg:"" optional:"" help:"The words after pyattach, the last one being completed."`
}

// Run prints the candidates. It never fails: a completion has nothing
// useful to say about an error.
func (c *CompleteCmd) Run(g *Globals, app *App, kctx *kong.Context) error {
	words := c.Words
	if len(words) == 0 {
		words = []string{""}
	}
	pids := func() []candidate {
		if proc.CheckPlatform(g.GOOS, 0) != nil {
			return nil // no /proc: PIDs are refused here
		}
		return pythonPIDs(proc.New(g.ProcRoot))
	}
	res := complete(kctx.Model.Node, words, pids)
	var b strings.Builder
	if res.files {
		b.WriteString("files\n")
	} else {
		b.WriteString("none\n")
	}
	for _, c := range res.cands {
		b.WriteString(safetext.Fold(c.value))
		if c.desc != "" {
			b.WriteString("\t" + safetext.Fold(c.desc))
		}
		b.WriteByte('\n')
	}
	io.WriteString(app.Stdout, b.String())
	return nil
}

type candidate struct{ value, desc string }

type completion struct {
	cands []candidate
	files bool // the shell should also offer file names
}

// pythonPIDs lists the running Python processes as candidates: the PID,
// described by its command line.
func pythonPIDs(pr *proc.Proc) []candidate {
	ps, err := target.PythonProcesses(pr)
	if err != nil {
		return nil
	}
	out := make([]candidate, 0, len(ps))
	for _, p := range ps {
		d := p.Cmdline
		if d == "" {
			d = p.Comm
		}
		d = safetext.Escape(d) // the process chose it
		if r := []rune(d); len(r) > 72 {
			d = string(r[:71]) + "…"
		}
		out = append(out, candidate{strconv.Itoa(p.PID), d})
	}
	return out
}

// debuggerPIDFlags are the flags of gdb and lldb that take a PID.
var debuggerPIDFlags = map[string][]string{
	"gdb":  {"-p", "--pid", "-pid"},
	"lldb": {"-p", "--attach-pid"},
}

// complete finds the candidates for the last of words, the command line
// after "pyattach", walking the kong model as kong would parse it.
func complete(root *kong.Node, words []string, pids func() []candidate) completion {
	cur := words[len(words)-1]
	node := root
	npos := 0             // positional arguments seen at node
	var expect *kong.Flag // a flag waiting for its value
	endOfFlags := false
	var dbg []string // the debugger's words, after gdb or lldb
	inDebugger := false
	for _, w := range words[:len(words)-1] {
		switch {
		case inDebugger:
			dbg = append(dbg, w)
		case expect != nil:
			expect = nil
		case !endOfFlags && w == "--":
			endOfFlags = true
		case !endOfFlags && strings.HasPrefix(w, "--"):
			name, _, hasValue := strings.Cut(w[2:], "=")
			if f := findFlag(node, func(f *kong.Flag) bool { return f.Name == name || slices.Contains(f.Aliases, name) }); f != nil && takesValue(f) && !hasValue {
				expect = f
			}
		case !endOfFlags && len(w) > 1 && w[0] == '-':
			// A cluster of short flags; one taking a value ends it.
			for i, r := range w[1:] {
				f := findFlag(node, func(f *kong.Flag) bool { return f.Short == r })
				if f != nil && takesValue(f) {
					if i+len(string(r)) == len(w)-1 {
						expect = f
					}
					break
				}
			}
		default:
			if npos == 0 {
				if child := findChild(node, w); child != nil {
					node, endOfFlags = child, false
					inDebugger = child.Passthrough
					continue
				}
			}
			npos++
		}
	}
	switch {
	case inDebugger:
		return completeDebugger(node.Name, dbg, cur, pids)
	case expect != nil:
		return completeValue(expect.Value, cur, pids)
	case !endOfFlags && strings.HasPrefix(cur, "--") && strings.Contains(cur, "="):
		// --flag=VALUE: the value's candidates, behind "--flag=".
		name, val, _ := strings.Cut(cur[2:], "=")
		f := findFlag(node, func(f *kong.Flag) bool { return f.Name == name || slices.Contains(f.Aliases, name) })
		if f == nil || !takesValue(f) {
			return completion{}
		}
		res := completeValue(f.Value, val, pids)
		for i := range res.cands {
			res.cands[i].value = "--" + name + "=" + res.cands[i].value
		}
		return res
	case !endOfFlags && strings.HasPrefix(cur, "-"):
		var res completion
		for _, group := range node.AllFlags(true) {
			for _, f := range group {
				res.add("--"+f.Name, f.Help, cur)
			}
		}
		return res
	}
	if npos == 0 && hasVisibleChildren(node) {
		var res completion
		for _, c := range node.Children {
			if !c.Hidden {
				res.add(c.Name, c.Help, cur)
			}
		}
		return res
	}
	if arg := positional(node, npos); arg != nil {
		return completeValue(arg, cur, pids)
	}
	return completion{}
}

// completeDebugger completes a gdb or lldb command line: PIDs after the
// flags that take one, else file names (a program, a core).
func completeDebugger(debugger string, args []string, cur string, pids func() []candidate) completion {
	flags := debuggerPIDFlags[debugger]
	if len(args) > 0 && slices.Contains(flags, args[len(args)-1]) {
		return completePIDs("", cur, pids)
	}
	for _, f := range flags {
		if strings.HasPrefix(f, "--") && strings.HasPrefix(cur, f+"=") {
			return completePIDs(f+"=", cur, pids)
		}
	}
	return completion{files: !strings.HasPrefix(cur, "-")}
}

func completePIDs(prefix, cur string, pids func() []candidate) completion {
	var res completion
	for _, c := range pids() {
		res.add(prefix+c.value, c.desc, cur)
	}
	return res
}

// completeValue completes a flag's value or a positional argument: the
// choices of an enum; help's topics; for a target, the Python processes
// and file names; else file names.
func completeValue(v *kong.Value, cur string, pids func() []candidate) completion {
	if v.Enum != "" {
		var res completion
		for _, e := range v.EnumSlice() {
			res.add(e, "", cur)
		}
		return res
	}
	if v.IsBool() || v.IsCounter() {
		return completion{}
	}
	if v.Name == "topic" { // pyattach help TOPIC
		var res completion
		for _, t := range helpTopics {
			res.add(t, helpSummary(t), cur)
		}
		return res
	}
	if v.Name == "target" {
		res := completePIDs("", cur, pids)
		res.files = true
		return res
	}
	return completion{files: true}
}

func (r *completion) add(value, desc, cur string) {
	if strings.HasPrefix(value, cur) {
		r.cands = append(r.cands, candidate{value, desc})
	}
}

func takesValue(f *kong.Flag) bool { return !f.IsBool() && !f.IsCounter() }

// findFlag finds a flag of node or of a command above it.
func findFlag(node *kong.Node, match func(*kong.Flag) bool) *kong.Flag {
	for n := node; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if match(f) {
				return f
			}
		}
	}
	return nil
}

func findChild(node *kong.Node, name string) *kong.Node {
	for _, c := range node.Children {
		if c.Type == kong.CommandNode && (c.Name == name || slices.Contains(c.Aliases, name)) {
			return c
		}
	}
	return nil
}

func hasVisibleChildren(node *kong.Node) bool {
	for _, c := range node.Children {
		if !c.Hidden {
			return true
		}
	}
	return false
}

// positional is node's i-th positional argument; a slice argument takes
// all the words from its place on.
func positional(node *kong.Node, i int) *kong.Value {
	for j, p := range node.Positional {
		if j == i || j < i && p.IsSlice() {
			return p
		}
	}
	return nil
}
