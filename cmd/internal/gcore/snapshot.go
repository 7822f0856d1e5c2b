package gcore

import (
	"bytes"
	"context"
	"os"
)

// slabSize is the size of one buffer of memory kept while stopped.
const slabSize = 16 << 20

// run is bytes for the file at off.
type run struct {
	off  uint64
	data []byte
}

// snapshot keeps the memory read while the process is stopped: the
// pages that are not zero, packed into slabs, written to f by flush.
// Past max bytes kept, pages are written to f at once.
type snapshot struct {
	f       *os.File
	max     int64
	page    int
	slab    []byte // the current slab; its len is what is used
	runs    []run
	kept    int64
	spilled int64
	zeros   []byte // one page of zeros
}

// reserve allocates the first slab, n bytes (at least slabSize, at most
// max), and touches each of its pages.
func (w *snapshot) reserve(n int64) {
	n = max(min(n, w.max), slabSize)
	w.slab = make([]byte, 0, n)
	b := w.slab[:n]
	for i := 0; i < len(b); i += w.page {
		b[i] = 1
	}
}

// add keeps b (one ELF header page) for off.
func (w *snapshot) add(off uint64, b []byte) error {
	w.runs = append(w.runs, run{off, b})
	w.kept += int64(len(b))
	return nil
}

// copy reads segment sg from mem and keeps (or writes) its pages that
// are not zero; pages that cannot be read stay zero. For anonymous
// memory (sparse says so) pagemap, when open, tells which pages were
// never touched: those are zero and are not read. It returns how many
// bytes could not be read.
func (w *snapshot) copy(ctx context.Context, mem, pagemap *os.File, sg segment, sparse bool) (bad int64, err error) {
	end := sg.start + sg.filesz
	var used []bool // per page: present or swapped
	if sparse && pagemap != nil {
		used = w.touched(pagemap, sg.start, end)
	}
	pg := uint64(w.page)
	for addr := sg.start; addr < end; {
		if err := ctx.Err(); err != nil {
			return bad, err
		}
		n := min(uint64(chunkSize), end-addr)
		if used != nil {
			// Skip untouched pages, then read up to the next one.
			i := (addr - sg.start) / pg
			for i < uint64(len(used)) && !used[i] {
				i++
			}
			addr = sg.start + i*pg
			if addr >= end {
				break
			}
			j := i
			for j < uint64(len(used)) && used[j] && (j-i)*pg < chunkSize {
				j++
			}
			n = (j - i) * pg
		}
		if cap(w.slab)-len(w.slab) < int(n) {
			w.slab = make([]byte, 0, max(slabSize, chunkSize))
		}
		buf := w.slab[len(w.slab) : len(w.slab)+int(n)]
		got, _ := mem.ReadAt(buf, int64(addr))
		got = got / w.page * w.page
		if err := w.keep(sg.off+(addr-sg.start), buf[:got]); err != nil {
			return bad, err
		}
		addr += uint64(got)
		if uint64(got) < n {
			// An unreadable page (past the end of a file, a hole in a
			// mapping): left zero, the read goes on after it.
			bad += int64(w.page)
			addr += pg
		}
	}
	return bad, nil
}

// touched reads pagemap for [start, end): per page, whether it is
// present or swapped (bits 63 and 62). On any error it returns nil
// (every page is read).
func (w *snapshot) touched(pagemap *os.File, start, end uint64) []bool {
	pg := uint64(w.page)
	n := (end - start) / pg
	buf := make([]byte, n*8)
	if got, err := pagemap.ReadAt(buf, int64(start/pg*8)); err != nil || uint64(got) != n*8 {
		return nil
	}
	used := make([]bool, n)
	for i := range used {
		used[i] = le.Uint64(buf[i*8:])&(3<<62) != 0
	}
	return used
}

// keep packs the pages of buf (which lies at the free end of the slab)
// that are not zero at the slab's end and records them as runs for off.
func (w *snapshot) keep(off uint64, buf []byte) error {
	base := len(w.slab)
	end := base
	runStart, runOff := -1, 0
	closeRun := func() {
		if runStart >= 0 {
			w.runs = append(w.runs, run{off + uint64(runOff), w.slab[runStart:end:end]})
			runStart = -1
		}
	}
	if len(w.zeros) != w.page {
		w.zeros = make([]byte, w.page)
	}
	for p := 0; p < len(buf); p += w.page {
		pg := buf[p : p+w.page]
		if bytes.Equal(pg, w.zeros) {
			closeRun()
			continue
		}
		if end-base != p {
			copy(w.slab[end:end+w.page], pg)
		}
		if runStart < 0 {
			runStart, runOff = end, p
		}
		end += w.page
	}
	closeRun()
	w.slab = w.slab[:end]
	w.kept += int64(end - base)
	if w.kept > w.max {
		return w.flush()
	}
	return nil
}

// flush writes every kept run to the file and frees the slabs.
func (w *snapshot) flush() error {
	for _, r := range w.runs {
		if _, err := w.f.WriteAt(r.data, int64(r.off)); err != nil {
			return err
		}
	}
	w.spilled += w.kept
	w.kept = 0
	w.runs = nil
	w.slab = nil
	return nil
}
