package gcore

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/testenv"
)

// TestTakeMemory: every byte a core holds of a process's memory equals
// what /proc/PID/mem reads while Take holds it stopped (afterwards the
// kernel itself writes to it: rseq's cpu_id), whether the memory was
// kept until the process was let go or written while it was stopped
// (MaxBuffer 1: every chunk spills); zero pages are holes.
func TestTakeMemory(t *testing.T) {
	testenv.NeedRoot(t, "Take stops the process with ptrace")
	py := testenv.Debian(t)
	pid := testenv.StartPython(t, py.Exe, "")
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, maxBuf := range []int64{0, 1} {
		// What the process's memory holds while it is stopped.
		seen := map[uint64][]byte{}
		restore := SetStoppedHook(func() {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
			if err != nil {
				t.Error(err)
				return
			}
			maps, err := proc.ParseMaps(bytes.NewReader(b))
			if err != nil {
				t.Error(err)
				return
			}
			for _, m := range maps {
				if m.Perms[0] != 'r' || m.Start >= 1<<63 || m.Path == "[vvar]" || m.Path == "[vvar_vclock]" {
					continue
				}
				buf := make([]byte, m.End-m.Start)
				if n, _ := mem.ReadAt(buf, int64(m.Start)); n == len(buf) {
					seen[m.Start] = buf
				}
			}
		})
		path := filepath.Join(t.TempDir(), "core")
		st, err := Take(context.Background(), pid, path, Options{MaxBuffer: maxBuf})
		restore()
		if err != nil {
			t.Fatalf("MaxBuffer %d: %v", maxBuf, err)
		}
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var checked int64
		for _, p := range f.Progs {
			if p.Type != elf.PT_LOAD || p.Filesz == 0 {
				continue
			}
			got := make([]byte, p.Filesz)
			if _, err := p.ReadAt(got, 0); err != nil {
				t.Fatal(err)
			}
			want, ok := seen[p.Vaddr]
			if !ok {
				continue // a page past a file's end: left zero in the core
			}
			if !bytes.Equal(got, want[:p.Filesz]) {
				t.Errorf("MaxBuffer %d: segment %#x-%#x differs from the process's memory", maxBuf, p.Vaddr, p.Vaddr+p.Memsz)
			}
			checked += int64(p.Filesz)
		}
		f.Close()
		if checked != st.Memory || checked == 0 {
			t.Errorf("MaxBuffer %d: compared %d bytes, the core holds %d", maxBuf, checked, st.Memory)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Size() != st.Size {
			t.Errorf("MaxBuffer %d: file size %v, Stats.Size %d (%v)", maxBuf, fi.Size(), st.Size, err)
		}
	}
}
