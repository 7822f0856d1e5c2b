//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the processor time pyattach has used so far (user and
// system), or 0 when the system does not say.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
