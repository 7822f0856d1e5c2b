package core

import (
	"bytes"
	"debug/elf"
	"io"
	"math"
	"sort"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// segment is the dumped part of one PT_LOAD of the core: memory
// [vaddr, vaddr+filesz) is stored at file offset off. The rest of the
// segment (up to memsz) was not dumped.
type segment struct {
	vaddr, filesz, off uint64
}

// maxImageReads bounds the bytes read from the memory image in all. Real
// cores need a few KB per module; a hostile core whose PT_LOADs all point
// at the same bytes must not make Read spend more.
const maxImageReads = 64 << 20

// maxModuleNotes bounds the PT_NOTE segments read per module.
const maxModuleNotes = 16

// image is the memory of the process as the core holds it.
type image struct {
	r      io.ReaderAt
	segs   []segment // sorted by vaddr
	budget int       // bytes left to read
}

func newImage(r io.ReaderAt, progs []prog) *image {
	img := &image{r: r, budget: maxImageReads}
	for _, p := range progs {
		if p.typ != elf.PT_LOAD || p.filesz == 0 {
			continue
		}
		if p.off > math.MaxInt64 || p.filesz > math.MaxInt64-p.off {
			continue
		}
		fs := p.filesz
		if fs > math.MaxUint64-p.vaddr {
			fs = math.MaxUint64 - p.vaddr
		}
		img.segs = append(img.segs, segment{vaddr: p.vaddr, filesz: fs, off: p.off})
	}
	sort.SliceStable(img.segs, func(i, j int) bool { return img.segs[i].vaddr < img.segs[j].vaddr })
	return img
}

// truncated reports whether the file ends before the last dumped byte.
func (m *image) truncated() bool {
	var last uint64
	for _, s := range m.segs {
		if e := s.off + s.filesz; e > last {
			last = e
		}
	}
	if last == 0 {
		return false
	}
	var b [1]byte
	n, _ := m.r.ReadAt(b[:], int64(last-1))
	return n != 1
}

// find returns the segment holding addr, if it was dumped.
func (m *image) find(addr uint64) (segment, bool) {
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].vaddr > addr }) - 1
	// Hostile cores may have overlapping segments; look back a little for
	// one that covers addr.
	for k := 0; i >= 0 && k < 4; i, k = i-1, k+1 {
		s := m.segs[i]
		if addr-s.vaddr < s.filesz {
			return s, true
		}
	}
	return segment{}, false
}

// readUpTo reads up to n bytes of memory at addr and stops early at the
// first byte that was not dumped. n must be small: the buffer is
// allocated up front.
func (m *image) readUpTo(addr uint64, n int) []byte {
	if n > m.budget {
		return nil
	}
	m.budget -= n
	b := make([]byte, 0, n)
	for len(b) < n {
		s, ok := m.find(addr)
		if !ok {
			break
		}
		chunk := min(uint64(n-len(b)), s.filesz-(addr-s.vaddr))
		start := len(b)
		b = b[:start+int(chunk)]
		got, _ := m.r.ReadAt(b[start:], int64(s.off+(addr-s.vaddr)))
		b = b[:start+got]
		if uint64(got) != chunk || chunk > math.MaxUint64-addr {
			break
		}
		addr += chunk
	}
	return b
}

// read reads exactly n bytes of memory at addr.
func (m *image) read(addr uint64, n int) ([]byte, bool) {
	b := m.readUpTo(addr, n)
	return b, len(b) == n
}

// cstring reads a NUL-terminated string of at most max bytes at addr.
func (m *image) cstring(addr uint64, max int) (string, bool) {
	b := m.readUpTo(addr, max)
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", false
	}
	return string(b[:i]), true
}

// files deduplicates NT_FILE mappings by path (and deleted mark), keeping
// the mapping with the lowest Start, sorted by Start, and sets each one's
// BuildID from the first of the path's offset-0 mappings, in address
// order, whose ELF header and build-id note the core holds.
func (m *image) files(all []File) []File {
	byPath := map[string][]File{}
	var order []string
	for _, f := range all {
		k := rawPath(f)
		if _, ok := byPath[k]; !ok {
			order = append(order, k)
		}
		byPath[k] = append(byPath[k], f)
	}
	out := make([]File, 0, len(order))
	looked := 0
	for _, k := range order {
		same := byPath[k]
		sort.SliceStable(same, func(i, j int) bool { return same[i].Start < same[j].Start })
		f := same[0]
		tries := 0
		for _, g := range same {
			if g.Offset != 0 {
				continue
			}
			if tries == maxHeadersPerPath || looked == maxModules {
				break
			}
			tries++
			looked++
			if id := m.moduleBuildID(g, same); id != "" {
				f.BuildID = id
				break
			}
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// moduleBuildID reads the GNU build-id of the ELF module whose file
// offset 0 is mapped by f, from the ELF header, program headers and
// PT_NOTE segments the core holds. same are the NT_FILE mappings of the
// same file, used to find where a file offset of the module lies in
// memory. It returns "" when any part is missing or malformed.
func (m *image) moduleBuildID(f File, same []File) string {
	id, ok := m.read(f.Start, 64)
	if !ok {
		// A 32-bit header is 52 bytes; accept a dump that ends there.
		if id, ok = m.read(f.Start, 52); !ok {
			return ""
		}
	}
	h, err := parseHeader(id)
	if err != nil || h.phnum == 0 || h.phnum == 0xffff || h.phentsize < h.minPhentsize() {
		return ""
	}
	size := h.phnum * h.phentsize
	if size > maxModulePhdrs {
		return ""
	}
	at, ok := fileAddr(f, same, h.phoff, size)
	if !ok {
		return ""
	}
	ph, ok := m.read(at, int(size))
	if !ok {
		return ""
	}
	tried := 0
	for i := uint64(0); i < h.phnum && tried < maxModuleNotes; i++ {
		p := h.parseProg(ph[i*h.phentsize:])
		if p.typ != elf.PT_NOTE || p.filesz == 0 || p.filesz > maxModuleNote {
			continue
		}
		tried++
		at, ok := fileAddr(f, same, p.off, p.filesz)
		if !ok {
			continue
		}
		b, ok := m.read(at, int(p.filesz))
		if !ok {
			continue
		}
		notes, _ := elfinfo.ParseNotes(b, h.bo) // use what parsed before an error
		if id := elfinfo.NotesBuildID(notes); id != "" {
			return id
		}
	}
	return ""
}

// fileAddr returns the address where bytes [off, off+n) of the file that
// first is the offset-0 mapping of are mapped: in first itself, else in
// the nearest later mapping among same (mappings of that file) that
// covers them.
func fileAddr(first File, same []File, off, n uint64) (uint64, bool) {
	covers := func(f File) bool {
		return f.Offset <= off && off-f.Offset <= f.End-f.Start && n <= f.End-f.Start-(off-f.Offset)
	}
	if covers(first) {
		return first.Start + off, true
	}
	best, found := File{}, false
	for _, f := range same {
		if f.Start < first.Start || !covers(f) {
			continue
		}
		if !found || f.Start < best.Start {
			best, found = f, true
		}
	}
	if !found {
		return 0, false
	}
	return best.Start + (off - best.Offset), true
}
