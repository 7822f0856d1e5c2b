package pyinfo

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// ErrNoRuntime means the file defines no _PyRuntime symbol: it is not a
// CPython 3.7+ interpreter or libpython (2.7 and 3.6 have none).
var ErrNoRuntime = errors.New("no _PyRuntime symbol")

// Runtime is where _PyRuntime sits in an ELF file: the symbol's value
// (a link-time address) and the file's loadable segments, which place a
// mapping of the file at run time.
type Runtime struct {
	Value uint64
	Loads []Load
}

// Load is one PT_LOAD segment.
type Load struct {
	Off, Vaddr, Filesz uint64
}

// ReadRuntime reads _PyRuntime's symbol from .symtab, else .dynsym (it is
// a dynamic symbol even in stripped builds), and the PT_LOAD segments.
// It reads no debug information.
func ReadRuntime(r io.ReaderAt) (*Runtime, error) {
	f, err := elfinfo.NewFile(r)
	if err != nil {
		return nil, err
	}
	return RuntimeOf(f)
}

// RuntimeOf is ReadRuntime on an ELF file parsed by elfinfo.NewFile.
func RuntimeOf(f *elf.File) (*Runtime, error) {
	syms, err := lookupSymbols(f, []string{symPyRuntime})
	if err != nil {
		return nil, err
	}
	s, ok := syms[symPyRuntime]
	if !ok {
		return nil, ErrNoRuntime
	}
	return placed(f, s.Value, ErrNoRuntime)
}

// placed returns the Runtime of the link-time address value in f, with
// f's PT_LOAD segments; an error wrapping none when f has no PT_LOAD.
func placed(f *elf.File, value uint64, none error) (*Runtime, error) {
	rt := &Runtime{Value: value}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			rt.Loads = append(rt.Loads, Load{Off: p.Off, Vaddr: p.Vaddr, Filesz: p.Filesz})
		}
	}
	if len(rt.Loads) == 0 {
		return nil, fmt.Errorf("%w: no PT_LOAD segment", none)
	}
	return rt, nil
}

// pageSize is the granularity the kernel maps ELF segments at on the
// platforms pyattach supports (x86-64, and aarch64 with 4 KiB pages).
const pageSize = 4096

// Address returns _PyRuntime's run-time address in a process that maps
// the file at start from file offset off (a line of /proc/PID/maps or an
// NT_FILE entry of a core; the file's lowest mapping is the usual
// choice). It reports false when no segment holds that offset.
func (rt *Runtime) Address(start, off uint64) (uint64, bool) {
	for _, l := range rt.Loads {
		first := l.Off &^ (pageSize - 1)
		if off < first || off >= l.Off+l.Filesz && off != first {
			continue
		}
		// The kernel maps file offset x of this segment at
		// bias + Vaddr + (x - Off); the mapping puts off at start.
		bias := start - off - l.Vaddr + l.Off
		return bias + rt.Value, true
	}
	return 0, false
}

// AsyncioDebugSection is the section where CPython 3.14+ writes
// _Py_AsyncioModuleDebugOffsets: in the _asyncio extension module, or
// in the executable (or libpython) when the module is built in.
const AsyncioDebugSection = ".AsyncioDebug"

// ErrNoSection means the file has no section of that name.
var ErrNoSection = errors.New("no such section")

// ReadSection reads where the loaded section name (SHF_ALLOC) sits in
// an ELF file: its link-time address as Value, and the PT_LOAD
// segments, so that Address places it in a process. Section headers
// survive strip, so stripped files have it too.
func ReadSection(r io.ReaderAt, name string) (*Runtime, error) {
	f, err := elfinfo.NewFile(r)
	if err != nil {
		return nil, err
	}
	s := f.Section(name)
	if s == nil || s.Flags&elf.SHF_ALLOC == 0 || s.Addr == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoSection, name)
	}
	return placed(f, s.Addr, ErrNoSection)
}

// IsAsyncioModule reports whether a file's base name is the _asyncio
// extension module's ("_asyncio.cpython-314-x86_64-linux-gnu.so",
// "_asyncio.so").
func IsAsyncioModule(base string) bool {
	return strings.HasPrefix(base, "_asyncio.") && strings.HasSuffix(base, ".so")
}
