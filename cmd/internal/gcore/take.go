package gcore

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/ptrace"
	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/proc"
)

// ErrUnsupported: Take does not know this architecture's core format.
var ErrUnsupported = errors.New("writing a core is not supported on " + runtime.GOARCH)

// DefaultMaxBuffer is Options.MaxBuffer's default.
const DefaultMaxBuffer = 512 << 20

// chunkSize is how much memory one read of /proc/PID/mem asks for.
const chunkSize = 1 << 20

// Options tune Take.
type Options struct {
	// ProcRoot is the proc file system, "/proc" when empty.
	ProcRoot string
	// MaxBuffer bounds the memory (bytes that are not zero) kept in
	// pyattach while the process is stopped; past it, the rest is
	// written to the file before the process is let go (a longer stop).
	// 0 means DefaultMaxBuffer.
	MaxBuffer int64
}

// Skip is a mapping whose bytes are not in the core, or not all of them
// (an unmodified file mapping keeps its ELF header page).
type Skip struct {
	Start, End uint64
	Perms      string
	Path       string
	Reason     string // one of the Reason* constants
}

// Stats say what Take did.
type Stats struct {
	Stopped  time.Duration // from the first thread stopped to the last let go
	Threads  int           // threads in the core
	Segments int           // PT_LOAD segments
	Memory   int64         // bytes of memory in the core (its PT_LOAD file sizes)
	Copied   int64         // of which not zero, read while stopped (the rest are holes)
	Size     int64         // the core file's size
	Skipped  []Skip
}

