//go:build !linux || !(amd64 || arm64)

package gcore

import "debug/elf"

// Other architectures: Take returns ErrUnsupported.
const (
	supported = false
	machine   = elf.EM_NONE
	gregSize  = 0
)

var regSets []regSet
