package dump

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/ptrace"
	"github.com/pyattach/pyattach/detect/nativesym"
	"github.com/pyattach/pyattach/detect/unwind"
)

// directNative is what --native adds to the direct reader: while the
// process is stopped, each thread's registers and stack bytes are
// copied (ptrace.Capture), beside the walker's copy of its pages; once
// it runs again, the C stacks are unwound from those copies in Go
// (detect/unwind: the modules' .eh_frame, no debugger) and named from
// the symbol tables and the one DWARF unit holding each pc (nativesym),
// and handed to the walker, which merges them with the Python frames.
type directNative struct {
	files *moduleFiles
	mem   *os.File
	tab   *nativesym.Table
	unw   *unwind.Unwinder
	evals [][2]uint64

	// The capture of the current stop, running beside the walker's copy.
	done    chan struct{}
	stacks  []ptrace.ThreadStack
	err     error
	capture time.Duration
	// Unwind is the time spent unwinding and naming, in all stops.
	unwind time.Duration
}

// openDirectNative prepares t's modules, before the process is stopped.
func (t *Target) openDirectNative(debugDirs []string) (*directNative, error) {
	regions, files := t.nativeModules(debugDirs)
	if files == nil {
		return nil, t.fail(KindNoStacks, fmt.Errorf("%s: its mappings cannot be read", t.name()))
	}
	mem, err := os.Open(filepath.Join(t.procRoot, strconv.Itoa(t.PID), "mem"))
	if err != nil {
		return nil, t.fail(KindNoStacks, fmt.Errorf("%s: %w", t.name(), err))
	}
	n := &directNative{files: files, mem: mem, tab: nativesym.New(regions, files), unw: unwind.New(regions, files)}
	n.evals = n.tab.Ranges(interpreterFile, evalLoop)
	if start, end, image, err := ptrace.ReadVDSO(mem, files.all); err == nil && image != nil {
		n.unw.AddVDSO(start, end, image)
	}
	return n, nil
}

func (n *directNative) Close() {
	n.mem.Close()
	n.tab.Close()
	n.unw.Close()
}

// start copies every held thread's registers and stack, beside the
// walker (wait for it before s is resumed).
func (n *directNative) start(s *ptrace.Stopped) {
	n.done = make(chan struct{})
	go func() {
		defer close(n.done)
		t0 := time.Now()
		n.stacks, n.err = s.Capture(n.mem, n.files.all, 0)
		n.capture += time.Since(t0)
	}()
}

// wait waits for the capture of the current stop.
func (n *directNative) wait() {
	if n.done != nil {
		<-n.done
	}
}

// nativeOut is a C frame as the walker takes it (pyattach_gdb_dump's
// _native_frames): pc, block_pc (an address in its function: a
// return address less one), function, file and line when known.
type nativeOut struct {
	Function *string `json:"function"`
	File     *string `json:"file"`
	Line     *int    `json:"line"`
	PC       uint64  `json:"pc"`
	BlockPC  uint64  `json:"block_pc"`
}

// frames unwinds and names the C stacks of the last capture: the JSON
// object the walker reads, {"TID": [frames innermost first]}.
func (n *directNative) frames() ([]byte, error) {
	t0 := time.Now()
	defer func() { n.unwind += time.Since(t0) }()
	out := map[string][]nativeOut{}
	if n.err != nil {
		return json.Marshal(out)
	}
	var (
		traces [][]unwind.Frame
		pcs    []uint64
	)
	// Threads doing the same thing share their return addresses: each
	// pc is named once.
	index := map[uint64]int{}
	for i := range n.stacks {
		st := &n.stacks[i]
		var fr []unwind.Frame
		if st.Err == nil {
			fr = n.unw.Unwind(st.Regs, &st.Stack).Frames
		}
		traces = append(traces, fr)
		for _, f := range fr {
			if _, ok := index[f.LookupPC()]; !ok {
				index[f.LookupPC()] = len(pcs)
				pcs = append(pcs, f.LookupPC())
			}
		}
	}
	names := n.tab.LookupAll(pcs)
	for i, fr := range traces {
		list := make([]nativeOut, 0, len(fr))
		for _, f := range fr {
			nf := names[index[f.LookupPC()]]
			o := nativeOut{PC: f.PC, BlockPC: f.LookupPC()}
			name := nf.Function
			if name == "" && inRanges(n.evals, o.BlockPC) {
				name = evalLoop
			}
			if name != "" {
				o.Function = &name
			}
			if nf.File != "" {
				file := nf.File
				o.File = &file
				if nf.Line > 0 {
					line := nf.Line
					o.Line = &line
				}
			}
			list = append(list, o)
		}
		out[strconv.Itoa(n.stacks[i].Tid)] = list
	}
	return json.Marshal(out)
}

func inRanges(rs [][2]uint64, pc uint64) bool {
	for _, r := range rs {
		if r[0] <= pc && pc < r[1] {
			return true
		}
	}
	return false
}
