//go:build linux

package unwind

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/pyattach/pyattach/detect/nativesym"
	"github.com/pyattach/pyattach/detect/proc"
	"github.com/pyattach/pyattach/detect/testenv"
)

// pathFiles opens a region's path, and as its debug file debug (if set).
type pathFiles struct{ debug string }

func (p pathFiles) Open(r nativesym.Region) (nativesym.File, error) { return os.Open(r.Path) }

func (p pathFiles) OpenDebug(nativesym.Region) (nativesym.File, error) {
	if p.debug == "" {
		return nil, nil
	}
	return os.Open(p.debug)
}

const pltApp = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	puts(argv[0]);
	return atoi(argv[argc - 1]);
}
`

// TestPLTFromGcc walks frames in a real lazy-binding PLT (gcc, ld -z
// lazy): the CFA of its entries is a DWARF expression on rsp and rip.
func TestPLTFromGcc(t *testing.T) {
	if HostArch() != AMD64 {
		testenv.Platform(t, "the PLT's layout is x86-64's")
	}
	exe := testenv.CC(t, t.TempDir(), "plt", pltApp, "-O2", "-Wl,-z,lazy")
	m := loadModule(pathFiles{}, nativesym.Region{Path: exe})
	if m.obj == nil || m.eh == nil || m.hdr == nil {
		t.Fatalf("module: %v", m.err)
	}
	plt := m.obj.Section(".plt")
	if plt == nil || plt.Size < 0x20 {
		t.Fatal("no .plt with an entry")
	}
	const rsp = 0x7000
	for off, cfa := range map[uint64]uint64{0x0: rsp + 16, 0x6: rsp + 24, 0x10: rsp + 8, 0x16: rsp + 8, 0x1b: rsp + 16} {
		pc := plt.Addr + off
		f, sec, err := m.find(pathFiles{}, pc)
		if err != nil || f == nil {
			t.Fatalf("pc %#x: %v %v", pc, f, err)
		}
		r, err := execute(sec.name, f, pc)
		if err != nil {
			t.Fatal(err)
		}
		regs := Regs{Arch: AMD64}
		regs.Set(AMD64RSP, rsp)
		regs.Set(AMD64RIP, pc)
		stack := &Stack{Addr: rsp, Data: make([]byte, 64)}
		le.PutUint64(stack.Data[cfa-8-rsp:], 0x1234)
		caller, got, undef, err := step(&regs, &r, f.cie.raReg, stack)
		if err != nil || undef || got != cfa || caller.PC() != 0x1234 {
			t.Errorf(".plt+%#x: cfa %#x (want %#x) pc %#x undefined %v: %v", off, got, cfa, caller.PC(), undef, err)
		}
	}
}

// TestDebugFrameFromGcc: code compiled without unwind tables has its
// call frame information in .debug_frame only: in the module, or in
// its separate debug file once stripped.
func TestDebugFrameFromGcc(t *testing.T) {
	dir := t.TempDir()
	exe := testenv.CC(t, dir, "dbg", pltApp, "-O2", "-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")
	main := testenv.SymbolAddr(t, exe, "main")
	m := loadModule(pathFiles{}, nativesym.Region{Path: exe})
	f, sec, err := m.find(pathFiles{}, main)
	if err != nil || f == nil || sec.name != ".debug_frame" {
		t.Fatalf("main: %v in %v: %v", f, sec, err)
	}
	debug := filepath.Join(dir, "dbg.debug")
	testenv.Run(t, dir, "objcopy", "--only-keep-debug", exe, debug)
	testenv.Run(t, dir, "objcopy", "--strip-debug", exe)
	m = loadModule(pathFiles{}, nativesym.Region{Path: exe})
	if f, _, _ := m.find(pathFiles{}, main); f != nil {
		t.Fatalf("stripped module: FDE for main without its debug file")
	}
	m = loadModule(pathFiles{debug: debug}, nativesym.Region{Path: exe})
	f, sec, err = m.find(pathFiles{debug: debug}, main)
	if err != nil || f == nil || sec.name != ".debug_frame" || main < f.lo || main >= f.hi {
		t.Fatalf("main with the debug file: %v in %v: %v", f, sec, err)
	}
}

// TestVDSO reads this process's vDSO from its memory and finds call
// frame information for its clock_gettime.
func TestVDSO(t *testing.T) {
	maps, err := proc.New("/proc").Maps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var start, end uint64
	for _, m := range maps {
		if m.Path == VDSOPath {
			start, end = m.Start, m.End
		}
	}
	if end == 0 {
		testenv.Missing(t, "no vDSO mapped in this process")
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	image := make([]byte, end-start)
	if _, err := mem.ReadAt(image, int64(start)); err != nil {
		t.Fatal(err)
	}
	obj, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := obj.DynamicSymbols()
	var fn elf.Symbol
	for _, s := range syms {
		if s.Name == "__vdso_clock_gettime" || s.Name == "__kernel_clock_gettime" {
			fn = s
		}
	}
	if fn.Value == 0 {
		t.Fatal("no clock_gettime in the vDSO")
	}
	u := New(nil, noFiles{})
	u.AddVDSO(start, end, image)
	m, addr, ok := u.resolve(start + fn.Value + 1)
	if !ok {
		t.Fatal("vDSO not resolved")
	}
	if c := m.rowAt(nil, addr); c.r == nil {
		t.Errorf("no row for clock_gettime+1: %v", c.err)
	}
}
