package idcache

import "syscall"

// statTimes are a file's modification and status-change times in
// nanoseconds.
func statTimes(s *syscall.Stat_t) (mtime, ctime int64) {
	return s.Mtimespec.Nano(), s.Ctimespec.Nano()
}
