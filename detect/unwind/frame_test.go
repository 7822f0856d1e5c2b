package unwind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/pyattach/pyattach/detect/formaterr"
)

var le = binary.LittleEndian

// enc builds call frame information bytes.
type enc struct{ bytes.Buffer }

func (e *enc) u8(v ...byte) *enc { e.Write(v); return e }
func (e *enc) u16(v uint16) *enc { e.Write(le.AppendUint16(nil, v)); return e }
func (e *enc) u32(v uint32) *enc { e.Write(le.AppendUint32(nil, v)); return e }
func (e *enc) u64(v uint64) *enc { e.Write(le.AppendUint64(nil, v)); return e }
func (e *enc) uleb(v uint64) *enc {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		e.WriteByte(c)
		if v == 0 {
			return e
		}
	}
}
func (e *enc) sleb(v int64) *enc {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		done := v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0
		if !done {
			c |= 0x80
		}
		e.WriteByte(c)
		if done {
			return e
		}
	}
}
func (e *enc) str(s string) *enc { e.WriteString(s); e.WriteByte(0); return e }

// record appends a length-prefixed entry to sec and returns its offset.
func record(sec *bytes.Buffer, body []byte) int {
	off := sec.Len()
	sec.Write(le.AppendUint32(nil, uint32(len(body))))
	sec.Write(body)
	return off
}

// x86CIE is the CIE gcc writes for x86-64 code: "zR", code alignment 1,
// data alignment -8, return address column 16, pcrel|sdata4 FDE
// pointers, CFA = rsp+8, rip at CFA-8.
func x86CIE(aug string, augData []byte) []byte {
	var b enc
	b.u32(0).u8(1).str(aug).uleb(1).sleb(-8).uleb(16)
	b.uleb(uint64(len(augData))).u8(augData...)
	b.u8(cfaDefCFA).uleb(7).uleb(8).u8(cfaOffset | 16).uleb(1)
	return b.Bytes()
}

// fdeBody is an FDE body for the CIE at cieOff, the FDE starting at
// off, with pcrel sdata4 pointers: lo is relative to the field.
func fdeBody(secAddr uint64, off, cieOff int, lo, size uint64, insns []byte) []byte {
	var b enc
	b.u32(uint32(off + 4 - cieOff))
	field := secAddr + uint64(off) + 8
	b.u32(uint32(int32(int64(lo) - int64(field)))).u32(uint32(size))
	b.uleb(0)
	b.Write(insns)
	return b.Bytes()
}

// sampleEh is an .eh_frame at 0x1000 with a gcc-like function at
// 0x4000 (push rbp; mov rbp, rsp; ...; leave; ret) and a PLT at 0x3000.
func sampleEh(t testing.TB) *cfiSection {
	var sec bytes.Buffer
	const addr = 0x1000
	c := record(&sec, x86CIE("zR", []byte{pePCRel | peSdata4}))
	var fn enc
	fn.u8(cfaAdvanceLoc|1, cfaDefCFAOffset).uleb(16).u8(cfaOffset | 6).uleb(2)
	fn.u8(cfaAdvanceLoc|3, cfaDefCFARegister).uleb(6)
	fn.u8(cfaAdvanceLoc4).u32(0x40).u8(cfaRememberState, cfaDefCFA).uleb(7).uleb(8)
	fn.u8(cfaAdvanceLoc|1, cfaRestoreState)
	off := sec.Len()
	record(&sec, fdeBody(addr, off, c, 0x4000, 0x100, fn.Bytes()))
	// The PLT's: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0), after 6
	// bytes of push: rsp + 16.
	var plt enc
	plt.u8(cfaDefCFAOffset).uleb(16).u8(cfaAdvanceLoc | 6).u8(cfaDefCFAOffset).uleb(24)
	plt.u8(cfaAdvanceLoc|10, cfaDefCFAExpression).uleb(11)
	plt.u8(opBreg0+7).sleb(8).u8(opBreg0+16).sleb(0).u8(opLit0+15, opAnd, opLit0+11, opGe, opLit0+3, opShl, opPlus)
	off = sec.Len()
	record(&sec, fdeBody(addr, off, c, 0x3000, 0x40, plt.Bytes()))
	sec.Write(make([]byte, 4)) // terminator
	return &cfiSection{name: ".eh_frame", data: sec.Bytes(), addr: addr, eh: true, bo: le, ptrSize: 8, cies: map[int]*cie{}}
}

