package prefault

import (
	"errors"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const (
	madvPopulateRead  = 22
	madvPopulateWrite = 23
	// heapBytes is how much of the heap's first mapping is mapped in:
	// about twice what `resolve` allocates.
	heapBytes = 4 << 20
	// mapsMax bounds the read of /proc/self/maps, a few dozen lines
	// this early.
	mapsMax = 16 << 10
)

// sink keeps heapProbe's object on the heap.
var sink *[2]uintptr

func init() { run() }

func run() {
	var st syscall.Stat_t
	if syscall.Stat("/proc/self/exe", &st) != nil {
		return
	}
	buf := make([]byte, mapsMax)
	n := readFile("/proc/self/maps", buf)
	if n <= 0 || n == len(buf) {
		return
	}
	sink = new([2]uintptr)
	heap := uintptr(unsafe.Pointer(sink))
	for _, m := range parseMaps(buf[:n]) {
		switch {
		case m.dev == st.Dev && m.inode == st.Ino && !m.write:
			// Its initialised data is left out: mapping it in for
			// writing copies every page (about as slow as the faults).
			if cached(m.start, m.end) {
				madvise(m.start, m.end-m.start, madvPopulateRead)
			}
		case m.inode == 0 && m.write && m.start <= heap && heap < m.end:
			madvise(m.start, min(m.end-m.start, heapBytes), madvPopulateWrite)
		}
	}
}

// mapping is one line of /proc/PID/maps.
type mapping struct {
	start, end uintptr
	write      bool
	dev        uint64
	inode      uint64
}

// parseMaps reads /proc/PID/maps lines: "start-end perms offset
// major:minor inode [path]". A line it cannot read ends the list.
func parseMaps(b []byte) []mapping {
	var out []mapping
	rest := string(b)
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		f := strings.Fields(line)
		if len(f) < 5 {
			return out
		}
		lo, hi, ok1 := strings.Cut(f[0], "-")
		major, minor, ok2 := strings.Cut(f[3], ":")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		maj, err3 := strconv.ParseUint(major, 16, 32)
		mnr, err4 := strconv.ParseUint(minor, 16, 32)
		inode, err5 := strconv.ParseUint(f[4], 10, 64)
		if !ok1 || !ok2 || errors.Join(err1, err2, err3, err4, err5) != nil || end <= start || len(f[1]) < 2 {
			return out
		}
		out = append(out, mapping{
			start: uintptr(start), end: uintptr(end),
			write: f[1][1] == 'w',
			dev:   mkdev(maj, mnr),
			inode: inode,
		})
	}
	return out
}

// mkdev is the kernel's dev_t of major:minor, as stat gives it.
func mkdev(major, minor uint64) uint64 {
	return (major&0xfff)<<8 | (major&^0xfff)<<32 | minor&0xff | (minor&^0xff)<<12
}

// cached reports whether every page of [start, end) is in memory.
func cached(start, end uintptr) bool {
	vec := make([]byte, (end-start+uintptr(syscall.Getpagesize())-1)/uintptr(syscall.Getpagesize()))
	_, _, e := syscall.Syscall(syscall.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return false
	}
	for _, v := range vec {
		if v&1 == 0 {
			return false
		}
	}
	return true
}

func madvise(addr, n uintptr, advice int) {
	syscall.Syscall(syscall.SYS_MADVISE, addr, n, uintptr(advice))
}

// readFile reads what fits of path into buf: the bytes read, or -1.
func readFile(path string, buf []byte) int {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1
		}
		if k == 0 {
			break
		}
		n += k
	}
	return n
}
