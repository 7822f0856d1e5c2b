// Package srcmap knows where the source files named in a module's DWARF
// were built, and how to map them onto source trees on this machine.
//
// A native frame points at a path that existed only on the build machine:
// an extension built in a manylinux container
// (/project/build/cmake.linux-x86_64-cpython-313/.../_deps/echion-src/echion/frame.cc),
// pyenv's deleted build tree (/tmp/python-build.20260509073544.228/Python-3.12.1/Python/ceval.c),
// Debian's reproducible build (/build/reproducible-path/python3.11-3.11.2/build-static/../Modules/timemodule.c).
// Missing picks the paths that do not exist here, GroupPaths groups them
// by build layout, IndexRoots indexes the user's source trees by file name,
// and Infer finds, per group, the prefix rules (gdb substitute-path, lldb
// target.source-map) that make the files exist, verifying every rule by
// opening the rewritten paths.
//
// # Grouping
//
// Known layouts group at the root of the source tree they name:
//
//   - cmake-fetchcontent: .../_deps/<name>-src (the innermost one), even
//     inside another layout;
//   - pyenv: /tmp/python-build.<stamp>/<Name>-<version> (Python-X.Y.Z is
//     "cpython");
//   - debian: /build/reproducible-path/<pkg>-<version>, and the older
//     /build/<pkg>-<random>/<pkg>-<version>;
//   - fedora: /builddir/build/BUILD/<name>-<version> (through a
//     "<nvr>-build" directory when rpm adds one) and
//     /usr/src/debug/<name>-<version>-<release>.<arch>;
//   - conda: <pkg>_<timestamp>/work ($SRC_DIR) and its _h_env*/_build_env
//     siblings, wherever conda-build put them (/croot, conda-bld,
//     build_artifacts);
//   - scikit-build: cibuildwheel's /project mount: /project/build/<dir>,
//     /project/_skbuild/<platform>/cmake-build, else /project itself.
//
// Other paths are clustered: two files fall in one cluster when their
// directories agree on the first two components (three under /home,
// /Users, /usr/src, /opt, /srv, /builds and /__w; five under
// /home/runner/work, GitHub's <repo>/<repo> checkout), and clusters
// whose key is an ancestor of another's are merged. A cluster's prefix is
// the longest common directory of its files, cut before the first ".."
// and raised until no file's ".." climbs above it.
//
// # Inference
//
// For each file of a group, the longest suffix of its path below the
// group's prefix that names a file under a source root gives a candidate
// mapping (the part before the suffix onto the local directory before
// it). Candidates are tried greedily, the one resolving most files first,
// until no candidate resolves more; a root named like the group
// (--source echion=DIR) is tried before unnamed roots, and roots named
// otherwise serve only groups of unknown name. Rules never map above a
// group's prefix.
//
// A debugger rewrites the path as recorded, ".." included, and the
// kernel resolves ".." only through directories that exist. Debian's
// "<tree>/build-static/../Modules/x.c" therefore cannot be mapped by
// "<tree>/build-static" -> "<src>/build-static" when the source tree has
// no build-static; Infer maps it onto an existing directory at the same
// depth ("<src>/Include", so "<src>/Include/../Modules/x.c" resolves),
// and adds "<tree>" -> "<src>" for paths without ".." and for debuggers
// that clean ".." before mapping (lldb). Rules are verified with the
// exists function on the rewritten, uncleaned path; pass an os.Stat based
// one (FileExists) so that ".." is resolved by the file system.
//
// Rules are returned most specific first (a rule whose From lies under
// another's comes before it), since gdb and lldb apply the first rule
// that matches.
package srcmap