// Take writes a core of process pid to path (atomically) and returns
// what it did. The process is stopped only while its mappings, registers
// and memory are read, and is let go, each thread with any signal it had
// pending, whatever happens: an error, or ctx cancelled.
func Take(ctx context.Context, pid int, path string, opts Options) (Stats, error) {
	var st Stats
	if !supported {
		return st, ErrUnsupported
	}
	root := opts.ProcRoot
	if root == "" {
		root = "/proc"
	}
	maxBuf := opts.MaxBuffer
	if maxBuf <= 0 {
		maxBuf = DefaultMaxBuffer
	}
	pageSize := uint64(os.Getpagesize())
	pdir := filepath.Join(root, strconv.Itoa(pid))

	// Before the stop: what does not change, or need not be exact.
	p, err := readProcess(root, pid)
	if err != nil {
		return st, err
	}
	auxv, err := os.ReadFile(filepath.Join(pdir, "auxv"))
	if err != nil {
		return st, fmt.Errorf("process %d: %w", pid, err)
	}
	filter := uint64(DefaultFilter)
	if b, err := os.ReadFile(filepath.Join(pdir, "coredump_filter")); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 64); err == nil {
			filter = v
		}
	}
	mem, err := os.Open(filepath.Join(pdir, "mem"))
	if err != nil {
		return st, fmt.Errorf("process %d: %w", pid, err)
	}
	defer mem.Close()
	// pagemap tells untouched (zero) pages of anonymous memory, which are
	// then not read; without it every page is.
	pagemap, err := os.Open(filepath.Join(pdir, "pagemap"))
	if err == nil {
		defer pagemap.Close()
	}
	tmp, err := safefs.CreateTemp(filepath.Dir(path))
	if err != nil {
		return st, err
	}
	defer tmp.Cleanup()
	w := &snapshot{f: tmp.File, max: maxBuf, page: int(pageSize)}
	// The buffer for the memory is allocated, and its pages touched,
	// before the stop: faulting them in costs as much as the copy.
	if b, err := os.ReadFile(filepath.Join(pdir, "smaps")); err == nil {
		if areas, err := proc.ParseSmaps(bytes.NewReader(b)); err == nil {
			w.reserve(estimate(areas, filter, pageSize))
		}
	}

	// The stop.
	t0 := time.Now()
	s, err := ptrace.Stop(ctx, root, pid)
	if err != nil {
		return st, err
	}
	if testHookStopped != nil {
		testHookStopped()
	}
	let := func() {
		if st.Stopped == 0 {
			s.Resume()
			st.Stopped = time.Since(t0)
		}
	}
	defer let()

	smaps, err := os.ReadFile(filepath.Join(pdir, "smaps"))
	if err != nil {
		return st, fmt.Errorf("process %d: %w", pid, err)
	}
	areas, err := proc.ParseSmaps(bytes.NewReader(smaps))
	if err != nil {
		return st, fmt.Errorf("process %d: smaps: %w", pid, err)
	}
	threads, err := readThreads(s)
	if err != nil {
		return st, fmt.Errorf("process %d: %w", pid, err)
	}
	st.Threads = len(threads)

	var (
		segs []segment
		exts []extent
		// sparse: private anonymous memory, whose untouched pages are zero
		sparse []bool
		files  []core.File
	)
	for _, a := range areas {
		ext, why := decide(a, filter)
		if why != "" {
			st.Skipped = append(st.Skipped, Skip{a.Start, a.End, a.Perms, a.Path, why})
		}
		if ext == omit {
			continue
		}
		if strings.HasPrefix(a.Path, "/") {
			name := a.Path
			if a.Deleted {
				name += " (deleted)"
			}
			files = append(files, core.File{Start: a.Start, End: a.End, Offset: a.Offset, Path: name})
		}
		sg := segment{start: a.Start, end: a.End, flags: progFlags(a.Perms), perms: a.Perms, path: a.Path}
		switch ext {
		case dumpAll:
			sg.filesz = a.End - a.Start
		case dumpHeader:
			sg.filesz = pageSize
		}
		segs = append(segs, sg)
		exts = append(exts, ext)
		sparse = append(sparse, anonPrivate(a))
	}
	// An ELF header page that is not one is left out (its phdr says
	// filesz 0) before the layout is fixed.
	var hdrPages = map[int][]byte{}
	for i, e := range exts {
		if e != dumpHeader {
			continue
		}
		b := make([]byte, pageSize)
		if n, _ := mem.ReadAt(b, int64(segs[i].start)); n < 4 || !bytes.HasPrefix(b, []byte(elf.ELFMAG)) {
			segs[i].filesz = 0 // listed in Skipped already
			continue
		}
		hdrPages[i] = b
	}
	nt := notes(p, threads, auxv, files, pageSize)
	head, size := layout(segs, uint64(len(nt)), pageSize)
	st.Segments = len(segs)

	// Memory, while stopped: kept here up to maxBuf, written beyond.
	for i, sg := range segs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		st.Memory += int64(sg.filesz)
		if b, ok := hdrPages[i]; ok {
			if err := w.add(sg.off, b); err != nil {
				return st, err
			}
			continue
		}
		if exts[i] != dumpAll {
			continue
		}
		bad, err := w.copy(ctx, mem, pagemap, sg, sparse[i])
		if err != nil {
			return st, err
		}
		if bad > 0 {
			st.Skipped = append(st.Skipped, Skip{sg.start, sg.end, sg.perms, sg.path, fmt.Sprintf("%s (%d bytes)", ReasonReadError, bad)})
		}
	}
	let()

	// After: the file.
	if err := ctx.Err(); err != nil {
		return st, err
	}
	st.Copied = w.kept + w.spilled
	if err := w.flush(); err != nil {
		return st, err
	}
	if _, err := tmp.WriteAt(head, 0); err != nil {
		return st, err
	}
	if _, err := tmp.WriteAt(nt, int64(len(head))); err != nil {
		return st, err
	}
	if len(segs)+1 >= pnXNum {
		if _, err := tmp.WriteAt(xnumSection(len(segs)+1), int64(size-shdrSize)); err != nil {
			return st, err
		}
	}
	if err := tmp.Truncate(int64(size)); err != nil {
		return st, err
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if err := tmp.Commit(path); err != nil {
		return st, err
	}
	st.Size = int64(size)
	return st, nil
}