func TestEhFrameScanAndRows(t *testing.T) {
	s := sampleEh(t)
	if err := s.scan(); err != nil {
		t.Fatal(err)
	}
	if len(s.index) != 2 || s.index[0].lo != 0x3000 || s.index[1].lo != 0x4000 || s.index[1].hi != 0x4100 {
		t.Fatalf("index %+v", s.index)
	}
	type want struct {
		cfaReg uint64
		cfaOff int64
		rbp    rule
	}
	cases := map[uint64]want{
		0x4000: {7, 8, rule{}},
		0x4001: {7, 16, rule{kind: ruleOffset, off: -16}},
		0x4004: {6, 16, rule{kind: ruleOffset, off: -16}},
		0x4044: {7, 8, rule{kind: ruleOffset, off: -16}},  // after remember_state
		0x4045: {6, 16, rule{kind: ruleOffset, off: -16}}, // restored
		0x40ff: {6, 16, rule{kind: ruleOffset, off: -16}},
	}
	for pc, w := range cases {
		f, err := s.find(pc)
		if err != nil || f == nil {
			t.Fatalf("%#x: %v %v", pc, f, err)
		}
		r, err := execute(s.name, f, pc)
		if err != nil {
			t.Fatalf("%#x: %v", pc, err)
		}
		if r.cfaReg != w.cfaReg || r.cfaOff != w.cfaOff || r.regs[6].kind != w.rbp.kind || r.regs[6].off != w.rbp.off {
			t.Errorf("%#x: cfa r%d%+d rbp %+v, want %+v", pc, r.cfaReg, r.cfaOff, r.regs[6], w)
		}
		if r.regs[16].kind != ruleOffset || r.regs[16].off != -8 {
			t.Errorf("%#x: rip %+v", pc, r.regs[16])
		}
	}
	if f, err := s.find(0x4100); f != nil || err != nil {
		t.Errorf("0x4100: %v %v, want no FDE", f, err)
	}
}

// TestPLTExpression walks the PLT's CFA expression: rsp+8, plus 8 when
// the pc's low nibble is 11 or more (after the second push).
func TestPLTExpression(t *testing.T) {
	s := sampleEh(t)
	for _, c := range []struct{ pc, cfa uint64 }{{0x3010, 0x7008}, {0x301a, 0x7008}, {0x301b, 0x7010}, {0x302f, 0x7010}} {
		f, err := s.find(c.pc)
		if err != nil || f == nil {
			t.Fatalf("%#x: %v %v", c.pc, f, err)
		}
		r, err := execute(s.name, f, c.pc)
		if err != nil {
			t.Fatal(err)
		}
		regs := Regs{Arch: AMD64}
		regs.Set(AMD64RSP, 0x7000)
		regs.Set(AMD64RIP, c.pc)
		stack := &Stack{Addr: 0x7000, Data: make([]byte, 64)}
		le.PutUint64(stack.Data[c.cfa-8-0x7000:], 0x5555)
		caller, cfa, undef, err := step(&regs, &r, 16, stack)
		if err != nil || undef || cfa != c.cfa || caller.PC() != 0x5555 || caller.SP() != c.cfa {
			t.Errorf("%#x: cfa %#x pc %#x sp %#x undefined %v err %v, want cfa %#x", c.pc, cfa, caller.PC(), caller.SP(), undef, err, c.cfa)
		}
	}
}

