package srcscan

import (
	"encoding/binary"
	"sort"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

type strKind uint8

const (
	strNone    strKind = iota
	strInline          // s holds the string
	strDebug           // off is an offset in .debug_str
	strLine            // off is an offset in .debug_line_str
	strOffsets         // off is an offset in .debug_str_offsets (4 or 8 bytes wide, see wide)
)

// sref is a string that may still have to be looked up.
type sref struct {
	kind strKind
	wide bool // strOffsets: the entry is 8 bytes
	off  uint64
	s    string
}

// maxStringBytes bounds the bytes of all strings looked up in one scan.
const maxStringBytes = 256 << 20

// maxRefs bounds how many strings one scan collects.
const maxRefs = 1 << 23

// strtab collects string references and resolves them, one forward pass
// per string section.
type strtab struct {
	refs []sref
}

func (t *strtab) add(r sref) (int32, error) {
	if len(t.refs) >= maxRefs {
		return 0, elfinfo.Corruptf("", -1, "more than %d strings", maxRefs)
	}
	t.refs = append(t.refs, r)
	return int32(len(t.refs) - 1), nil
}

func (t *strtab) get(i int32) string {
	if i < 0 {
		return ""
	}
	return t.refs[i].s
}

// resolve looks every reference up. A reference into a section the file
// does not have resolves to "".
func (t *strtab) resolve(str, lineStr, offs *section, bo binary.ByteOrder) error {
	// .debug_str_offsets entries first: they turn into .debug_str offsets.
	err := t.pass(offs, strOffsets, bo, func(r *stream, ref *sref) {
		n := 4
		if ref.wide {
			n = 8
		}
		v := r.Fixed(n)
		if r.err == nil {
			*ref = sref{kind: strDebug, off: v}
		}
	})
	if err != nil {
		return err
	}
	budget := maxStringBytes
	read := func(r *stream, ref *sref) {
		if budget < 0 {
			r.fail(r.corrupt("strings larger than %d bytes", maxStringBytes))
			return
		}
		s := r.CStr()
		budget -= len(s)
		*ref = sref{kind: strInline, s: s}
	}
	if err := t.pass(str, strDebug, bo, read); err != nil {
		return err
	}
	return t.pass(lineStr, strLine, bo, read)
}

// pass resolves, in ascending offset order, the references of one kind,
// which point into sec. A missing section resolves them to "".
func (t *strtab) pass(sec *section, kind strKind, bo binary.ByteOrder, fn func(*stream, *sref)) error {
	var idx []int32
	for i := range t.refs {
		if t.refs[i].kind == kind {
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == 0 {
		return nil
	}
	if sec == nil {
		for _, i := range idx {
			t.refs[i] = sref{}
		}
		return nil
	}
	sort.Slice(idx, func(a, b int) bool { return t.refs[idx[a]].off < t.refs[idx[b]].off })
	var prevOff uint64
	var prev int32 = -1
	for _, i := range idx {
		ref := &t.refs[i]
		off := ref.off
		if kind != strOffsets && prev >= 0 && prevOff == off {
			*ref = t.refs[prev]
			continue
		}
		if off >= sec.size {
			return elfinfo.Corruptf(sec.name, int64(off), "offset is outside the section of %d bytes", sec.size)
		}
		r := &stream{s: sec, off: off, end: sec.size, bo: bo}
		fn(r, ref)
		if r.err != nil {
			return r.err
		}
		prev, prevOff = i, off
	}
	return nil
}
