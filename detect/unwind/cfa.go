package unwind

// DW_CFA_* opcodes.
const (
	cfaAdvanceLoc        = 0x40 // high two bits
	cfaOffset            = 0x80
	cfaRestore           = 0xc0
	cfaNop               = 0x00
	cfaSetLoc            = 0x01
	cfaAdvanceLoc1       = 0x02
	cfaAdvanceLoc2       = 0x03
	cfaAdvanceLoc4       = 0x04
	cfaOffsetExtended    = 0x05
	cfaRestoreExtended   = 0x06
	cfaUndefined         = 0x07
	cfaSameValue         = 0x08
	cfaRegister          = 0x09
	cfaRememberState     = 0x0a
	cfaRestoreState      = 0x0b
	cfaDefCFA            = 0x0c
	cfaDefCFARegister    = 0x0d
	cfaDefCFAOffset      = 0x0e
	cfaDefCFAExpression  = 0x0f
	cfaExpression        = 0x10
	cfaOffsetExtendedSF  = 0x11
	cfaDefCFASF          = 0x12
	cfaDefCFAOffsetSF    = 0x13
	cfaValOffset         = 0x14
	cfaValOffsetSF       = 0x15
	cfaValExpression     = 0x16
	cfaGNUWindowSave     = 0x2d // AArch64: DW_CFA_AARCH64_negate_ra_state
	cfaGNUArgsSize       = 0x2e
	cfaGNUNegOffsetExtnd = 0x2f
)

// ruleKind is how a register of the caller is found.
type ruleKind uint8

const (
	ruleUnset     ruleKind = iota // no rule: the arch's default
	ruleUndefined                 // not recoverable (the return address: end of stack)
	ruleSame                      // unchanged
	ruleOffset                    // saved at CFA+off
	ruleValOffset                 // is CFA+off
	ruleRegister                  // in register reg
	ruleExpr                      // saved at the address expr computes
	ruleValExpr                   // is the value expr computes
)

type rule struct {
	kind ruleKind
	off  int64
	reg  uint64
	expr []byte
}

// row is the unwind table's row for one pc.
type row struct {
	cfaReg   uint64
	cfaOff   int64
	cfaExpr  []byte // set: the CFA is this expression's value
	regs     [NumRegs]rule
	argsSize uint64
}

// execute runs the CIE's initial instructions and then the FDE's up to
// addr (a link-time address in [f.lo, f.hi)), returning the row for
// addr. sec names the section for errors.
func execute(sec string, f *fde, addr uint64) (row, error) {
	var init row
	c := f.cie
	if err := runCFA(sec, c, f, c.init, ^uint64(0), &init, nil); err != nil {
		return row{}, err
	}
	cur := init
	if err := runCFA(sec, c, f, f.insns, addr, &cur, &init); err != nil {
		return row{}, err
	}
	return cur, nil
}