func TestPointerEncodings(t *testing.T) {
	deref := func(a uint64) (uint64, bool) { return a * 2, a == 0x2100 }
	cases := []struct {
		enc  uint8
		data []byte
		want uint64
	}{
		{peAbsptr, le.AppendUint64(nil, 0x1122334455667788), 0x1122334455667788},
		{peUdata2, le.AppendUint16(nil, 0xfffe), 0xfffe},
		{peSdata2, le.AppendUint16(nil, 0xfffe), ^uint64(1)},
		{peUdata4, le.AppendUint32(nil, 0xfffffffe), 0xfffffffe},
		{peSdata4, le.AppendUint32(nil, 0xfffffffe), ^uint64(1)},
		{peUdata8, le.AppendUint64(nil, 7), 7},
		{peSdata8, le.AppendUint64(nil, ^uint64(6)), ^uint64(6)},
		{peULEB128, []byte{0xe5, 0x8e, 0x26}, 624485},
		{peSLEB128, []byte{0xc0, 0xbb, 0x78}, uint64(0xfffffffffffe1dc0)}, // -123456
		{pePCRel | peSdata4, le.AppendUint32(nil, 0xfffffff0), 0x2000 - 16},
		{peDataRel | peSdata4, le.AppendUint32(nil, 0x10), 0x9010},
		{peTextRel | peUdata2, le.AppendUint16(nil, 0x10), 0x5010},
		{peFuncRel | peUdata2, le.AppendUint16(nil, 0x10), 0x6010},
		{peIndirect | pePCRel | peSdata4, le.AppendUint32(nil, 0x100), 0x4200},
		{peOmit, nil, 0},
	}
	for _, c := range cases {
		r := buf{b: c.data, bo: le, sec: "t"}
		got := r.ptr(c.enc, &ptrCtx{addr: 0x2000, dataBase: 0x9000, textBase: 0x5000, funcBase: 0x6000, ptrSize: 8, deref: deref})
		if r.err != nil || got != c.want || r.off != len(c.data) {
			t.Errorf("encoding %#x: %#x (read %d bytes, %v), want %#x", c.enc, got, r.off, r.err, c.want)
		}
	}
	// aligned: skips to the next 8-byte boundary of the address.
	r := buf{b: append([]byte{0, 0, 0, 0}, le.AppendUint64(nil, 42)...), bo: le, off: 0}
	if got := r.ptr(peAligned, &ptrCtx{addr: 0x2004, ptrSize: 8}); got != 42 || r.err != nil {
		t.Errorf("aligned: %d %v", got, r.err)
	}
	for _, bad := range []uint8{0x05, 0x0d, 0x60, 0x70} {
		r := buf{b: make([]byte, 8), bo: le, sec: "t"}
		r.ptr(bad, &ptrCtx{ptrSize: 8})
		if !errors.Is(r.err, ErrCorrupt) {
			t.Errorf("encoding %#x: %v, want ErrCorrupt", bad, r.err)
		}
	}
}

func TestEhFrameHdr(t *testing.T) {
	s := sampleEh(t)
	// .eh_frame_hdr at 0x800: .eh_frame at 0x1000, two entries, datarel
	// sdata4 (relative to 0x800).
	var h enc
	h.u8(1, pePCRel|peSdata4, peUdata4, peDataRel|peSdata4)
	h.u32(uint32(0x1000 - (0x800 + 4))).u32(2)
	if err := s.scan(); err != nil {
		t.Fatal(err)
	}
	for _, ref := range s.index {
		h.u32(uint32(ref.lo - 0x800)).u32(uint32(0x1000 + uint64(ref.off) - 0x800))
	}
	hdr, err := parseEhHdr(h.Bytes(), 0x800, le, 8)
	if err != nil {
		t.Fatal(err)
	}
	if hdr.ehPtr != 0x1000 || hdr.count != 2 {
		t.Fatalf("hdr %+v", hdr)
	}
	for pc, want := range map[uint64]int{0x3000: s.index[0].off, 0x4050: s.index[1].off, 0x9999: s.index[1].off} {
		fa, ok, err := hdr.lookup(pc)
		if err != nil || !ok || int(fa-0x1000) != want {
			t.Errorf("%#x: %#x %v %v, want offset %d", pc, fa, ok, err, want)
		}
	}
	if _, ok, _ := hdr.lookup(0x2fff); ok {
		t.Errorf("0x2fff: found an FDE before the first")
	}
	// A count larger than the table.
	b := append([]byte(nil), h.Bytes()...)
	le.PutUint32(b[8:], 1000)
	if _, err := parseEhHdr(b, 0x800, le, 8); !errors.Is(err, ErrCorrupt) {
		t.Errorf("count 1000: %v, want ErrCorrupt", err)
	}
}

