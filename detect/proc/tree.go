package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// Descendant is a process below another one, as Tree lists it.
type Descendant struct {
	PID  int
	PPID int // its parent when it was listed
	// Depth is 1 for a child, 2 for a grandchild, and so on.
	Depth int
	// Start is the process's start time (field 22 of PID/stat, in clock
	// ticks after boot) when it was listed: a process read later with
	// another start time is another process that took the PID. 0: the
	// process had exited already (it was named by its parent's
	// children file, but its own files were gone).
	Start uint64
}

// StatInfo is what Tree and its callers read of PID/stat.
type StatInfo struct {
	PPID  int
	State string // one letter: "R", "S", "D", "Z" (a zombie: it has exited), ...
	Comm  string
	Start uint64 // field 22, starttime
}

// ParseStatInfo parses the text of PID/stat.
func ParseStatInfo(b []byte) (StatInfo, error) {
	comm, rest, err := StatFields(b)
	if err != nil {
		return StatInfo{}, err
	}
	// rest[0] is field 3 (state), rest[1] field 4 (ppid), rest[19]
	// field 22 (starttime).
	if len(rest) < 20 {
		return StatInfo{}, fmt.Errorf("%d fields after the command name, want 20 or more", len(rest))
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil {
		return StatInfo{}, fmt.Errorf("bad ppid %s", quote(rest[1]))
	}
	start, err := strconv.ParseUint(rest[19], 10, 64)
	if err != nil {
		return StatInfo{}, fmt.Errorf("bad starttime %s", quote(rest[19]))
	}
	return StatInfo{PPID: ppid, State: rest[0], Comm: comm, Start: start}, nil
}

// StatInfo reads PID/stat of process pid. A process that does not exist
// (any more) gives ErrNoProcess.
func (p *Proc) StatInfo(pid int) (StatInfo, error) {
	b, err := p.readFile(pid, "stat")
	if err != nil {
		return StatInfo{}, err
	}
	st, err := ParseStatInfo(b)
	if err != nil {
		return StatInfo{}, fmt.Errorf("read %s: %w", p.display(pid, "stat"), err)
	}
	return st, nil
}

// Cmdline reads the arguments of process pid (PID/cmdline; empty for a
// zombie or a kernel thread).
func (p *Proc) Cmdline(pid int) ([]string, error) {
	b, err := p.readFile(pid, "cmdline")
	if err != nil {
		return nil, err
	}
	return parseCmdline(b), nil
}

// ParseChildren parses a PID/task/TID/children file: the thread's
// children's PIDs in decimal, each followed by a space (any white space
// is taken).
func ParseChildren(b []byte) ([]int, error) {
	var out []int
	for _, f := range strings.Fields(string(b)) {
		pid, ok := parsePID(f)
		if !ok {
			return nil, fmt.Errorf("bad pid %s", quote(f))
		}
		out = append(out, pid)
	}
	return out, nil
}

// Tree returns the descendants of process pid in tree order: depth
// first, each process's children by PID, each child followed by its own
// descendants. A process's children are those every one of its threads
// lists in PID/task/TID/children where the kernel has these files
// (CONFIG_PROC_CHILDREN); else the parent of every process is read from
// PID/stat. A process that exits while the tree is read is left out, or
// kept with Start 0 when its parent named it; one whose children may not
// be read is kept, without them; a pid that does not exist gives
// ErrNoProcess.
func (p *Proc) Tree(pid int) ([]Descendant, error) {
	if _, err := p.StatInfo(pid); err != nil {
		return nil, err
	}
	children := p.threadChildren
	if _, err := fs.Stat(p.FS, p.name(pid, "task/"+strconv.Itoa(pid)+"/children")); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, p.wrap(pid, "stat", p.name(pid, "task/"+strconv.Itoa(pid)+"/children"), err)
		}
		if !p.alive(pid) {
			return nil, fmt.Errorf("read %s: %w", p.path(strconv.Itoa(pid)), ErrNoProcess)
		}
		// No children files: every process's parent, from its stat.
		_, kids, err := p.parents()
		if err != nil {
			return nil, err
		}
		children = func(q int) ([]int, error) { return kids[q], nil }
	}
	var out []Descendant
	seen := map[int]bool{pid: true}
	var walk func(parent, depth int) error
	walk = func(parent, depth int) error {
		kids, err := children(parent)
		if errors.Is(err, ErrNoProcess) || errors.Is(err, ErrPermission) {
			// Gone, or its children may not be looked at: none known.
			return nil
		}
		if err != nil {
			return err
		}
		kids = slices.Clone(kids)
		slices.Sort(kids)
		for _, k := range kids {
			if seen[k] {
				continue
			}
			seen[k] = true
			d := Descendant{PID: k, PPID: parent, Depth: depth}
			st, err := p.StatInfo(k)
			switch {
			case errors.Is(err, ErrNoProcess):
				out = append(out, d)
				continue
			case err != nil:
				return err
			}
			d.Start = st.Start
			out = append(out, d)
			if err := walk(k, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(pid, 1); err != nil {
		return nil, err
	}
	return out, nil
}

// threadChildren is the children of every thread of process pid, from
// PID/task/TID/children; a thread that exits meanwhile is skipped.
func (p *Proc) threadChildren(pid int) ([]int, error) {
	ents, err := fs.ReadDir(p.FS, p.name(pid, "task"))
	if err != nil {
		return nil, p.wrap(pid, "read", p.name(pid, "task"), err)
	}
	var out []int
	for _, e := range ents {
		if _, ok := parsePID(e.Name()); !ok {
			continue
		}
		name := "task/" + e.Name() + "/children"
		b, err := p.readFile(pid, name)
		switch {
		case errors.Is(err, ErrNoProcess):
			return nil, err
		case errors.Is(err, fs.ErrNotExist):
			continue // the thread exited
		case err != nil:
			return nil, err
		}
		kids, err := ParseChildren(b)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p.display(pid, name), err)
		}
		out = append(out, kids...)
	}
	return out, nil
}

// parents lists every process (PIDs) and maps each to its children,
// from the parent each PID/stat names; processes that exit or may not be
// read meanwhile are left out of the map.
func (p *Proc) parents() ([]int, map[int][]int, error) {
	pids, err := p.PIDs()
	if err != nil {
		return nil, nil, err
	}
	kids := make(map[int][]int)
	for _, q := range pids {
		b, err := p.readFile(q, "stat")
		if errors.Is(err, ErrNoProcess) || errors.Is(err, ErrPermission) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		st, err := parseStat(b)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", p.display(q, "stat"), err)
		}
		kids[st.ppid] = append(kids[st.ppid], q)
	}
	return pids, kids, nil
}
