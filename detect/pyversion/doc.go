// Package pyversion parses and compares CPython version strings, the
// forms pyattach meets in interpreters, file names, pyvenv.cfg files and
// its own tables:
//
//	3                       a major version alone
//	3.11                    major.minor
//	3.11.2                  major.minor.micro
//	3.13.0rc1 3.14.0a1      a PEP 440 pre-release (a, b, rc and a number)
//	3.12.0b2
//	3.11.2+                 PY_VERSION of a source build after a tag
//	3.12.1.final.0          sys.version_info joined by dots (pyvenv.cfg's
//	3.13.0.candidate.1      version_info); read as 3.12.1 and 3.13.0rc1
//	3.11d 3.13t 3.13td      ABI flags after the version, as in python3.11d
//	3.7m 3.7dm              and libpython3.13t.so
//
// ABI flags are kept apart in Version.Flags, sorted into the order
// CPython's configure appends them (as detect/pyinfo.ParseName does for
// file names): t (free-threaded, 3.13+), d (Py_DEBUG), m (pymalloc,
// before 3.8), u (wide unicode, before 3.3). A flag given twice is an
// error.
//
// Versions are ordered by their numbers, which compare as numbers (3.9 <
// 3.10), then a pre-release before its release, by tag and number
// (3.13.0a1 < 3.13.0b2 < 3.13.0rc1 < 3.13.0 < 3.13.1): semantic
// versioning's order with 3.13.0rc1 read as 3.13.0-rc.1. Missing parts
// compare as 0; among versions equal so far, Compare still orders by
// what was written
// (3.11 < 3.11.0 < 3.11.0+, flags last) so that Compare is 0 only for
// versions whose String is the same.
//
// Besides Major, Minor, Patch, MajorMinor ("3.11"), AtLeast and Compare,
// a Version says whether all three numbers were written (Exact) and
// whether it can name a tag in CPython's repository (Tagged: no + and no
// flags); MajorMinorOf is the shortcut for callers that only hold a
// string.
//
// Anything else (leading "v", spaces, leading zeros, a fourth number,
// a repeated flag, numbers of more than 9 digits) is rejected with a
// *SyntaxError. The package reads strings only: finding a version inside
// a binary or a path is its callers' job.
package pyversion