// TestSignalCIE: augmentation "zRS" marks the frames signal frames; the
// register rules come from expressions on the CFA, as glibc's
// __restore_rt has them.
func TestSignalCIE(t *testing.T) {
	var sec bytes.Buffer
	var b enc
	b.u32(0).u8(1).str("zRS").uleb(1).sleb(-8).uleb(16).uleb(1).u8(pePCRel | peSdata4)
	c := record(&sec, b.Bytes())
	var prog enc
	// CFA = *(rsp + 160) (the saved rsp); rip = *(rsp + 168).
	prog.u8(cfaDefCFAExpression).uleb(4).u8(opBreg0 + 7).sleb(160).u8(opDeref)
	prog.u8(cfaExpression).uleb(16).uleb(3).u8(opBreg0 + 7).sleb(168)
	off := sec.Len()
	record(&sec, fdeBody(0, off, c, 0x100, 0x10, prog.Bytes()))
	s := &cfiSection{name: ".eh_frame", data: sec.Bytes(), eh: true, bo: le, ptrSize: 8, cies: map[int]*cie{}}
	f, err := s.find(0x104)
	if err != nil || f == nil || !f.cie.signal {
		t.Fatalf("%+v %v", f, err)
	}
	r, err := execute(s.name, f, 0x104)
	if err != nil {
		t.Fatal(err)
	}
	regs := Regs{Arch: AMD64}
	regs.Set(AMD64RSP, 0x8000)
	regs.Set(AMD64RIP, 0x104)
	stack := &Stack{Addr: 0x8000, Data: make([]byte, 256)}
	le.PutUint64(stack.Data[160:], 0x9000)
	le.PutUint64(stack.Data[168:], 0x4242)
	caller, cfa, undef, err := step(&regs, &r, 16, stack)
	if err != nil || undef || cfa != 0x9000 || caller.PC() != 0x4242 || caller.SP() != 0x9000 {
		t.Errorf("cfa %#x pc %#x sp %#x %v %v", cfa, caller.PC(), caller.SP(), undef, err)
	}
}

// TestDebugFrame: a .debug_frame CIE (id 0xffffffff, version 4, no
// augmentation) and an FDE with absolute addresses; an undefined return
// address ends the stack.
func TestDebugFrame(t *testing.T) {
	var sec bytes.Buffer
	var b enc
	b.u32(0xffffffff).u8(4).str("").u8(8, 0).uleb(4).sleb(-8).uleb(16)
	b.u8(cfaDefCFASF).uleb(7).sleb(-1).u8(cfaUndefined).uleb(16)
	c := record(&sec, b.Bytes())
	var fde enc
	fde.u32(uint32(c)).u64(0x500).u64(0x20)
	fde.u8(cfaAdvanceLoc|2, cfaValOffset).uleb(3).uleb(2) // 8 bytes on: rbx = CFA-16
	record(&sec, fde.Bytes())
	s := &cfiSection{name: ".debug_frame", data: sec.Bytes(), bo: le, ptrSize: 8, cies: map[int]*cie{}}
	f, err := s.find(0x510)
	if err != nil || f == nil {
		t.Fatalf("%v %v", f, err)
	}
	r, err := execute(s.name, f, 0x510)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfaReg != 7 || r.cfaOff != 8 || r.regs[3].kind != ruleValOffset || r.regs[3].off != -16 || r.regs[16].kind != ruleUndefined {
		t.Fatalf("row %+v", r)
	}
	regs := Regs{Arch: AMD64}
	regs.Set(AMD64RSP, 0x100)
	regs.Set(AMD64RIP, 0x510)
	if _, _, undef, err := step(&regs, &r, 16, &Stack{}); !undef || err != nil {
		t.Errorf("undefined return address: %v %v", undef, err)
	}
}

