package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"math"
	"strings"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// deletedSuffix is what the kernel appends to the path of a file that was
// unlinked while mapped.
const deletedSuffix = " (deleted)"

// File is one file mapping of the process.
type File struct {
	Start  uint64 `json:"start"`  // first address
	End    uint64 `json:"end"`    // first address after the mapping
	Offset uint64 `json:"offset"` // file offset of Start, in bytes
	// Path is the file name as the kernel (or gdb) wrote it, with a
	// " (deleted)" suffix stripped into Deleted. It is the path inside the
	// process's mount namespace.
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
	// BuildID is the hex GNU build-id read from the module's ELF header in
	// the core's memory image, or "" when the first page of the mapping
	// was not dumped, the file is not ELF, or it has no build-id note.
	BuildID string `json:"build_id,omitempty"`
}

// ParseNTFile parses the payload of an NT_FILE note: two words (the count
// of mappings and the page size), count triples of words (start, end,
// file offset in pages), then count NUL-terminated file names. Words are
// 8 bytes for ELFCLASS64 and 4 bytes for ELFCLASS32. The returned offsets
// are in bytes. Bytes after the last name are ignored.
//
// A count that the payload has no room for, a name without its NUL, a
// mapping that ends before it starts, or an offset that overflows gives an
// *elfinfo.FormatError (section "NT_FILE", the offset in desc), which
// matches elfinfo.ErrCorrupt; nothing is allocated from the count
// before it has been checked against the payload's length.
func ParseNTFile(desc []byte, bo binary.ByteOrder, class elf.Class) ([]File, error) {
	var ws uint64
	switch class {
	case elf.ELFCLASS64:
		ws = 8
	case elf.ELFCLASS32:
		ws = 4
	default:
		return nil, elfinfo.Corruptf("NT_FILE", -1, "unknown ELF class %v", class)
	}
	if bo == nil {
		return nil, elfinfo.Corruptf("NT_FILE", -1, "no byte order")
	}
	word := func(off uint64) uint64 {
		if ws == 8 {
			return bo.Uint64(desc[off:])
		}
		return uint64(bo.Uint32(desc[off:]))
	}
	n := uint64(len(desc))
	if n < 2*ws {
		return nil, elfinfo.Corruptf("NT_FILE", 0, "%d bytes hold no header", n)
	}
	count := word(0)
	pageSize := word(ws)
	// Each mapping takes three words and at least one byte of name.
	if room := (n - 2*ws) / (3*ws + 1); count > room {
		return nil, elfinfo.Corruptf("NT_FILE", 0, "claims %d mappings in %d bytes", count, n)
	}
	if pageSize == 0 && count > 0 {
		return nil, elfinfo.Corruptf("NT_FILE", int64(ws), "page size is 0")
	}
	names := desc[2*ws+count*3*ws:]
	files := make([]File, 0, count)
	for i := uint64(0); i < count; i++ {
		at := 2*ws + i*3*ws
		start, end, pgoff := word(at), word(at+ws), word(at+2*ws)
		if end < start {
			return nil, elfinfo.Corruptf("NT_FILE", int64(at), "mapping %d ends at %#x before it starts at %#x", i, end, start)
		}
		if pgoff > math.MaxUint64/pageSize {
			return nil, elfinfo.Corruptf("NT_FILE", int64(at+2*ws), "mapping %d: offset of %d pages overflows", i, pgoff)
		}
		j := bytes.IndexByte(names, 0)
		if j < 0 {
			return nil, elfinfo.Corruptf("NT_FILE", int64(n)-int64(len(names)), "%d names for %d mappings", i, count)
		}
		f := File{Start: start, End: end, Offset: pgoff * pageSize, Path: string(names[:j])}
		names = names[j+1:]
		if p, ok := strings.CutSuffix(f.Path, deletedSuffix); ok {
			f.Path, f.Deleted = p, true
		}
		files = append(files, f)
	}
	return files, nil
}
