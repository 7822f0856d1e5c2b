package unwind

// DWARF expression operations the CFI evaluator knows (DW_OP_*).
const (
	opAddr       = 0x03
	opDeref      = 0x06
	opConst1u    = 0x08
	opConst1s    = 0x09
	opConst2u    = 0x0a
	opConst2s    = 0x0b
	opConst4u    = 0x0c
	opConst4s    = 0x0d
	opConst8u    = 0x0e
	opConst8s    = 0x0f
	opConstu     = 0x10
	opConsts     = 0x11
	opDup        = 0x12
	opDrop       = 0x13
	opOver       = 0x14
	opPick       = 0x15
	opSwap       = 0x16
	opRot        = 0x17
	opAbs        = 0x19
	opAnd        = 0x1a
	opDiv        = 0x1b
	opMinus      = 0x1c
	opMod        = 0x1d
	opMul        = 0x1e
	opNeg        = 0x1f
	opNot        = 0x20
	opOr         = 0x21
	opPlus       = 0x22
	opPlusUconst = 0x23
	opShl        = 0x24
	opShr        = 0x25
	opShra       = 0x26
	opXor        = 0x27
	opBra        = 0x28
	opEq         = 0x29
	opGe         = 0x2a
	opGt         = 0x2b
	opLe         = 0x2c
	opLt         = 0x2d
	opNe         = 0x2e
	opSkip       = 0x2f
	opLit0       = 0x30
	opLit31      = 0x4f
	opBreg0      = 0x70
	opBreg31     = 0x8f
	opBregx      = 0x92
	opDerefSize  = 0x94
	opNop        = 0x96
)

// Bounds of one evaluation: a program that loops (DW_OP_skip/bra
// backwards) stops after maxExprSteps operations.
const (
	maxExprSteps = 1000
	maxExprStack = 64
)

// exprEnv is what an expression reads: registers and memory.
type exprEnv struct {
	regs    *Regs
	read    func(addr uint64, size int) (uint64, error)
	ptrSize int
}

