// Package planner builds the plan.Plan a debugger command line needs:
// it resolves what the command line opens (a process, a program, a
// core's executable), gathers its debug information through an injected
// collector, and decides what the debugger is given: the program file
// (the real interpreter, or none for a deleted or hidden one), the
// sysroot of a container, libthread_db, the debug directories and the
// symbol files the debugger would not find alone, whether the CPython
// extension is left to gdb's auto-load or sourced, the stack walker and
// fast mode.
//
// It touches the file system to stat and resolve the paths it decides
// on and has walkerdir write the walker into the data directory it is
// given; it
// never reads the process environment, prints or adds hints: errors are
// typed (core.OpenError, walkerdir.DirError) for the command to explain, and
// warnings go to Options.Warn.
package planner
