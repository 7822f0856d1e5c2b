package gcore

import (
	"strings"

	"github.com/pyattach/pyattach/detect/proc"
)

// coredump_filter bits (core(5)).
const (
	filterAnonPrivate = 1 << 0
	filterAnonShared  = 1 << 1
	filterFilePrivate = 1 << 2
	filterFileShared  = 1 << 3
	filterELFHeaders  = 1 << 4
	filterHugePrivate = 1 << 5
	filterHugeShared  = 1 << 6
	// DefaultFilter is the kernel's default coredump_filter.
	DefaultFilter = 0x33
)

// What the core holds of one mapping.
type extent int

const (
	dumpNone   extent = iota
	dumpHeader        // the first page, if it is an ELF header
	dumpAll
	omit // not even a PT_LOAD
)

// Reasons a mapping's bytes are not in the core (Skip.Reason).
const (
	ReasonNoRead    = "not readable"
	ReasonIO        = "device memory (VM_IO or VM_PFNMAP)"
	ReasonDontDump  = "excluded by the process (MADV_DONTDUMP)"
	ReasonVvar      = "[vvar]: kernel data"
	ReasonVsyscall  = "[vsyscall]: the kernel's fixed page"
	ReasonFile      = "unmodified file mapping: its bytes are in the file"
	ReasonFilter    = "excluded by /proc/PID/coredump_filter"
	ReasonReadError = "could not be read"
)

// decide says what the core holds of a and, when not all of it, why.
func decide(a proc.Area, filter uint64) (extent, string) {
	switch {
	case a.Path == "[vsyscall]" || a.Start >= 1<<63:
		return omit, ReasonVsyscall
	case a.Path == "[vvar]" || strings.HasPrefix(a.Path, "[vvar_"):
		return dumpNone, ReasonVvar
	case a.Flag("io") || a.Flag("pf"):
		return dumpNone, ReasonIO
	case a.Flag("dd"):
		return dumpNone, ReasonDontDump
	case len(a.Perms) < 4 || a.Perms[0] != 'r':
		return dumpNone, ReasonNoRead
	}
	shared := a.Perms[3] == 's'
	if a.Flag("ht") {
		if shared && filter&filterHugeShared != 0 || !shared && filter&filterHugePrivate != 0 {
			return dumpAll, ""
		}
		return dumpNone, ReasonFilter
	}
	file := strings.HasPrefix(a.Path, "/")
	if shared {
		// A shared mapping of a file with no name left (shared anonymous
		// memory is /dev/zero (deleted), memfd and SysV segments too) is
		// anonymous: its bytes are nowhere else.
		if !file || a.Deleted {
			if filter&filterAnonShared != 0 {
				return dumpAll, ""
			}
			return dumpNone, ReasonFilter
		}
		if filter&filterFileShared != 0 {
			return dumpAll, ""
		}
		return header(a, filter)
	}
	if !file {
		if filter&filterAnonPrivate != 0 {
			return dumpAll, ""
		}
		return dumpNone, ReasonFilter
	}
	// A private file mapping the process wrote holds its own pages.
	if (a.Anonymous > 0 || a.Swap > 0) && filter&filterAnonPrivate != 0 {
		return dumpAll, ""
	}
	if filter&filterFilePrivate != 0 {
		return dumpAll, ""
	}
	return header(a, filter)
}

// header is the first page of a file mapping at offset 0, when the
// filter asks for ELF headers (checked once the page is read).
func header(a proc.Area, filter uint64) (extent, string) {
	if a.Offset == 0 && filter&filterELFHeaders != 0 {
		return dumpHeader, ReasonFile
	}
	return dumpNone, ReasonFile
}