func TestCorruptInput(t *testing.T) {
	good := sampleEh(t).data
	cases := map[string][]byte{
		"length past end":   append(le.AppendUint32(nil, 1000), 0, 0, 0, 0),
		"cie pointer back":  append(le.AppendUint32(nil, 8), le.AppendUint32(nil, 100)...),
		"version 9":         func() []byte { b := append([]byte(nil), good...); b[8] = 9; return b }(),
		"truncated":         good[:30],
		"unknown augmented": append(le.AppendUint32(nil, 12), append(le.AppendUint32(nil, 0), 1, 'x', 0, 1, 0x78, 0x10)...),
	}
	for name, data := range cases {
		s := &cfiSection{name: ".eh_frame", data: data, eh: true, bo: le, ptrSize: 8, cies: map[int]*cie{}}
		_, err := s.fdeAt(0)
		if err == nil {
			// entries that parse as CIEs: ask for an FDE after them
			_, err = s.cieAt(0)
		}
		var fe *formaterr.Error
		if name != "truncated" && (!errors.Is(err, ErrCorrupt) || !errors.As(err, &fe)) {
			t.Errorf("%s: %v, want a *formaterr.Error of ErrCorrupt", name, err)
		}
	}
}

func TestCFAStateStackBounded(t *testing.T) {
	c := &cie{codeAlign: 1, dataAlign: -8, raReg: 16, bo: le, addrSize: 8}
	insns := bytes.Repeat([]byte{cfaRememberState}, maxStateStack+1)
	if _, err := execute("t", &fde{cie: c, lo: 0, hi: 10, insns: insns}, 5); !errors.Is(err, ErrCorrupt) {
		t.Errorf("deep remember_state: %v", err)
	}
	if _, err := execute("t", &fde{cie: c, lo: 0, hi: 10, insns: []byte{cfaRestoreState}}, 5); !errors.Is(err, ErrCorrupt) {
		t.Errorf("restore_state with nothing remembered: %v", err)
	}
	// GNU_negative_offset_extended and args_size.
	r, err := execute("t", &fde{cie: c, lo: 0, hi: 10, insns: []byte{cfaGNUArgsSize, 16, cfaGNUNegOffsetExtnd, 3, 2}}, 5)
	if err != nil || r.argsSize != 16 || r.regs[3].kind != ruleOffset || r.regs[3].off != 16 {
		t.Errorf("%+v %v", r, err)
	}
}

func TestExprLoopBounded(t *testing.T) {
	// skip -3: jumps to itself forever.
	_, err := evalExpr([]byte{opSkip, 0xfd, 0xff}, &exprEnv{regs: &Regs{Arch: AMD64}})
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("loop: %v", err)
	}
	// bra with condition, arithmetic and comparisons.
	v, err := evalExpr([]byte{opLit0 + 3, opLit0 + 4, opMul, opConst1s, 0xfe, opPlus, opLit0 + 10, opEq, opBra, 4, 0, opLit0, opSkip, 1, 0, opLit0 + 7}, &exprEnv{regs: &Regs{Arch: AMD64}})
	if err != nil || v != 7 {
		t.Errorf("3*4-2 == 10 ? 7 : 0 = %d %v", v, err)
	}
}