// estimate is how many bytes of memory the core will hold that are not
// known to be zero: the resident and swapped pages of what it holds in
// full, with room for what the process touches before it is stopped.
func estimate(areas []proc.Area, filter, pageSize uint64) int64 {
	var n uint64
	for _, a := range areas {
		switch ext, _ := decide(a, filter); ext {
		case dumpAll:
			n += a.Rss + a.Swap
		case dumpHeader:
			n += pageSize
		}
	}
	return int64(n + n/8 + chunkSize)
}

// anonPrivate reports private anonymous memory (no file, not a special
// mapping such as [vdso]): a page never touched there reads as zeros.
func anonPrivate(a proc.Area) bool {
	if len(a.Perms) < 4 || a.Perms[3] != 'p' {
		return false
	}
	switch p := a.Path; {
	case p == "", p == "[heap]", p == "[stack]", strings.HasPrefix(p, "[anon:"), strings.HasPrefix(p, "[stack:"):
		return true
	}
	return false
}

func progFlags(perms string) elf.ProgFlag {
	var f elf.ProgFlag
	if len(perms) >= 3 {
		if perms[0] == 'r' {
			f |= elf.PF_R
		}
		if perms[1] == 'w' {
			f |= elf.PF_W
		}
		if perms[2] == 'x' {
			f |= elf.PF_X
		}
	}
	return f
}

// readProcess reads what NT_PRPSINFO says of pid.
func readProcess(root string, pid int) (core.PSInfo, error) {
	pdir := filepath.Join(root, strconv.Itoa(pid))
	p := core.PSInfo{PID: pid}
	b, err := os.ReadFile(filepath.Join(pdir, "stat"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return p, fmt.Errorf("process %d: %w", pid, proc.ErrNoProcess)
		}
		return p, fmt.Errorf("process %d: %w", pid, err)
	}
	comm, f, err := proc.StatFields(b)
	if err != nil || len(f) < 17 {
		return p, fmt.Errorf("process %d: malformed stat", pid)
	}
	p.Comm = comm
	p.State = f[0][0]
	p.PPID = int(proc.StatInt(f, 1))
	p.PGRP = int(proc.StatInt(f, 2))
	p.SID = int(proc.StatInt(f, 3))
	p.Flags = uint64(proc.StatInt(f, 6))
	p.Nice = int(proc.StatInt(f, 16))
	if b, err := os.ReadFile(filepath.Join(pdir, "status")); err == nil {
		if s, err := proc.ParseStatus(b); err == nil {
			p.UID, p.GID = s.UID, s.GID
		}
	}
	p.Args, _ = os.ReadFile(filepath.Join(pdir, "cmdline"))
	return p, nil
}

// readThreads reads every held thread's registers.
func readThreads(s *ptrace.Stopped) ([]thread, error) {
	var (
		out []thread
		err error
	)
	s.Do(func() {
		for _, tid := range s.Tids() {
			t := thread{tid: tid, sig: s.Signal(tid)}
			if t.gregs, err = ptrace.GetGRegs(tid); err != nil {
				return
			}
			for _, rs := range host.regSets {
				b, e := ptrace.GetRegSet(tid, rs.typ, make([]byte, rs.size))
				if e != nil {
					if !rs.optional {
						err = e
						return
					}
					b = nil
				}
				if b != nil && rs.fix != nil {
					b = rs.fix(b)
				}
				t.sets = append(t.sets, b)
			}
			if t.sig != 0 {
				t.siginfo, _ = ptrace.GetSigInfo(tid)
			}
			out = append(out, t)
		}
	})
	return out, err
}

// String is Stats in one line: "stopped 2.1 ms, 4 threads, 61 segments,
// 41.2 MB of memory (9.8 MB not zero), core 41.3 MB, 5 mappings left
// out or cut to their ELF header".
func (s Stats) String() string {
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	return fmt.Sprintf("stopped %.1f ms, %d threads, %d segments, %s of memory (%s not zero), core %s, %d mappings left out or cut to their ELF header",
		float64(s.Stopped)/float64(time.Millisecond), s.Threads, s.Segments, mb(s.Memory), mb(s.Copied), mb(s.Size), len(s.Skipped))
}
