//go:build !linux

package main

import "syscall"

// unblockSignals does nothing: golang.org/x/sys/unix offers no
// pthread_sigmask on macOS without cgo. (The blocked mask was seen on
// Linux; it has not been checked on macOS.)
func unblockSignals(sigs ...syscall.Signal) {}
