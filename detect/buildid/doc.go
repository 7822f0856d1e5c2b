// Package buildid knows what a GNU build-id looks like and where gdb
// looks for the separate debug file it names.
//
// An ID is the build-id as gdb, lldb, elfutils and debuginfod write it:
// lowercase hexadecimal of whole bytes, 1 to 64 of them (elfutils' limit).
// Every build-id read from a file, a manifest, a cache or a command line
// goes through Parse (or Valid) before it becomes part of a path or a URL,
// so that one rule decides: uppercase digits, which gdb's .build-id tree
// never matches, and odd lengths are refused.
//
// ID.Path and ID.DebugPath give gdb's layout, <dir>/.build-id/xx/rest.debug,
// the one place that layout is spelled.
package buildid
