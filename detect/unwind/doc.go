// Package unwind walks the C stack of a thread from its registers and
// its stack memory, in Go, with the call frame information of the
// modules mapped in the process: no debugger, and no module's DWARF
// beyond .debug_frame (read only where no .eh_frame entry covers a pc).
//
// What it knows:
//
//   - .eh_frame_hdr's binary search table (found by section or by
//     PT_GNU_EH_FRAME), else a linear scan of .eh_frame (indexed once),
//     else .debug_frame from the module or its separate debug file;
//   - CIEs and FDEs, 32- and 64-bit, with augmentations z, R, P, L, S
//     (and AArch64's B, G), and the pointer encodings DW_EH_PE_* (absptr,
//     (u|s)data2/4/8, (u|s)leb128, pcrel, datarel, textrel, funcrel,
//     aligned, indirect);
//   - every DW_CFA_* instruction of DWARF 5 and GNU's args_size and
//     negative_offset_extended, with a DWARF expression evaluator
//     (bounded: 1000 operations, 64 values deep) for def_cfa_expression,
//     expression and val_expression: the PLT's CFA and glibc's signal
//     trampoline (__restore_rt, augmentation S) are walked through;
//   - when a pc has no call frame information, the frame pointer chain,
//     if it looks sane (above the stack pointer, aligned, within 16 MiB,
//     the saved one above it, the return address in a module); such
//     frames say so (ViaFramePointer).
//
// A walk stops at the stack's end (the return address column is
// undefined, as glibc marks _start and clone3, or a return address of
// 0), or early, saying why (Trace.End): a pc in no module, no call frame
// information, a caller's stack pointer not above its callee's, MaxDepth
// frames, a read past the captured stack bytes.
//
// Use (cmd/internal/ptrace captures; dump's nativeUnwinder builds the
// Unwinder over the same mappings and files as its nativesym table):
//
//	u := unwind.New(regions, files) // nativesym.Region, nativesym.Files
//	defer u.Close()
//	if lo, hi, img, err := ptrace.ReadVDSO(mem, maps); err == nil && hi != 0 {
//		u.AddVDSO(lo, hi, img)
//	}
//	stopped, _ := ptrace.Stop(ctx, procRoot, pid)
//	stacks, _ := stopped.Capture(mem, maps, 0) // registers + stack bytes
//	stopped.Resume()                           // walk after resuming
//	for _, st := range stacks {
//		tr := u.Unwind(st.Regs, &st.Stack)
//		for _, f := range tr.Frames {
//			fn := table.Lookup(f.LookupPC()) // PC-1 for a return address
//			...
//		}
//		// tr.End says why the walk stopped; !tr.End.Complete() is a
//		// stack cut short (EndTruncated: the capture's limit).
//	}
//
// An Unwinder caches each module's tables (by path) for its lifetime:
// one process. The files it reads are untrusted: every section is
// bounded (256 MiB), every entry's length checked against its section,
// every program bounded by its bytes and a remember_state depth of 64;
// bad input is a *formaterr.Error of kind ErrCorrupt, never a panic.
//
// Registers are by DWARF number (Regs); ParsePRStatus reads them from
// the NT_PRSTATUS set that PTRACE_GETREGSET and cores hold. x86-64 is
// tested against gdb; AArch64 is designed for (x29/x30, pointer
// authentication stripped) but untested.
package unwind
