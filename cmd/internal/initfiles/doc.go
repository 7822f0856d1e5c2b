// Package initfiles reads and edits the files `pyattach init` writes
// into or beside: the user's gdb and lldb init files (which one the
// debugger reads, whether a trust line is there, adding it through
// links and directories only the user controls) and VS Code's
// launch.json (read as JSONC: comments and trailing commas, StripJSONC),
// where pyattach's attach configurations replace earlier ones, edited in
// place so that its comments stay (MergeJSONC). The
// command decides what to write and prints; errors are for it to
// explain (InvalidJSONError).
package initfiles
