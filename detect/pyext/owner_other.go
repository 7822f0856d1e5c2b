//go:build !unix

package pyext

import "io/fs"

// fileOwner is unknown on systems without Unix owners.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
