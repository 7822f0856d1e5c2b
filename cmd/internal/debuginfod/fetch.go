package debuginfod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/elfinfo"
)

// userAgent names this client to servers.
const userAgent = "pyattach-debuginfod-client"

// lowSpeedBytes is what a server must deliver within each Timeout
// window, as elfutils asks of libcurl.
const lowSpeedBytes = 100 << 10

// Result is the outcome of fetching one build-id.
type Result struct {
	BuildID string
	// Path of the file in the cache, when Err is nil.
	Path string
	// Server the file came from; empty when FromCache.
	Server    string
	FromCache bool
	Err       error
}

// target is one file to fetch.
type target struct {
	id     string // build-id, checked
	name   string // cache entry name: "debuginfo", "source##usr##...", ...
	rest   string // URL path after /buildid/<id>/
	verify bool   // whether the file must be ELF with build-id id
	what   string // for messages: "debuginfo 3d48..."
}

// Fetch returns the files of kind ("debuginfo" or "executable") for
// buildIDs, one Result each, in order. Each comes from the cache when it
// holds a good one; otherwise every server is asked at once and the first
// good answer is stored in the cache. At most Parallel build-ids are
// fetched at a time; a repeated build-id is fetched once.
func (c *Client) Fetch(ctx context.Context, kind string, buildIDs []string) []Result {
	results := make([]Result, len(buildIDs))
	kindErr := checkKind(kind)
	first := map[string]int{}
	var jobs []int
	for i, id := range buildIDs {
		results[i].BuildID = id
		if kindErr != nil {
			results[i].Err = kindErr
			continue
		}
		if err := CheckBuildID(id); err != nil {
			results[i].Err = err
			continue
		}
		if _, dup := first[id]; dup {
			continue
		}
		first[id] = i
		jobs = append(jobs, i)
	}

	prog := newProgress(c.Progress)
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(c.parallel(), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				id := buildIDs[i]
				if err := ctx.Err(); err != nil {
					results[i].Err = fmt.Errorf("%s %s: %w", kind, id, err)
					continue
				}
				results[i] = c.fetchOne(ctx, target{id: id, name: kind, rest: kind, verify: true, what: kind + " " + id}, prog)
			}
		}()
	}
	for _, i := range jobs {
		work <- i
	}
	close(work)
	wg.Wait()
	prog.finish()

	for i, id := range buildIDs {
		if j, ok := first[id]; ok && j != i {
			results[i] = results[j]
		}
	}
	return results
}

// FetchSource returns the path in the cache of source file path (absolute,
// as the DWARF of buildID names it: comp_dir joined with the file name)
// fetching it from the servers when the cache does not hold it. A source
// file cannot be checked; it is only bounded by MaxSize.
func (c *Client) FetchSource(ctx context.Context, buildID, path string) (string, error) {
	if err := CheckBuildID(buildID); err != nil {
		return "", err
	}
	name, err := checkSourcePath(path)
	if err != nil {
		return "", err
	}
	prog := newProgress(c.Progress)
	defer prog.finish()
	r := c.fetchOne(ctx, target{
		id:   buildID,
		name: name,
		rest: "source" + escapeSourcePath(path),
		what: "source " + path + " of " + buildID,
	}, prog)
	return r.Path, r.Err
}

// fetchOne returns t from the cache or from the servers.
func (c *Client) fetchOne(ctx context.Context, t target, prog *progress) Result {
	r := Result{BuildID: t.id}
	verifyID := ""
	if t.verify {
		verifyID = t.id
	}
	if c.CacheDir != "" {
		// What a run killed mid-download left in this entry's directory.
		safefs.Sweep(filepath.Join(c.CacheDir, t.id))
	}
	p, state, cacheErr := c.lookupCache(t.id, t.name, verifyID)
	switch state {
	case cacheHit:
		r.Path, r.FromCache = p, true
		return r
	case cacheNegative:
		r.Err = fmt.Errorf("%s: %w", t.what, cacheErr)
		return r
	case cacheBad:
		// Reported with the result when the fetch fails; replaced by
		// rename when it succeeds.
	default:
		cacheErr = nil
	}
	if len(c.URLs) == 0 {
		r.Err = joinErrors(fmt.Errorf("%s: %w", t.what, ErrNoServers), cacheErr)
		return r
	}
	if c.CacheDir == "" {
		r.Err = fmt.Errorf("%s: no cache directory (set DEBUGINFOD_CACHE_PATH)", t.what)
		return r
	}
	r.Path, r.Server, r.Err = c.download(ctx, t, prog)
	if r.Err != nil {
		r.Path = ""
		r.Err = joinErrors(fmt.Errorf("%s: %w", t.what, r.Err), cacheErr)
	}
	return r
}

