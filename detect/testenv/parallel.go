package testenv

import "testing"

// HeavySlots is how many subtests marked with Parallel run at once in
// one test binary, at most: go test's -parallel (GOMAXPROCS by default)
// bounds them too. Such a subtest drives gdb, lldb and an interpreter,
// mostly on the CPU (gdb reading DWARF): on 2 cores, 4 at once were no
// faster than 2, and the roots' subtests slower.
const HeavySlots = 4

var heavy = make(chan struct{}, HeavySlots)

// Parallel runs the subtest t alongside the other subtests of its test
// (t.Parallel), at most HeavySlots of them at once. Use it for one
// interpreter's or one root's checks: such a subtest must share nothing
// it changes with the others (its own temporary directories and
// processes; no Setenv, Chdir or fixed port), and its parent must not
// rely on it having ended before the parent's own body returns (t.Cleanup
// runs after it, a defer does not).
func Parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
	heavy <- struct{}{}
	t.Cleanup(func() { <-heavy })
}
