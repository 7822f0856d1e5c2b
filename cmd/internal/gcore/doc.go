// Package gcore writes an ELF core file of a live process, the way gdb's
// gcore does, holding the process stopped for as short a time as it can.
//
// Take stops every thread (cmd/internal/ptrace: PTRACE_SEIZE and
// PTRACE_INTERRUPT from one locked OS thread), and while they are stopped
// reads only what makes the snapshot: /proc/PID/smaps (the mappings and
// whether a file mapping was written), each thread's registers
// (PTRACE_GETREGSET: NT_PRSTATUS and the floating-point sets) and the
// memory the core holds, through /proc/PID/mem, into pyattach's own
// memory (up to Options.MaxBuffer; beyond that it goes to the file while
// the process is still stopped). Then it lets the process go and writes
// the file: a temporary file in the target's directory renamed into
// place (cmd/internal/safefs), so that the name holds a whole core or nothing.
// On any error, and when ctx is cancelled (SIGINT, SIGTERM), the process
// is resumed and no file is left.
//
// What the core holds, per mapping (the kernel's coredump_filter rules,
// read from /proc/PID/coredump_filter, default 0x33, as gdb honours it):
//
//   - private anonymous memory ([heap], [stack], thread stacks, [vdso],
//     malloc arenas) and shared anonymous memory (shared mmap of
//     /dev/zero, memfd, SysV shm, unlinked files): in full;
//   - private file mappings the process wrote (smaps "Anonymous" or
//     "Swap" above zero: .data, .bss, RELRO after relocation): in full;
//   - other file mappings (text, read-only data, shared files): only the
//     first page when it starts with an ELF header (bit 4, so that the
//     build-ids can be read back), with p_memsz the whole mapping, as
//     the kernel writes them: a debugger reads the rest from the file;
//   - never: mappings without read permission, VM_IO or VM_PFNMAP
//     (device memory), VM_DONTDUMP (madvise MADV_DONTDUMP), [vvar],
//     and [vsyscall] (above 2^63, out of /proc/PID/mem's reach). Each
//     is listed in Stats.Skipped with the reason, and keeps a PT_LOAD
//     with no bytes (except [vsyscall]).
//
// Pages that read as zeros are left as holes: the file is sparse, its
// size is the size gdb's gcore would write.
//
// Notes, in the kernel's order: for the main thread NT_PRSTATUS,
// NT_PRPSINFO, NT_SIGINFO (only when the thread had stopped for a signal
// of its own), NT_AUXV, NT_FILE and the floating-point sets
// (NT_FPREGSET, NT_X86_XSTATE on x86-64; NT_FPREGSET, NT_ARM_TLS on
// AArch64); for every other thread NT_PRSTATUS and its floating-point
// sets. pr_pid is the thread's id; pr_cursig the signal it stopped with,
// or 0. pr_utime and the other times, pr_sigpend and pr_sighold are 0.
//
// x86-64 is tested; AArch64 is built but untested; elsewhere Take
// returns ErrUnsupported (gdb's gcore writes cores there).
package gcore
