// Package core knows what an ELF core file says about the process it came
// from: the process ID, its comm and command line (NT_PRPSINFO), the files
// it had mapped (NT_FILE), the executable, the GNU build-id of every
// mapped ELF module whose first page is in the core, and each thread's
// id and general registers (NT_PRSTATUS), from which ThreadSyscall
// derives the system call the thread was in, as /proc says of a live
// thread (x86-64: orig_rax, rdi and the instruction at rip; AArch64: x8
// and an svc before pc).
//
// The executable is found from the core alone, most reliable first: the
// NT_FILE mapping that holds the program's entry point (AT_ENTRY from
// NT_AUXV); the string at AT_EXECFN, read from the core's memory image;
// the first mapped file whose base name matches the comm.
//
// Build-ids are read the way gdb and eu-unstrip read them: Linux dumps the
// first page of every file-backed mapping that starts with an ELF header
// (coredump_filter bit 4, on by default), and gcore does the same, so for
// each mapping at file offset 0 the module's ELF header, program headers
// and PT_NOTE segment are read back from the core's PT_LOAD segments.
//
// Read takes an io.ReaderAt and never trusts a size the file claims: every
// read is bounded, and a buffer grows only as far as the file really has
// bytes. ParseNTFile is a pure parser over the NT_FILE note payload.
// Errors are checked with errors.Is against ErrNotCore (an ELF file that
// is not a core), elfinfo.ErrNotELF and elfinfo.ErrCorrupt; bad input is
// an *elfinfo.FormatError naming the header, segment or note ("PT_NOTE",
// "NT_FILE") and the offset.
package core
