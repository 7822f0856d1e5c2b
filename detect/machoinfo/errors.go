package machoinfo

import (
	"errors"

	"github.com/pyattach/pyattach/detect/formaterr"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNotMachO means the input starts with neither a Mach-O nor a
	// universal (fat) magic number.
	ErrNotMachO = errors.New("not a Mach-O file")
	// ErrCorrupt means the Mach-O structures are truncated or
	// inconsistent; the error is a *FormatError.
	ErrCorrupt = errors.New("corrupt or truncated Mach-O file")
	// ErrNoUUID means an architecture has no LC_UUID load command, so
	// no .dSYM can be proved to belong to it.
	ErrNoUUID = errors.New("no LC_UUID load command")
	// ErrNoArch means a universal file does not hold the architecture
	// asked for.
	ErrNoArch = errors.New("no such architecture in the file")
)

// FormatError reports bad Mach-O input: a *formaterr.Error whose Kind
// is ErrCorrupt, the type elfinfo.FormatError is too. Arch is the
// architecture whose slice was being parsed ("" for the fat header or a
// thin file not yet identified); Section names the structure ("fat
// header", "Mach-O header", "load commands", "LC_UUID", "segment
// __LINKEDIT", "symbol table"); Off is in the file (for a fat file's
// slice, from the start of the whole file).
type FormatError = formaterr.Error

// corruptf returns a *FormatError; an error wrapped with %w becomes its
// Err.
func corruptf(arch, where string, off int64, format string, args ...any) *FormatError {
	return formaterr.Newf(ErrCorrupt, arch, where, off, format, args...)
}
