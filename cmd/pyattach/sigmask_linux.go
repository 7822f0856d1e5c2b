package main

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// unblockSignals unblocks sigs on the calling (locked) OS thread.
func unblockSignals(sigs ...syscall.Signal) {
	var set unix.Sigset_t
	for _, s := range sigs {
		set.Val[(s-1)/64] |= 1 << ((s - 1) % 64)
	}
	unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
}
