package gcore

// testHookStopped, when set, runs right after every thread is stopped.
var testHookStopped func()

// SetStoppedHook makes Take call f right after it stopped the process
// (for tests: to look at it stopped, or cancel there). It returns the
// function that removes the hook.
func SetStoppedHook(f func()) (restore func()) {
	old := testHookStopped
	testHookStopped = f
	return func() { testHookStopped = old }
}
