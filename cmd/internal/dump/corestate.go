package dump

import (
	"os"

	"github.com/pyattach/pyattach/detect/core"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/rootfs"
)

// maxTextFiles bounds the mapped files syscalls opens to read code.
const maxTextFiles = 64

// syscalls is what each thread's registers in the core say of the
// system call it was in (core.ThreadSyscall), for the walker to derive
// its state as /proc would for a live thread; the code before each pc
// is read from the core or, as the core rarely holds code, from the
// file mapped there (inside the core's root). nil for a live process.
// A thread whose registers do not tell is left out: its state is
// unknown.
func (t *Target) syscalls() map[int]plan.Syscall {
	if t.Core == "" || t.Info == nil || len(t.Info.Threads) == 0 {
		return nil
	}
	root := ""
	if t.Res != nil && t.Res.Container {
		root = t.Res.Root
	}
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	text := func(addr uint64, n int) ([]byte, bool) {
		for _, m := range t.Info.Mappings {
			if addr < m.Start || addr >= m.End || uint64(n) > m.End-addr || m.Deleted {
				continue
			}
			f, seen := files[m.Path]
			if !seen {
				if len(files) >= maxTextFiles {
					return nil, false
				}
				f, _ = rootfs.Open(root, m.Path)
				files[m.Path] = f
			}
			if f == nil {
				return nil, false
			}
			b := make([]byte, n)
			got, _ := f.ReadAt(b, int64(m.Offset+(addr-m.Start)))
			return b, got == n
		}
		return nil, false
	}
	out := map[int]plan.Syscall{}
	for _, th := range t.Info.Threads {
		if th.TID <= 0 {
			continue
		}
		s := core.ThreadSyscall(t.Info.Machine, th.Regs, text)
		if !s.Known {
			continue
		}
		out[th.TID] = plan.Syscall{In: s.In, Nr: s.Nr, Arg: s.Arg, ArgKnown: s.ArgKnown}
	}
	return out
}