// notWritable is the error for a cache that cannot take a file.
func notWritable(dir string, err error) error {
	return fmt.Errorf("cache dir %s is %w: %v; set DEBUGINFOD_CACHE_PATH to a writable directory", dir, ErrCacheNotWritable, err)
}

// download fetches t into a temporary file in its entry's directory,
// checks it and renames it into place. Whatever fails, it leaves no
// temporary file and no directory it made.
func (c *Client) download(ctx context.Context, t target, prog *progress) (path, server string, err error) {
	if err := os.MkdirAll(c.CacheDir, 0o755); err != nil {
		return "", "", notWritable(c.CacheDir, err)
	}
	dir := filepath.Join(c.CacheDir, t.id)
	madeDir := false
	if err := os.Mkdir(dir, 0o700); err == nil {
		madeDir = true
	} else if !errors.Is(err, fs.ErrExist) {
		return "", "", notWritable(c.CacheDir, err)
	}
	tmp, err := safefs.CreateTemp(dir)
	if err != nil {
		if madeDir {
			os.Remove(dir)
		}
		return "", "", notWritable(dir, err)
	}
	defer func() {
		tmp.Cleanup()
		if madeDir && err != nil {
			os.Remove(dir) // fails, as it should, when not empty
		}
	}()

	remaining := c.URLs
	var errs []error
	notFound := 0
	for len(remaining) > 0 {
		out := c.race(ctx, remaining, t, tmp, prog)
		var next []string
		for i, o := range out {
			switch {
			case o.won && o.err == nil:
				path = filepath.Join(dir, t.name)
				if err := install(tmp, path, o.modTime); err != nil {
					return "", "", err
				}
				return path, remaining[i], nil
			case o.notFound:
				notFound++
				errs = append(errs, fmt.Errorf("server %s: not found (404)", remaining[i]))
			case o.lost:
				next = append(next, remaining[i])
			default:
				errs = append(errs, o.err)
			}
		}
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		remaining = next
	}
	if notFound == len(c.URLs) {
		c.writeNegative(dir, t.name)
		return "", "", fmt.Errorf("%w (asked %s)", ErrNotFound, strings.Join(c.URLs, " "))
	}
	return "", "", joinErrors(errs...)
}

// install moves the checked download tmp to path, read-only, dated as
// the server dates it, as elfutils does.
func install(tmp *safefs.TempFile, path string, modTime time.Time) error {
	if err := tmp.Chmod(0o400); err != nil {
		return err
	}
	if !modTime.IsZero() {
		os.Chtimes(tmp.Name(), time.Time{}, modTime)
	}
	return tmp.Commit(path)
}

// writeNegative leaves the negative entry elfutils also leaves when every
// server answered 404: an empty file, here mode 0000. Failing to write it
// only costs a query next time.
func (c *Client) writeNegative(dir, name string) {
	safefs.WriteFile(filepath.Join(dir, name), nil, 0)
}

// outcome is how one server answered.
type outcome struct {
	won      bool // this server's answer was read (err says how it went)
	lost     bool // dropped because another server answered first
	notFound bool // 404
	err      error
	modTime  time.Time
}