// evalExpr evaluates a DWARF expression of call frame information with
// push on the stack first (the CFA, for DW_CFA_expression) and returns
// the value on top at its end.
func evalExpr(expr []byte, env *exprEnv, push ...uint64) (uint64, error) {
	const sec = "DWARF expression"
	p := buf{b: expr, sec: sec}
	if env.regs != nil {
		p.bo = env.regs.Arch.byteOrder()
	}
	stack := make([]uint64, 0, 8)
	stack = append(stack, push...)
	pop := func() (uint64, bool) {
		if len(stack) == 0 {
			return 0, false
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return v, true
	}
	for steps := 0; p.off < len(p.b); steps++ {
		if steps >= maxExprSteps {
			return 0, corrupt(sec, int64(p.off), "more than %d operations", maxExprSteps)
		}
		if len(stack) > maxExprStack {
			return 0, corrupt(sec, int64(p.off), "stack deeper than %d", maxExprStack)
		}
		at := p.off
		op := p.u8()
		var v uint64
		push := true
		switch {
		case op >= opLit0 && op <= opLit31:
			v = uint64(op - opLit0)
		case op >= opBreg0 && op <= opBreg31 || op == opBregx:
			reg := uint64(op - opBreg0)
			if op == opBregx {
				reg = p.uleb()
			}
			off := p.sleb()
			r, ok := env.regs.get(reg)
			if !ok {
				return 0, &RegisterError{Reg: reg}
			}
			v = r + uint64(off)
		default:
			switch op {
			case opAddr:
				if env.ptrSize == 4 {
					v = uint64(p.u32())
				} else {
					v = p.u64()
				}
			case opConst1u:
				v = uint64(p.u8())
			case opConst1s:
				v = uint64(int64(int8(p.u8())))
			case opConst2u:
				v = uint64(p.u16())
			case opConst2s:
				v = uint64(int64(int16(p.u16())))
			case opConst4u:
				v = uint64(p.u32())
			case opConst4s:
				v = uint64(int64(int32(p.u32())))
			case opConst8u, opConst8s:
				v = p.u64()
			case opConstu:
				v = p.uleb()
			case opConsts:
				v = uint64(p.sleb())
			case opDup, opOver, opPick:
				i := 0
				if op == opOver {
					i = 1
				} else if op == opPick {
					i = int(p.u8())
				}
				if i >= len(stack) {
					return 0, corrupt(sec, int64(at), "stack underflow")
				}
				v = stack[len(stack)-1-i]
			case opDrop:
				if _, ok := pop(); !ok {
					return 0, corrupt(sec, int64(at), "stack underflow")
				}
				push = false
			case opSwap:
				if len(stack) < 2 {
					return 0, corrupt(sec, int64(at), "stack underflow")
				}
				n := len(stack)
				stack[n-1], stack[n-2] = stack[n-2], stack[n-1]
				push = false
			case opRot:
				if len(stack) < 3 {
					return 0, corrupt(sec, int64(at), "stack underflow")
				}
				n := len(stack)
				stack[n-1], stack[n-2], stack[n-3] = stack[n-2], stack[n-3], stack[n-1]
				push = false
			case opDeref, opDerefSize:
				size := env.ptrSize
				if op == opDerefSize {
					size = int(p.u8())
				}
				if size < 1 || size > 8 {
					return 0, corrupt(sec, int64(at), "DW_OP_deref_size %d", size)
				}
				a, ok := pop()
				if !ok {
					return 0, corrupt(sec, int64(at), "stack underflow")
				}
				var err error
				if v, err = env.read(a, size); err != nil {
					return 0, err
				}
			case opAbs, opNeg, opNot, opPlusUconst:
				a, ok := pop()
				if !ok {
					return 0, corrupt(sec, int64(at), "stack underflow")
				}
				switch op {
				case opAbs:
					if int64(a) < 0 {
						a = -a
					}
				case opNeg:
					a = -a
				case opNot:
					a = ^a
				case opPlusUconst:
					a += p.uleb()
				}
				v = a
			case opAnd, opDiv, opMinus, opMod, opMul, opOr, opPlus, opShl, opShr, opShra, opXor,
				opEq, opGe, opGt, opLe, opLt, opNe:
				b, ok1 := pop()
				a, ok2 := pop()
				if !ok1 || !ok2 {
					return 0, corrupt(sec, int64(at), "stack underflow")
				}
				var err error
				if v, err = binop(op, a, b); err != nil {
					return 0, corrupt(sec, int64(at), "%v", err)
				}
			case opSkip, opBra:
				d := int(int16(p.u16()))
				push = false
				jump := true
				if op == opBra {
					c, ok := pop()
					if !ok {
						return 0, corrupt(sec, int64(at), "stack underflow")
					}
					jump = c != 0
				}
				if jump {
					to := p.off + d
					if to < 0 || to > len(p.b) {
						return 0, corrupt(sec, int64(at), "branch outside the expression")
					}
					p.off = to
				}
			case opNop:
				push = false
			default:
				return 0, corrupt(sec, int64(at), "DW_OP %#x not supported in call frame information", op)
			}
		}
		if p.err != nil {
			return 0, p.err
		}
		if push {
			stack = append(stack, v)
		}
	}
	if len(stack) == 0 {
		return 0, corrupt(sec, -1, "empty stack at the end")
	}
	return stack[len(stack)-1], nil
}

type exprError string

func (e exprError) Error() string { return string(e) }

func binop(op uint8, a, b uint64) (uint64, error) {
	bool2 := func(c bool) uint64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case opAnd:
		return a & b, nil
	case opOr:
		return a | b, nil
	case opXor:
		return a ^ b, nil
	case opPlus:
		return a + b, nil
	case opMinus:
		return a - b, nil
	case opMul:
		return a * b, nil
	case opDiv:
		if b == 0 {
			return 0, exprError("division by zero")
		}
		if int64(b) == -1 {
			return -a, nil
		}
		return uint64(int64(a) / int64(b)), nil
	case opMod:
		if b == 0 {
			return 0, exprError("division by zero")
		}
		return a % b, nil
	case opShl:
		if b >= 64 {
			return 0, nil
		}
		return a << b, nil
	case opShr:
		if b >= 64 {
			return 0, nil
		}
		return a >> b, nil
	case opShra:
		if b >= 64 {
			b = 63
		}
		return uint64(int64(a) >> b), nil
	case opEq:
		return bool2(a == b), nil
	case opNe:
		return bool2(a != b), nil
	case opGe:
		return bool2(int64(a) >= int64(b)), nil
	case opGt:
		return bool2(int64(a) > int64(b)), nil
	case opLe:
		return bool2(int64(a) <= int64(b)), nil
	case opLt:
		return bool2(int64(a) < int64(b)), nil
	}
	return 0, exprError("unknown operation")
}
