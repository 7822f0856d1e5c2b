package elfinfo

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/pyattach/pyattach/detect/saferead"
)

// ErrNoLoad means an ELF file has no PT_LOAD segment to compare.
var ErrNoLoad = errors.New("no loadable segment")

// maxLoadBytes bounds the bytes LoadDigest hashes (the file contents of
// every PT_LOAD segment together).
const maxLoadBytes = 4 << 30

// LoadDigest returns the hex SHA-256 of what the ELF file f (parsed by
// NewFile from r) loads into memory: each PT_LOAD segment's placement
// (virtual address, file and memory sizes, flags) and file contents, in
// program header order. It identifies a build that carries no GNU
// build-id: strip and objcopy --only-keep-debug leave the loadable
// segments alone, so a stripped file and the unstripped build it came
// from have the same digest. The ELF header's section-header fields
// (e_shoff, e_shnum, e_shstrndx) and the program header table, which
// the first segment usually covers and which strip and objcopy rewrite
// (a PT_NOTE of a removed note section is zeroed), are hashed as zeros:
// the PT_LOAD entries of the table are hashed on their own.
func LoadDigest(f *elf.File, r io.ReaderAt) (digest string, err error) {
	defer RecoverCorrupt(&err, "PT_LOAD")
	h := sha256.New()
	var mask [][2]uint64 // [start, end) file offsets hashed as zeros
	var hdr [24]byte
	bo := f.ByteOrder
	if bo == nil {
		return "", Corruptf("", -1, "unknown byte order")
	}
	switch f.Class {
	case elf.ELFCLASS64:
		mask = [][2]uint64{{0x28, 0x30}, {0x3c, 0x40}}
	case elf.ELFCLASS32:
		mask = [][2]uint64{{0x20, 0x24}, {0x30, 0x34}}
	default:
		return "", Corruptf("", -1, "unknown ELF class %v", f.Class)
	}
	// The program header table: e_phoff, e_phentsize and e_phnum.
	var eh [64]byte
	if _, err := r.ReadAt(eh[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	var phoff, phsize uint64
	if f.Class == elf.ELFCLASS64 {
		phoff = bo.Uint64(eh[0x20:])
		phsize = uint64(bo.Uint16(eh[0x36:])) * uint64(bo.Uint16(eh[0x38:]))
	} else {
		phoff = uint64(bo.Uint32(eh[0x1c:]))
		phsize = uint64(bo.Uint16(eh[0x2a:])) * uint64(bo.Uint16(eh[0x2c:]))
	}
	if phoff <= 1<<62 {
		mask = append(mask, [2]uint64{phoff, phoff + phsize})
	}
	var total uint64
	n := 0
	buf := make([]byte, 64<<10)
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		n++
		if p.Filesz > maxLoadBytes || total+p.Filesz > maxLoadBytes {
			return "", Corruptf("PT_LOAD", -1, "the loadable segments hold more than %d bytes", uint64(maxLoadBytes))
		}
		if p.Off > 1<<62 {
			return "", Corruptf("PT_LOAD", -1, "segment offset %#x out of range", p.Off)
		}
		total += p.Filesz
		bo.PutUint64(hdr[0:], p.Vaddr)
		bo.PutUint64(hdr[8:], p.Filesz)
		bo.PutUint64(hdr[16:], p.Memsz)
		h.Write(hdr[:])
		binary.Write(h, bo, uint32(p.Flags))
		if err := hashRange(h, r, p.Off, p.Filesz, mask, buf); err != nil {
			return "", err
		}
	}
	if n == 0 {
		return "", ErrNoLoad
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashRange writes size bytes of r from off to w, with the bytes at the
// file offsets in mask written as zeros, read through buf.
func hashRange(w io.Writer, r io.ReaderAt, off, size uint64, mask [][2]uint64, buf []byte) error {
	for done := uint64(0); done < size; {
		k := min(uint64(len(buf)), size-done)
		at := off + done
		got, err := r.ReadAt(buf[:k], int64(at))
		if uint64(got) < k {
			if err == nil || errors.Is(err, io.EOF) {
				return Corruptf("PT_LOAD", int64(at)+int64(got), "the file ends inside a loadable segment (%d bytes at %#x)", size, off)
			}
			return err
		}
		for _, m := range mask {
			for i := max(m[0], at); i < min(m[1], at+k); i++ {
				buf[i-at] = 0
			}
		}
		w.Write(buf[:k])
		done += k
	}
	return nil
}

// Content is what identifies a file without a build-id: its size and
// its LoadDigest.
type Content struct {
	Size   int64
	Digest string
}

// contentKey is a file's identity as the file system knows it: a file
// whose device, inode, size and modification time are unchanged is not
// hashed again.
type contentKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

var (
	contentMu    sync.Mutex
	contentCache = map[contentKey]Content{}
)

// ContentOf returns the size and LoadDigest of the named ELF file,
// cached for the life of the process by (device, inode, size, mtime).
func ContentOf(name string) (Content, error) {
	fh, err := saferead.Open(name)
	if err != nil {
		return Content{}, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return Content{}, err
	}
	key, keyed := keyOf(st)
	if keyed {
		contentMu.Lock()
		c, ok := contentCache[key]
		contentMu.Unlock()
		if ok {
			return c, nil
		}
	}
	ef, err := NewFile(fh)
	if err != nil {
		return Content{}, err
	}
	d, err := LoadDigest(ef, fh)
	if err != nil {
		return Content{}, fmt.Errorf("%s: %w", name, err)
	}
	c := Content{Size: st.Size(), Digest: d}
	if keyed {
		contentMu.Lock()
		contentCache[key] = c
		contentMu.Unlock()
	}
	return c, nil
}

func keyOf(st os.FileInfo) (contentKey, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return contentKey{}, false
	}
	return contentKey{dev: uint64(s.Dev), ino: uint64(s.Ino), size: st.Size(), mtime: st.ModTime().UnixNano()}, true
}

// LoadLayout returns the placement of f's PT_LOAD segments (virtual
// address, file size, memory size and flags of each, in order), a cheap
// key under which files that may have the same LoadDigest are grouped;
// "" when f has none.
func LoadLayout(f *elf.File) string {
	var b []byte
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			b = fmt.Appendf(b, "%x:%x:%x:%x;", p.Vaddr, p.Filesz, p.Memsz, uint32(p.Flags))
		}
	}
	return string(b)
}