// race asks servers at once for t. The first to answer 200 is read into
// tmp, and the requests to the others are cancelled.
func (c *Client) race(ctx context.Context, servers []string, t target, tmp *safefs.TempFile, prog *progress) []outcome {
	out := make([]outcome, len(servers))
	cancels := make([]context.CancelCauseFunc, len(servers))
	ctxs := make([]context.Context, len(servers))
	for i := range servers {
		ctxs[i], cancels[i] = context.WithCancelCause(ctx)
	}
	var mu sync.Mutex
	winner := -1
	claim := func(i int) bool {
		mu.Lock()
		defer mu.Unlock()
		if winner >= 0 {
			return false
		}
		winner = i
		for j, cancel := range cancels {
			if j != i {
				cancel(errLostRace)
			}
		}
		return true
	}
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancels[i](nil)
			out[i] = c.ask(ctxs[i], cancels[i], s, t, func() bool { return claim(i) }, tmp, prog)
		}()
	}
	wg.Wait()
	return out
}

var errLostRace = errors.New("another server answered first")

// stalledError is the cause of a request cancelled by its watchdog.
type stalledError struct{ timeout time.Duration }

func (e stalledError) Error() string {
	return fmt.Sprintf("less than %d KiB in %s (DEBUGINFOD_TIMEOUT)", lowSpeedBytes>>10, e.timeout)
}

func (e stalledError) Timeout() bool { return true }

// Is makes a stall match os.ErrDeadlineExceeded.
func (e stalledError) Is(target error) bool { return target == os.ErrDeadlineExceeded }

// watchdog cancels a request that moves less than lowSpeedBytes within
// any window of timeout, counting from the start of the request.
type watchdog struct {
	timeout time.Duration
	cancel  context.CancelCauseFunc
	n       atomic.Int64 // bytes read so far
	mark    int64        // n at the start of the window; timer callbacks only
	timer   *time.Timer
	mu      sync.Mutex
	stopped bool
}

func startWatchdog(timeout time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{timeout: timeout, cancel: cancel}
	if timeout > 0 {
		w.mu.Lock()
		w.timer = time.AfterFunc(timeout, w.check)
		w.mu.Unlock()
	}
	return w
}

func (w *watchdog) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	n := w.n.Load()
	if n-w.mark < lowSpeedBytes {
		w.stopped = true
		w.cancel(stalledError{w.timeout})
		return
	}
	w.mark = n
	w.timer.Reset(w.timeout)
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// countingReader counts what it reads for the watchdog and the progress.
type countingReader struct {
	r  io.Reader
	w  *watchdog
	dl *download
}

func (cr *countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	cr.w.n.Add(int64(n))
	cr.dl.add(n)
	return n, err
}

