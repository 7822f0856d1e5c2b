// Package dump is the work of `pyattach dump`: it resolves a PID or a
// core to its interpreter, computes _PyRuntime's address from the ELF
// symbol table and the mappings (no debug information), has gdbgen write
// the gdb script (plan.Dump), runs gdb in batch mode through an injected
// Runner, parses the JSON the walker writes (ParseWalker) and prints it
// as text (Render: omitted-frame and partial-stack lines, everything the
// target controls escaped) or as JSON (Output). RunTree is dump
// --subprocesses: Run for a PID and each Python process below it
// (proc.Tree), one after the other, their outputs kept apart.
//
// Everything it needs from outside comes through Services: the proc
// root, the environment, the output streams, gdb's path, the walker's
// and the private work directory, the plan of `pyattach gdb` for
// --native, and the Runner (the import rules forbid os/exec here).
// It adds no hints: its errors are typed (*Error, with a Kind, and
// ErrPartial for a walk that stopped at its budget) for the command to
// explain.
package dump