// runCFA interprets insns into r until the location passes addr.
// init is the CIE's row (nil while running the CIE's own instructions,
// where DW_CFA_restore is meaningless).
func runCFA(sec string, c *cie, f *fde, insns []byte, addr uint64, r *row, init *row) error {
	p := buf{b: insns, sec: sec, bo: c.bo}
	loc := f.lo
	var stack []row
	ctx := &ptrCtx{ptrSize: c.addrSize}
	set := func(reg uint64, ru rule) {
		if reg < NumRegs {
			r.regs[reg] = ru
		}
	}
	advance := func(delta uint64) bool {
		d := delta * c.codeAlign
		if c.codeAlign != 0 && d/c.codeAlign != delta {
			return false
		}
		loc += d
		return loc <= addr && loc >= f.lo
	}
	for p.off < len(p.b) && p.err == nil {
		op := p.u8()
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			if !advance(uint64(op & 0x3f)) {
				return nil
			}
			continue
		case cfaOffset:
			set(uint64(op&0x3f), rule{kind: ruleOffset, off: int64(p.uleb()) * c.dataAlign})
			continue
		case cfaRestore:
			reg := uint64(op & 0x3f)
			if init != nil && reg < NumRegs {
				r.regs[reg] = init.regs[reg]
			}
			continue
		}
		switch op {
		case cfaNop:
		case cfaSetLoc:
			// Rare (and useless in position-independent code): the
			// address is read as the FDE's own are.
			n := p.ptr(c.fdeEnc&0x0f, ctx)
			if p.err != nil {
				return p.err
			}
			if n > addr || n < f.lo {
				return nil
			}
			loc = n
		case cfaAdvanceLoc1:
			if !advance(uint64(p.u8())) {
				return p.err
			}
		case cfaAdvanceLoc2:
			if !advance(uint64(p.u16())) {
				return p.err
			}
		case cfaAdvanceLoc4:
			if !advance(uint64(p.u32())) {
				return p.err
			}
		case cfaOffsetExtended:
			reg := p.uleb()
			set(reg, rule{kind: ruleOffset, off: int64(p.uleb()) * c.dataAlign})
		case cfaRestoreExtended:
			reg := p.uleb()
			if init != nil && reg < NumRegs {
				r.regs[reg] = init.regs[reg]
			}
		case cfaUndefined:
			set(p.uleb(), rule{kind: ruleUndefined})
		case cfaSameValue:
			set(p.uleb(), rule{kind: ruleSame})
		case cfaRegister:
			reg := p.uleb()
			set(reg, rule{kind: ruleRegister, reg: p.uleb()})
		case cfaRememberState:
			if len(stack) >= maxStateStack {
				return corrupt(sec, -1, "DW_CFA_remember_state nested deeper than %d", maxStateStack)
			}
			stack = append(stack, *r)
		case cfaRestoreState:
			if len(stack) == 0 {
				return corrupt(sec, -1, "DW_CFA_restore_state without remember_state")
			}
			// The whole row comes back, the CFA rule with the registers'
			// (as libgcc and gdb restore it).
			*r = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		case cfaDefCFA:
			r.cfaReg = p.uleb()
			r.cfaOff = int64(p.uleb())
			r.cfaExpr = nil
		case cfaDefCFASF:
			r.cfaReg = p.uleb()
			r.cfaOff = p.sleb() * c.dataAlign
			r.cfaExpr = nil
		case cfaDefCFARegister:
			r.cfaReg = p.uleb()
			r.cfaExpr = nil
		case cfaDefCFAOffset:
			r.cfaOff = int64(p.uleb())
		case cfaDefCFAOffsetSF:
			r.cfaOff = p.sleb() * c.dataAlign
		case cfaDefCFAExpression:
			r.cfaExpr = p.bytes(p.uleb())
		case cfaExpression:
			reg := p.uleb()
			set(reg, rule{kind: ruleExpr, expr: p.bytes(p.uleb())})
		case cfaValExpression:
			reg := p.uleb()
			set(reg, rule{kind: ruleValExpr, expr: p.bytes(p.uleb())})
		case cfaOffsetExtendedSF:
			reg := p.uleb()
			set(reg, rule{kind: ruleOffset, off: p.sleb() * c.dataAlign})
		case cfaValOffset:
			reg := p.uleb()
			set(reg, rule{kind: ruleValOffset, off: int64(p.uleb()) * c.dataAlign})
		case cfaValOffsetSF:
			reg := p.uleb()
			set(reg, rule{kind: ruleValOffset, off: p.sleb() * c.dataAlign})
		case cfaGNUArgsSize:
			r.argsSize = p.uleb()
		case cfaGNUNegOffsetExtnd:
			reg := p.uleb()
			set(reg, rule{kind: ruleOffset, off: -int64(p.uleb()) * c.dataAlign})
		case cfaGNUWindowSave:
			// AArch64 return address signing state: the return address is
			// stripped of its signature when it is used (see stripPAC).
		default:
			return corrupt(sec, int64(p.off-1), "unknown DW_CFA opcode %#x", op)
		}
	}
	return p.err
}
