package dump

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/proc"
)

// TreeProcess is one process of dump --subprocesses.
type TreeProcess struct {
	PID int
	// Parent is the process's parent when the tree was listed; 0 for
	// the target itself.
	Parent int
	// PPID is its parent as its stat says when it is read.
	PPID    int
	Comm    string
	Cmdline []string
}

// Shown is the process's command line as a shell would take it, or its
// command name in brackets when it has none (as ps shows a zombie).
// It is the target's text: escape it before printing.
func (p *TreeProcess) Shown() string {
	if len(p.Cmdline) == 0 {
		return "[" + p.Comm + "]"
	}
	return shquote.Join(p.Cmdline)
}

// TreeOutput is one process's object in the JSON array dump
// --subprocesses --json prints: Output with the process's parent and
// command line.
type TreeOutput struct {
	Output
	PPID    int      `json:"ppid"`
	Cmdline []string `json:"cmdline"`
}

// RunTree dumps the process opts.Target (a PID) and every Python
// process below it, in tree order (proc.Tree: depth first, children by
// PID), one after the other: each is stopped, read and resumed before
// the next. The text output gives each its own header (Header.Cmdline);
// --json prints one JSON array of TreeOutput.
//
// Processes that are not Python are skipped silently; one that exited
// after the tree was listed (gone, a zombie, or its PID taken by
// another) is said in one line on Stderr; one that could not be read is
// a warning there. The error is the target's own when it is Python and
// could not be read, else an error when no process at all could be
// dumped (the first failure wrapped, or a *Error of KindNotPython when
// none runs Python), else ErrPartial when a walk stopped at its budget.
func RunTree(ctx context.Context, opts Options, svc *Services) error {
	if !target.IsPID(opts.Target) {
		return &Error{Kind: KindTarget, Err: fmt.Errorf("dump --subprocesses: %q is not a PID: only a live process has processes below it", opts.Target)}
	}
	pid, err := target.ParsePID(opts.Target)
	if err != nil {
		return &Error{Kind: KindTarget, Err: fmt.Errorf("dump: %w", err)}
	}
	if proc.CheckPlatform(svc.GOOS, pid) != nil {
		// Run says why a PID cannot be read here.
		return Run(ctx, opts, svc)
	}
	pr := proc.New(svc.ProcRoot)
	top, err := pr.StatInfo(pid)
	if err != nil {
		return fmt.Errorf("dump %d: %w", pid, err)
	}
	below, err := pr.Tree(pid)
	if err != nil {
		return fmt.Errorf("dump %d: %w", pid, err)
	}
	if opts.Verbose {
		fmt.Fprintf(svc.Stderr, "pyattach: %d processes below process %d; dumping the Python ones one after the other\n", len(below), pid)
	}
	var (
		items            [][]byte // --json: each process's object
		dumped, failed   int
		partial          bool
		topErr, firstErr error
	)
	for i, d := range append([]proc.Descendant{{PID: pid, Start: top.Start}}, below...) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i > 0 && exited(pr, d) {
			fmt.Fprintf(svc.Stderr, "pyattach: process %d exited before it was read\n", d.PID)
			continue
		}
		tp := &TreeProcess{PID: d.PID, Parent: d.PPID}
		if st, err := pr.StatInfo(d.PID); err == nil {
			tp.PPID, tp.Comm = st.PPID, st.Comm
		}
		tp.Cmdline, _ = pr.Cmdline(d.PID)
		r := runOne(ctx, opts, svc, tp)
		err := r.err
		switch {
		case errors.Is(err, target.ErrNotPython):
			continue
		case err != nil && !errors.Is(err, ErrPartial) && ctx.Err() != nil:
			return ctx.Err()
		case err != nil && !errors.Is(err, ErrPartial) && i > 0 && exited(pr, d):
			fmt.Fprintf(svc.Stderr, "pyattach: process %d exited before it was read\n", d.PID)
			continue
		}
		svc.Stderr.Write(r.stderr)
		if err != nil && !errors.Is(err, ErrPartial) {
			failed++
			if i == 0 {
				topErr = err
				continue
			}
			if firstErr == nil {
				firstErr = err
			}
			why := err.Error()
			if e := (*Error)(nil); errors.As(err, &e) && e.Tracer != "" {
				why += " (it is traced already, by " + e.Tracer + ")"
			}
			fmt.Fprintf(svc.Stderr, "pyattach: warning: process %d not read: %s\n", d.PID, why)
			continue
		}
		partial = partial || errors.Is(err, ErrPartial)
		if opts.JSON {
			items = append(items, r.json)
		} else {
			if dumped > 0 {
				io.WriteString(svc.Stdout, "\n")
			}
			svc.Stdout.Write(r.text)
		}
		dumped++
	}
	if opts.JSON && dumped > 0 {
		if err := writeArray(svc.Stdout, items); err != nil {
			return err
		}
	}
	switch {
	case topErr != nil:
		return topErr
	case dumped == 0 && firstErr != nil:
		return fmt.Errorf("dump --subprocesses %d: no Python process could be read (%d tried); the first: %w", pid, failed, firstErr)
	case dumped == 0 && len(below) == 0:
		return &Error{Kind: KindNotPython, PID: pid, Err: fmt.Errorf("dump --subprocesses %d: process %d (%s) is not Python and has no child process",
			pid, pid, safetext.Escape(top.Comm))}
	case dumped == 0:
		return &Error{Kind: KindNotPython, PID: pid, Err: fmt.Errorf("dump --subprocesses %d: neither process %d (%s) nor any of the %d processes below it runs Python",
			pid, pid, safetext.Escape(top.Comm), len(below))}
	}
	if partial {
		return ErrPartial
	}
	return nil
}

