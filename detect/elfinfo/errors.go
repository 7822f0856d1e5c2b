package elfinfo

import (
	"errors"

	"github.com/pyattach/pyattach/detect/formaterr"
)

// FormatError reports bad ELF input (an ELF file, its notes and DWARF,
// a core's NT_FILE note): a *formaterr.Error whose Kind is ErrCorrupt,
// the type machoinfo.FormatError is too. Section names what was being
// parsed (".gnu_debuglink", "PT_NOTE", "NT_FILE", "symbol table"); Off is
// in the file when the parser reads a file, in the bytes it was handed
// when it parses bytes.
type FormatError = formaterr.Error

// Corruptf returns a *FormatError for section at offset off (-1 when
// unknown) with the message fmt.Sprintf(format, args...); an error
// wrapped with %w becomes its Err.
func Corruptf(section string, off int64, format string, args ...any) *FormatError {
	return formaterr.Newf(ErrCorrupt, "", section, off, format, args...)
}

// atOffset adds base, the file offset of the bytes a parser was handed,
// to the offset of the *FormatError in err's chain.
func atOffset(err error, base uint64) error {
	var fe *FormatError
	if errors.As(err, &fe) && fe.Off >= 0 {
		fe.Off += int64(base)
	}
	return err
}
