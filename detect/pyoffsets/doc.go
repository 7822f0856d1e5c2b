// Package pyoffsets knows where CPython keeps what a memory-only stack
// walker reads: the offsets of struct members from _PyRuntime down to
// code objects and strings, per minor version and ABI flags.
//
// From 3.13 on the interpreter carries most of these itself
// (_Py_DebugOffsets at the start of _PyRuntime). For 3.7 to 3.12, and for
// what _Py_DebugOffsets leaves out, the tables in offsets.json are
// generated from the DWARF of real builds by FromDWARF (go generate runs
// internal/gen over the builds it discovers on the machine), and a test
// regenerates them from the builds found and fails on any drift.
package pyoffsets

//go:generate go run ./internal/gen -o offsets.json
