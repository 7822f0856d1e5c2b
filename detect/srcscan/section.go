package srcscan

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// chunk is how much of a section is read at a time.
const chunk = 32 << 10

// maxRestarts bounds how often a compressed section is inflated again
// from its start because a reference pointed backwards. Only abbreviation
// tables can be visited out of order; real files list them in unit order.
const maxRestarts = 64

// section reads one ELF section through a window that normally only moves
// forward. An uncompressed section seeks for free; a compressed one is
// inflated as a stream and restarted (at most maxRestarts times) when a
// read goes backwards.
type section struct {
	name       string
	size       uint64
	compressed bool
	rs         io.ReadSeeker
	pos        uint64 // offset of rs
	buf        []byte // section bytes [bufOff, bufOff+len(buf)); pos == bufOff+len(buf)
	bufOff     uint64
	restarts   int
}

func openSection(s *elf.Section) *section {
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil
	}
	return &section{
		name:       s.Name,
		size:       s.Size, // the inflated size for a compressed section
		compressed: s.Flags&elf.SHF_COMPRESSED != 0,
		rs:         s.Open(),
		buf:        make([]byte, 0, chunk),
	}
}

// fill makes the window start at off.
func (s *section) fill(off uint64) error {
	if off >= s.size {
		return elfinfo.Corruptf(s.name, int64(off), "DWARF data is truncated")
	}
	if s.compressed && off < s.bufOff {
		// Backwards in a zlib stream: inflate again from the start.
		s.restarts++
		if s.restarts > maxRestarts {
			return elfinfo.Corruptf(s.name, int64(off), "compressed section read out of order too often")
		}
		if _, err := s.rs.Seek(0, io.SeekStart); err != nil {
			return s.ioErr(err)
		}
		s.pos = 0
	}
	if off != s.pos {
		if s.compressed {
			if off > s.pos {
				n, err := io.CopyN(io.Discard, s.rs, int64(off-s.pos))
				s.pos += uint64(n)
				if err != nil {
					return s.ioErr(err)
				}
			}
		} else {
			if _, err := s.rs.Seek(int64(off), io.SeekStart); err != nil {
				return s.ioErr(err)
			}
			s.pos = off
		}
	}
	n := uint64(chunk)
	if s.size-off < n {
		n = s.size - off
	}
	s.buf = s.buf[:n]
	s.bufOff = off
	k, err := io.ReadFull(s.rs, s.buf)
	s.buf = s.buf[:k]
	s.pos = off + uint64(k)
	if k == 0 && err != nil {
		return s.ioErr(err)
	}
	return nil
}

func (s *section) ioErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return elfinfo.Corruptf(s.name, -1, "shorter than its header says")
	}
	return elfinfo.Corruptf(s.name, -1, "reading: %v", err)
}

// byteAt returns the byte at off.
func (s *section) byteAt(off uint64) (byte, error) {
	if off < s.bufOff || off-s.bufOff >= uint64(len(s.buf)) {
		if err := s.fill(off); err != nil {
			return 0, err
		}
	}
	return s.buf[off-s.bufOff], nil
}

// stream decodes DWARF values from a section, from off up to end.
type stream struct {
	s   *section
	off uint64
	end uint64
	bo  binary.ByteOrder
	err error
}

// corrupt returns a *elfinfo.FormatError at the stream's offset.
func (r *stream) corrupt(format string, args ...any) *elfinfo.FormatError {
	return elfinfo.Corruptf(r.s.name, int64(r.off), format, args...)
}

// short records that the data ends before what is being read.
func (r *stream) short() { r.fail(r.corrupt("DWARF data is truncated")) }

func (r *stream) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.off = r.end
}

func (r *stream) U8() uint64 {
	if r.err != nil {
		return 0
	}
	if r.off >= r.end {
		r.short()
		return 0
	}
	b, err := r.s.byteAt(r.off)
	if err != nil {
		r.fail(err)
		return 0
	}
	r.off++
	return uint64(b)
}

// fixed reads an n-byte unsigned integer (n <= 8) in the file's byte order.
func (r *stream) Fixed(n int) uint64 {
	var b [8]byte
	for i := 0; i < n; i++ {
		b[i] = byte(r.U8())
	}
	if r.err != nil {
		return 0
	}
	var v uint64
	if r.bo == binary.BigEndian {
		for i := 0; i < n; i++ {
			v = v<<8 | uint64(b[i])
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
	}
	return v
}

func (r *stream) ULEB() uint64 {
	var v uint64
	var shift uint
	for r.err == nil {
		c := r.U8()
		if shift < 64 {
			v |= (c & 0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v
		}
	}
	return 0
}

func (r *stream) Skip(n uint64) {
	if r.err != nil {
		return
	}
	if n > r.end-r.off {
		r.short()
		return
	}
	r.off += n
}

// maxString bounds one NUL-terminated string.
const maxString = 64 << 10

// cstr reads a NUL-terminated string.
func (r *stream) CStr() string {
	var b []byte
	for r.err == nil {
		c := r.U8()
		if r.err != nil {
			return ""
		}
		if c == 0 {
			return string(b)
		}
		if len(b) >= maxString {
			r.fail(r.corrupt("string longer than %d bytes", maxString))
			return ""
		}
		b = append(b, byte(c))
	}
	return ""
}
