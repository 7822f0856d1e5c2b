// Package dsym finds the .dSYM bundle of a Mach-O module the way lldb
// does, and proves it belongs to the module.
//
// A .dSYM is a directory, X.dSYM/Contents/Resources/DWARF/X, whose
// DWARF file (Mach-O type MH_DSYM, one slice per architecture) repeats
// the LC_UUID of the module it was made from. For each architecture of
// the module, candidates are tried in lldb's order and the first whose
// slice of that architecture has the module's UUID is taken:
//
//  1. X.dSYM beside the module;
//  2. X.dSYM in each debug directory the user configures (lldb's
//     target.debug-file-search-paths; pyattach's --debug-dir and
//     config.toml debug_dirs);
//  3. pyattach's store, keyed by UUID: <store>/dsym/<UUID>/X.dSYM
//     (StorePath), where `pyattach symbols install` puts the bundles of
//     a macosx debug-symbols zip.
//
// A candidate with another UUID is recorded as rejected (as a build-id
// mismatch is for ELF), never taken. A bundle whose DWARF file is, or is
// reached through, a symbolic link that leaves the bundle's directory is
// refused (ErrOutside): a bundle from a zip or another user's tree must
// not make pyattach or lldb read a file elsewhere.
//
// Without a .dSYM, a module whose debug map names object files that still
// exist has its DWARF there (ViaDebugMap), which is how lldb reads a
// build tree's modules before dsymutil ran.
package dsym