// exited reports whether the process listed as d has exited since:
// gone, a zombie, or another process with its PID (another start time).
func exited(pr *proc.Proc, d proc.Descendant) bool {
	st, err := pr.StatInfo(d.PID)
	return errors.Is(err, proc.ErrNoProcess) || err == nil && (st.State == "Z" || d.Start == 0 || st.Start != d.Start)
}

// treeRun is what one process's dump printed: its text or its JSON
// object, what it wrote on stderr (each "pyattach: " line naming the
// process), and its error.
type treeRun struct {
	text, json, stderr []byte
	err                error
}

// runOne dumps the one process tp with Run, its output kept.
func runOne(ctx context.Context, opts Options, svc *Services, tp *TreeProcess) treeRun {
	o := opts
	o.Target = strconv.Itoa(tp.PID)
	s := *svc
	var out, stderr bytes.Buffer
	var res *Output
	s.Stdout, s.Stderr, s.Process = &out, &stderr, tp
	s.WriteJSON = func(_ io.Writer, v any) error {
		switch r := v.(type) {
		case Output:
			res = &r
		case *Output:
			res = r
		default:
			return fmt.Errorf("dump: %T is not a dump's output", v)
		}
		return nil
	}
	r := treeRun{err: Run(ctx, o, &s)}
	if (r.err == nil || errors.Is(r.err, ErrPartial)) && res != nil {
		var b bytes.Buffer
		args := tp.Cmdline
		if args == nil {
			args = []string{}
		}
		if err := svc.WriteJSON(&b, TreeOutput{Output: *res, PPID: tp.PPID, Cmdline: args}); err != nil {
			r.err = fmt.Errorf("dump %d: %w", tp.PID, err)
		}
		r.json = b.Bytes()
	}
	r.text = out.Bytes()
	r.stderr = nameLines(stderr.Bytes(), tp.PID)
	return r
}

// nameLines puts "process PID: " after the "pyattach: " that starts a
// line of b.
func nameLines(b []byte, pid int) []byte {
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(l, []byte("pyattach: ")); ok {
			fmt.Fprintf(&out, "pyattach: process %d: ", pid)
			l = rest
		}
		out.Write(l)
	}
	return out.Bytes()
}

// writeArray writes the JSON objects items (each as Services.WriteJSON
// wrote it) as one indented JSON array.
func writeArray(w io.Writer, items [][]byte) error {
	raw := append([]byte("["), bytes.Join(items, []byte(","))...)
	raw = append(raw, ']')
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