// ask asks one server for t. It reads the answer into tmp only when claim
// says this server is the first to answer.
func (c *Client) ask(ctx context.Context, cancel context.CancelCauseFunc, server string, t target, claim func() bool, tmp *safefs.TempFile, prog *progress) (o outcome) {
	wd := startWatchdog(c.Timeout, cancel)
	defer wd.stop()
	// why tells a cancelled request apart: lost race, watchdog, caller.
	why := func(err error) outcome {
		cause := context.Cause(ctx)
		switch {
		case cause == nil:
			return outcome{err: fmt.Errorf("server %s: %w", server, err)}
		case errors.Is(cause, errLostRace):
			return outcome{lost: true, err: cause}
		case errors.As(cause, new(stalledError)):
			return outcome{err: fmt.Errorf("server %s: %w", server, cause)}
		}
		return outcome{err: fmt.Errorf("server %s: %w", server, cause)}
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, requestURL(server, t.id, t.rest), nil)
	if err != nil {
		return outcome{err: fmt.Errorf("server %s: %w", server, err)}
	}
	req.Header.Set("User-Agent", userAgent)
	limit := c.maxSize()
	if limit >= 0 {
		// As elfutils does: a debuginfod server refuses a larger file
		// at once (406).
		req.Header.Set("X-DEBUGINFOD-MAXSIZE", strconv.FormatInt(limit, 10))
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return why(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return outcome{notFound: true}
	case http.StatusNotAcceptable:
		if limit >= 0 {
			return outcome{err: fmt.Errorf("server %s: %w: the server says so (%s), limit %d bytes", server, ErrTooLarge, resp.Status, limit)}
		}
		fallthrough
	default:
		return outcome{err: fmt.Errorf("server %s: %s", server, resp.Status)}
	}
	// Refused before a byte is read: an answer that announces more than
	// the limit, or than the cache's file system can take.
	size := resp.ContentLength
	xsize, _ := strconv.ParseInt(resp.Header.Get("X-Debuginfod-Size"), 10, 64)
	announced := max(size, xsize)
	if limit >= 0 && announced > limit {
		return outcome{err: fmt.Errorf("server %s: %w: it announces %d bytes, the limit is %d (DEBUGINFOD_MAXSIZE)", server, ErrTooLarge, announced, limit)}
	}
	room := c.room(filepath.Dir(tmp.Name()))
	if room >= 0 && announced > room {
		return outcome{err: fmt.Errorf("server %s: %w: it announces %d bytes, %s can take %d (keeping %d MiB free)", server, ErrNoSpace, announced, c.CacheDir, room, FreeMargin>>20)}
	}
	if !claim() {
		return outcome{lost: true}
	}
	o.won = true
	dl := prog.start(size)
	fail := func(err error) outcome {
		dl.fail()
		return outcome{won: true, err: err}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	if err := tmp.Truncate(0); err != nil {
		return fail(err)
	}
	// Read at most one byte more than the limit or the room (a body
	// with no Content-Length, or one longer than announced, is cut
	// there); net/http itself stops at the Content-Length.
	var body io.Reader = &countingReader{r: resp.Body, w: wd, dl: dl}
	bound := limit
	if room >= 0 && (bound < 0 || room < bound) {
		bound = room
	}
	if bound >= 0 {
		body = io.LimitReader(body, bound+1)
	}
	n, err := io.Copy(tmp, body)
	wd.stop()
	if err != nil {
		if isWriteErr(err) {
			return fail(fmt.Errorf("writing %s: %w", tmp.Name(), err))
		}
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		} else if errors.Is(err, io.ErrUnexpectedEOF) && size >= 0 {
			err = fmt.Errorf("%w: %d of the %d bytes it announced", ErrCut, n, size)
		}
		return fail(fmt.Errorf("server %s: reading the answer, after %d bytes: %w", server, n, err))
	}
	switch {
	case limit >= 0 && n > limit:
		return fail(fmt.Errorf("server %s: %w: it sent more than %d bytes (DEBUGINFOD_MAXSIZE)", server, ErrTooLarge, limit))
	case bound >= 0 && n > bound:
		return fail(fmt.Errorf("server %s: %w: it sent more than the %d bytes %s can take (keeping %d MiB free)", server, ErrNoSpace, bound, c.CacheDir, FreeMargin>>20))
	}
	if t.verify {
		got, err := elfinfo.ReadBuildID(tmp)
		if err != nil {
			return fail(fmt.Errorf("server %s: %w: asked for %s, got a file with no readable build-id: %w", server, ErrWrongBuildID, t.id, err))
		}
		if got != t.id {
			return fail(fmt.Errorf("server %s: %w: asked for %s, got %s", server, ErrWrongBuildID, t.id, got))
		}
	}
	dl.done()
	if lm, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		o.modTime = lm
	}
	return o
}

// isWriteErr says whether err comes from writing the temporary file (a
// full disk) rather than from reading the network.
func isWriteErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "write" || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// multiError joins errors on one line, each still reachable by errors.Is.
type multiError []error

func (m multiError) Error() string {
	s := make([]string, len(m))
	for i, e := range m {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

func (m multiError) Unwrap() []error { return m }

func joinErrors(errs ...error) error {
	var m multiError
	for _, e := range errs {
		if e != nil {
			m = append(m, e)
		}
	}
	switch len(m) {
	case 0:
		return nil
	case 1:
		return m[0]
	}
	return m
}
