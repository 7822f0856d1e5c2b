// Package symbols installs split debug-symbol packages of Python
// distributions where gdb and lldb find them, without touching the
// site-packages directory they belong to.
//
// dd-trace-py builds its wheels with -g, then moves the DWARF out of
// every native extension: objcopy --only-keep-debug X.so X.so.debug,
// strip -g X.so, objcopy --add-gnu-debuglink=X.so.debug X.so. The
// stripped wheel is what pip installs; the debug files are shipped apart
// as <wheel-stem>-debug-symbols.zip, holding <path inside the
// wheel>/<name>.so.debug. scripts/make-debug-zip.sh does the same for any
// wheel or installed tree.
//
// What this package knows:
//
//   - Wheel names (PEP 427): {name}-{version}(-{build})?-{python}-{abi}-
//     {platform}; distribution names compare after PEP 503 normalisation
//     ("dd_trace" is "dd-trace"); an installed distribution is
//     <site-packages>/<name>-<version>.dist-info, whose RECORD (a CSV file
//     of path,hash,size rows) lists its files relative to site-packages.
//   - Where site-packages is: <venv>/lib/pythonX.Y/site-packages, and for
//     a Debian interpreter /usr/local/lib/pythonX.Y/dist-packages and
//     /usr/lib/python3/dist-packages.
//   - How gdb and lldb find a separate debug file: by build-id, as
//     <debug-dir>/.build-id/xx/rest.debug (buildid.ID.DebugPath), in
//     every debug-file directory (gdb's "set debug-file-directory",
//     lldb's target.debug-file-search-paths). gdb checks that the file's build-id
//     equals the object's. The .gnu_debuglink CRC-32 (IEEE, over the
//     whole debug file) proves a debug file belongs to a stripped object
//     as well.
//
// A Store is a private debug directory in that build-id layout plus a
// manifest.json recording each install (zip and its SHA-256, the
// distribution, and for each debug file the installed .so, its build-id,
// its place in the store and how it was verified). Install reads a zip
// with bounded sizes, refuses entries that could escape the store,
// checks every debug file against the installed .so by CRC-32 and
// build-id, and moves only verified files into place, through temporary
// files, so that a failure leaves nothing half-written. Each file follows
// safefs's durability rule (flushed, renamed with safefs.Rename, its
// directory flushed); what the store adds is the transaction over the
// set: a file it replaces is kept aside (<tmp>.old) until the manifest is
// written, and put back when any later step fails.
//
// Directories (the store, site-packages) are always parameters; nothing
// here reads the environment.
//
// It installs into pyattach's own store, for the symbols command alone:
// a writer of the command line, not a mapping of environments, so it
// sits under cmd/internal and reads venv's findings (venv.Env) from
// there.
package symbols
