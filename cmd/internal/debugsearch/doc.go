// Package debugsearch holds the findings about a target's debug
// information that the debuginfo, doctor, gdb and lldb commands share:
// which debug file each module has (and where it came from), the
// debuginfod servers consulted, and the CPython debugger extensions
// found. Its JSON form is `pyattach debuginfo --json`, documented in
// cmd/pyattach/help/json.md.
//
// A Collector gathers them for a resolved target (Collect, and For, the
// shape the doctor and the planner take): the debug directories searched
// (gdb's default, pyattach's store, the configured ones, without those
// another user could change), each module's debug file in gdb's order
// through detect/debugfile and the debuginfod client, and the extensions
// through detect/pyext. Its Options carry every directory and setting:
// it reads neither the process environment nor the configuration.
//
// Its name says what it holds: the search for a target's debug
// information and what it found, beside detect/debugfile (one module's
// debug file, in gdb's order) and cmd/internal/debuginfod (the client
// that downloads from servers). `pyattach debuginfo` prints it.
package debugsearch
