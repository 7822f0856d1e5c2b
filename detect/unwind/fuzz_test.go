package unwind

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pyattach/pyattach/detect/nativesym"
)

// checkErr fails on an error that is neither bad input nor a missing
// register or memory (what untrusted call frame information may cause).
func checkErr(t *testing.T, err error) {
	var re *RegisterError
	if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrMemory) && !errors.As(err, &re) {
		t.Fatalf("unexpected error type: %v", err)
	}
}

// walkRow runs the row of pc through step over regs and stack memory
// made of stackBytes.
func walkRow(t *testing.T, sec string, f *fde, pc uint64, stackBytes []byte) {
	r, err := execute(sec, f, pc)
	checkErr(t, err)
	if err != nil {
		return
	}
	regs := Regs{Arch: AMD64}
	for i := uint64(0); i <= AMD64RIP; i++ {
		regs.Set(i, 0x7000+i*8)
	}
	regs.Set(AMD64RIP, pc)
	_, _, _, err = step(&regs, &r, f.cie.raReg, &Stack{Addr: 0x7000, Data: stackBytes})
	checkErr(t, err)
}

// FuzzEhFrame parses data as .eh_frame (eh) or .debug_frame, looks pc
// up and walks one frame with its row.
func FuzzEhFrame(f *testing.F) {
	f.Add(sampleEh(f).data, uint64(0x4045), true)
	f.Add(sampleEh(f).data, uint64(0x301b), true)
	f.Add([]byte{}, uint64(0), false)
	f.Fuzz(func(t *testing.T, data []byte, pc uint64, eh bool) {
		s := &cfiSection{name: ".eh_frame", data: data, addr: 0x1000, eh: eh, bo: le, ptrSize: 8, cies: map[int]*cie{}}
		fd, err := s.find(pc)
		checkErr(t, err)
		if fd != nil {
			if pc < fd.lo || pc >= fd.hi {
				t.Fatalf("FDE [%#x, %#x) returned for %#x", fd.lo, fd.hi, pc)
			}
			walkRow(t, s.name, fd, pc, data)
		}
		// Every offset as an FDE: no panic.
		for off := 0; off < len(data) && off < 64; off++ {
			_, err := s.fdeAt(off)
			checkErr(t, err)
		}
	})
}

// FuzzEhFrameHdr parses data as .eh_frame_hdr and looks pc up.
func FuzzEhFrameHdr(f *testing.F) {
	var h enc
	h.u8(1, pePCRel|peSdata4, peUdata4, peDataRel|peSdata4)
	h.u32(0x7fc).u32(2).u32(0x2800).u32(0x808).u32(0x3800).u32(0x820)
	f.Add(h.Bytes(), uint64(0x3000))
	f.Add([]byte{1, 0x1b, 0xff, 0xff, 0, 0, 0, 0}, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, pc uint64) {
		hdr, err := parseEhHdr(data, 0x800, le, 8)
		checkErr(t, err)
		if hdr == nil {
			return
		}
		_, _, err = hdr.lookup(pc)
		checkErr(t, err)
	})
}

// FuzzCFA interprets insns (as a CIE's initial instructions and an
// FDE's) at pc and walks one frame, with stack memory made of insns.
func FuzzCFA(f *testing.F) {
	s := sampleEh(f)
	if err := s.scan(); err != nil {
		f.Fatal(err)
	}
	for _, ref := range s.index {
		fd, err := s.fdeAt(ref.off)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(fd.cie.init, fd.insns, uint64(0x20), int64(-8))
	}
	f.Add([]byte{cfaDefCFAExpression, 3, opBreg0 + 7, 8, opDeref}, []byte{cfaExpression, 16, 2, opBreg0 + 7, 0}, uint64(0), int64(-8))
	f.Fuzz(func(t *testing.T, init, insns []byte, pc uint64, dataAlign int64) {
		c := &cie{codeAlign: 1, dataAlign: dataAlign, raReg: 16, bo: le, addrSize: 8, fdeEnc: pePCRel | peSdata4, init: init}
		fd := &fde{cie: c, lo: 0, hi: 1 << 16, insns: insns}
		walkRow(t, "fuzz", fd, pc%(1<<16), append(append([]byte(nil), init...), insns...))
	})
}

// FuzzModule reads data as a mapped ELF file (its .eh_frame_hdr,
// .eh_frame, .debug_frame) and finds the row for addr and for a few
// addresses around it. The seeds are a small shared object built by
//
//	gcc -O2 -shared -nostdlib -fPIC -Wl,-z,norelro -Wl,--build-id=none \
//	    -Wl,-z,max-page-size=16 -Wl,-z,noseparate-code -s -o t.so t.c
//
// from two functions (f, and g calling f through the PLT).
func FuzzModule(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		m := readModule(bytes.NewReader(data), nativesym.Region{Path: "m"})
		if m.obj == nil {
			return
		}
		for _, a := range []uint64{addr, addr + 1, addr - 1, addr + 16} {
			c := m.rowAt(nil, a)
			checkErr(t, c.err)
		}
	})
}
