package buildid

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
)

// ErrInvalid is wrapped by the errors of Parse.
var ErrInvalid = errors.New("invalid build-id")

// Bounds of a build-id in bytes. elfutils' debuginfod client and server
// refuse more than 64 bytes; gdb names a one-byte id .build-id/xx/.debug.
const (
	MinBytes = 1
	MaxBytes = 64
)

// ID is a GNU build-id in lowercase hexadecimal, as gdb and debuginfod
// spell it. The zero ID is "" and is not Valid.
type ID string

// Parse returns s as an ID, or an error wrapping ErrInvalid unless s is
// lowercase hexadecimal of MinBytes to MaxBytes whole bytes.
func Parse(s string) (ID, error) {
	if len(s) < 2*MinBytes || len(s) > 2*MaxBytes || len(s)%2 != 0 {
		return "", fmt.Errorf("%w %q: want %d to %d lowercase hex digits, an even number", ErrInvalid, s, 2*MinBytes, 2*MaxBytes)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("%w %q: want lowercase hex digits", ErrInvalid, s)
		}
	}
	return ID(s), nil
}

// Valid reports whether s parses as an ID.
func Valid(s string) bool {
	_, err := Parse(s)
	return err == nil
}

// FromBytes returns the ID of the raw bytes of a build-id note. It is
// not Valid when b is empty or longer than MaxBytes.
func FromBytes(b []byte) ID { return ID(hex.EncodeToString(b)) }

// Valid reports whether id is lowercase hex of MinBytes to MaxBytes bytes.
func (id ID) Valid() bool { return Valid(string(id)) }

// String returns the hex digits.
func (id ID) String() string { return string(id) }

// Path returns gdb's place under dir for the file of id with the given
// suffix: dir/.build-id/xx/rest+suffix, where xx is the first byte. It
// returns "" for an id that is not Valid, so that no path is ever built
// from one.
func (id ID) Path(dir, suffix string) string {
	if !id.Valid() {
		return ""
	}
	return filepath.Join(Tree(dir), string(id[:2]), string(id[2:])+suffix)
}

// Tree returns dir/.build-id, the root of gdb's build-id tree in the
// debug-file directory dir.
func Tree(dir string) string { return filepath.Join(dir, ".build-id") }

// DebugPath returns dir/.build-id/xx/rest.debug, the separate debug file
// gdb and lldb look for; "" for an id that is not Valid.
func (id ID) DebugPath(dir string) string { return id.Path(dir, ".debug") }
