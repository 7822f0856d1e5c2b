//go:build linux || darwin

package idcache

import (
	"io/fs"
	"syscall"
)

func keyOf(st fs.FileInfo) (Key, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return Key{}, false
	}
	mtime, ctime := statTimes(s)
	return Key{Dev: uint64(s.Dev), Ino: uint64(s.Ino), Size: st.Size(), Mtime: mtime, Ctime: ctime}, true
}

func ownerOf(st fs.FileInfo) (int, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(s.Uid), true
}
