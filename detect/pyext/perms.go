package pyext

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// permWarnings says who other than the current user (uid) and root can
// change the file at host path p, or replace it through its directory
// or the directory of the symbolic link that was found (linkDir); gdb
// will run it. shown is the path named in the warnings.
func permWarnings(p, linkDir, shown string, uid int) []string {
	var out []string
	st, err := os.Stat(p)
	if err != nil {
		return nil
	}
	out = append(out, ownerWarnings(st, "", shown, uid)...)
	dirs := []string{filepath.Dir(p)}
	if linkDir != "" && linkDir != dirs[0] {
		dirs = append(dirs, linkDir)
	}
	for _, d := range dirs {
		dst, err := os.Stat(d)
		if err != nil {
			continue
		}
		out = append(out, ownerWarnings(dst, "directory ", d, uid)...)
	}
	return out
}

func ownerWarnings(st fs.FileInfo, what, shown string, uid int) []string {
	var out []string
	mode := st.Mode()
	// A sticky directory (/tmp) lets no one but the owner replace a file.
	sticky := mode.IsDir() && mode&fs.ModeSticky != 0
	var by string
	switch perm := mode.Perm(); {
	case sticky:
	case perm&0o020 != 0 && perm&0o002 != 0:
		by = "its group and by others"
	case perm&0o020 != 0:
		by = "its group"
	case perm&0o002 != 0:
		by = "others"
	}
	if by != "" {
		out = append(out, fmt.Sprintf("%s%s is writable by %s (it will be executed by gdb)", what, shown, by))
	}
	if owner, ok := fileOwner(st); ok && owner != 0 && owner != uid {
		out = append(out, fmt.Sprintf("%s%s is writable by uid %d, its owner (it will be executed by gdb)", what, shown, owner))
	}
	return out
}
