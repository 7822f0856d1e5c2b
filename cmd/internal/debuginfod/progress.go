package debuginfod

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress draws one bar for all the downloads of one call: bytes so far
// against bytes expected, and files done against files started.
//
// Why a library (schollz/progressbar) and not a Printf: the total grows
// while parallel downloads start and learn their sizes (or never learn
// them, for answers without Content-Length); the line has to fit the
// terminal's width and be wiped before it is redrawn; and redraws have to
// be rate-limited, or 8 downloads reading 32 KiB at a time would write
// thousands of lines a second to a slow terminal. The library does those
// three, with byte units and a rate, and is small.
//
// A nil *progress, and the nil *download it hands out, do nothing.
type progress struct {
	w   io.Writer
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	// total is the bytes expected: announced sizes, plus what downloads
	// without one have read so far.
	total                 int64
	files, done, failures int
}

// download is one file being read, as progress counts it.
type download struct {
	p      *progress
	n      int64 // read so far
	budget int64 // what this download adds to p.total
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		return nil
	}
	return &progress{w: w}
}

// start counts a new download of size bytes (-1: unknown).
func (p *progress) start(size int64) *download {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		w := p.w
		// The bar starts at 1 byte, and is always 1 byte more than
		// expected until finish: the library closes a bar for good once
		// it is full, and more files may still come.
		p.bar = progressbar.NewOptions64(1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
	}
	d := &download{p: p, budget: max(size, 0)}
	p.files++
	p.total += d.budget
	p.describe()
	p.bar.ChangeMax64(p.total + 1)
	return d
}

func (p *progress) describe() {
	s := fmt.Sprintf("debuginfod: %d/%d files", p.done, p.files)
	if p.failures > 0 {
		s += fmt.Sprintf(", %d failed", p.failures)
	}
	p.bar.Describe(s)
}

// add counts n more bytes read.
func (d *download) add(n int) {
	if d == nil || n == 0 {
		return
	}
	p := d.p
	p.mu.Lock()
	defer p.mu.Unlock()
	d.n += int64(n)
	if d.n > d.budget {
		p.total += d.n - d.budget
		d.budget = d.n
		p.bar.ChangeMax64(p.total + 1)
	}
	p.bar.Add64(int64(n))
}

// fail takes a failed download's bytes back out of the bar.
func (d *download) fail() {
	if d == nil {
		return
	}
	p := d.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures++
	p.total -= d.budget
	p.bar.Add64(-d.n)
	p.bar.ChangeMax64(p.total + 1)
	p.describe()
}

// done counts a download complete.
func (d *download) done() {
	if d == nil {
		return
	}
	p := d.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if d.n < d.budget {
		p.total -= d.budget - d.n
		p.bar.ChangeMax64(p.total + 1)
	}
	p.describe()
}

// finish draws the last state of the bar and ends its line. Nothing was
// drawn, and nothing is, when nothing was downloaded.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	p.describe()
	p.bar.ChangeMax64(max(p.total, 1))
	p.bar.Finish()
}
