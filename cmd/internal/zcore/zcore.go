package zcore

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
	"golang.org/x/sys/unix"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/saferead"
)

// Format is a compression format ("" for none).
type Format string

// The formats pyattach decompresses.
const (
	None Format = ""
	Zstd Format = "zstd"
	LZ4  Format = "lz4"
	XZ   Format = "xz"
	Gzip Format = "gzip"
)

// DefaultMaxSize is the default cap on a decompressed core (the
// max_core_size setting, --max-core-size).
const DefaultMaxSize int64 = 32 << 30

// freeMargin is left free in the cache's file system.
const freeMargin = 64 << 20

// HeadSize is how many leading bytes Sniff needs.
const HeadSize = 6

// Sniff names the compression format whose magic head starts with.
func Sniff(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return Zstd
	case bytes.HasPrefix(head, []byte{0x04, 0x22, 0x4d, 0x18}):
		return LZ4
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return XZ
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b, 0x08}):
		return Gzip
	}
	return None
}

// SniffFile is Sniff of a regular file's head; None for anything that
// is not a readable regular file (its readers say why).
func SniffFile(path string) Format {
	f, err := saferead.Open(path)
	if err != nil {
		return None
	}
	defer f.Close()
	head := make([]byte, HeadSize)
	n, _ := io.ReadFull(f, head)
	return Sniff(head[:n])
}

// Core is a decompressed core.
type Core struct {
	// Source is the compressed file, Path the decompressed one.
	Source, Path string
	Format       Format
	// Size is Path's size; Reused when it was already in the cache.
	Size   int64
	Reused bool
	// Took is how long decompressing took (0 when Reused).
	Took time.Duration
}

// Error is a compressed core that cannot be decompressed.
type Error struct {
	Path   string
	Format Format
	// Kind: "bomb" (beyond the cap), "space" (beyond the free space),
	// "corrupt" (a truncated or damaged stream), "notcore" (it holds
	// something else), "read", "write".
	Kind string
	// Limit is the bound that stopped a "bomb" or "space".
	Limit int64
	Err   error
}

func (e *Error) Error() string {
	switch e.Kind {
	case "bomb":
		return fmt.Sprintf("%s core %s decompresses to more than %s, the cap", e.Format, e.Path, Size(e.Limit))
	case "space":
		return fmt.Sprintf("%s core %s decompresses to more than the %s free in the cache", e.Format, e.Path, Size(e.Limit))
	case "corrupt":
		return fmt.Sprintf("%s core %s is truncated or damaged: %v", e.Format, e.Path, e.Err)
	case "notcore":
		return fmt.Sprintf("%s is %s-compressed, but what it holds is not a core file (no ELF header)", e.Path, e.Format)
	}
	return fmt.Sprintf("%s core %s: %v", e.Format, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Size prints n bytes the way the cap is written (64G, 512M, 1000).
func Size(n int64) string {
	for _, u := range []struct {
		s string
		n int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return fmt.Sprintf("%d%s", n/u.n, u.s)
		}
	}
	if n >= 1<<20 {
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// ParseSize reads a size: a number of bytes with an optional K, M, G or
// T suffix (powers of 1024).
func ParseSize(s string) (int64, error) {
	mult := int64(1)
	t := s
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	var v int64
	if t == "" {
		return 0, fmt.Errorf("size %q: a number of bytes, with K, M, G or T", s)
	}
	for _, c := range t {
		if c < '0' || c > '9' || v > (1<<62)/10 {
			return 0, fmt.Errorf("size %q: a number of bytes, with K, M, G or T", s)
		}
		v = v*10 + int64(c-'0')
	}
	if v > (1<<62)/mult || v == 0 {
		return 0, fmt.Errorf("size %q: out of range", s)
	}
	return v * mult, nil
}

// Inflate decompresses the compressed core path into dir (a private
// directory: safefs.PrivateDir) as <sha256>.core, unless it is there
// already, and returns it. Nothing but a whole core ever has that name:
// the output is written to a temporary file and renamed once complete,
// and removed on any error. maxSize caps the decompressed size; the
// free space of dir's file system caps it too.
func Inflate(ctx context.Context, path, dir string, maxSize int64) (*Core, error) {
	f, err := saferead.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, HeadSize)
	n, _ := io.ReadFull(f, head)
	format := Sniff(head[:n])
	if format == None {
		return nil, fmt.Errorf("%s is not compressed", path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, safefs.CtxReader(ctx, io.MultiReader(bytes.NewReader(head[:n]), f))); err != nil {
		return nil, &Error{Path: path, Format: format, Kind: "read", Err: err}
	}
	name := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))+".core")
	c := &Core{Source: path, Path: name, Format: format}
	src, err := f.Stat()
	if err != nil {
		return nil, &Error{Path: path, Format: format, Kind: "read", Err: err}
	}
	if st, err := os.Lstat(name); err == nil && st.Mode().IsRegular() {
		now := time.Now()
		os.Chtimes(name, now, now) // last use, for whoever prunes the cache
		c.Size, c.Reused = st.Size(), true
		return c, mirrorOwner(name, src)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, &Error{Path: path, Format: format, Kind: "read", Err: err}
	}
	start := time.Now()
	dec, err := decoder(format, bufio.NewReaderSize(safefs.CtxReader(ctx, f), 1<<20))
	if err != nil {
		return nil, &Error{Path: path, Format: format, Kind: "corrupt", Err: err}
	}
	defer dec.Close()
	// Only a core is decompressed: an archive or a log compressed the
	// same way is refused at its first bytes, not written out.
	br := bufio.NewReaderSize(dec, 1<<16)
	if m, err := br.Peek(4); err != nil && len(m) == 0 {
		return nil, &Error{Path: path, Format: format, Kind: "corrupt", Err: err}
	} else if !isCoreMagic(m) {
		return nil, &Error{Path: path, Format: format, Kind: "notcore"}
	}
	tmp, err := safefs.CreateTemp(dir)
	if err != nil {
		return nil, err
	}
	defer tmp.Cleanup()
	limit, kind := maxSize, "bomb"
	if free, ok := freeSpace(dir); ok && free-freeMargin < limit {
		limit, kind = max(free-freeMargin, 0), "space"
	}
	// One byte past the limit tells a core of exactly the limit from a
	// larger one.
	written, err := io.Copy(tmp, io.LimitReader(br, limit+1))
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && isWriteErr(err):
		return nil, &Error{Path: path, Format: format, Kind: "write", Err: err}
	case err != nil:
		return nil, &Error{Path: path, Format: format, Kind: "corrupt", Err: err}
	case written > limit:
		return nil, &Error{Path: path, Format: format, Kind: kind, Limit: limit}
	case written == 0:
		return nil, &Error{Path: path, Format: format, Kind: "corrupt", Err: errors.New("it decompresses to nothing")}
	}
	if err := tmp.Commit(name); err != nil {
		return nil, &Error{Path: path, Format: format, Kind: "write", Err: err}
	}
	c.Size, c.Took = written, time.Since(start)
	prune(dir, name)
	return c, mirrorOwner(name, src)
}

// Unused is how long a decompressed core stays in the cache unused
// (Inflate marks each use) before the next decompression removes it.
const Unused = 14 * 24 * time.Hour

// prune removes the cached cores but keep that went Unused.
func prune(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if p == keep || filepath.Ext(p) != ".core" || !e.Type().IsRegular() {
			continue
		}
		if st, err := e.Info(); err == nil && time.Since(st.ModTime()) > Unused {
			os.Remove(p)
		}
	}
}

// mirrorOwner gives the decompressed core the compressed file's owner
// (when pyattach runs as root) and its group and other write bits: a
// core's notes name the user whose files are read for it
// (core.OpenIn), believed only of a file that user or root owns and
// nobody else may write, and the copy must not be believed more than
// the original. The cache directory is private: the bits open it to
// nobody.
func mirrorOwner(name string, src fs.FileInfo) error {
	if err := os.Chmod(name, 0o600|src.Mode().Perm()&0o022); err != nil {
		return err
	}
	sys, ok := src.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return nil
	}
	return os.Lchown(name, int(sys.Uid), int(sys.Gid))
}

// isCoreMagic reports the start of an ELF file or a Mach-O (64-bit) one.
func isCoreMagic(b []byte) bool {
	return bytes.HasPrefix(b, []byte("\x7fELF")) || bytes.HasPrefix(b, []byte{0xcf, 0xfa, 0xed, 0xfe})
}

// isWriteErr tells the cache's write errors from the decoder's.
func isWriteErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && (pe.Op == "write" || errors.Is(err, unix.ENOSPC))
}

func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

type readCloser struct {
	io.Reader
	close func()
}

func (r readCloser) Close() error {
	if r.close != nil {
		r.close()
	}
	return nil
}

// decoder is a streaming decoder of format on r. A stream must end
// where its format says it ends: a truncated one is an error.
func decoder(format Format, r io.Reader) (io.ReadCloser, error) {
	switch format {
	case Zstd:
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<30))
		if err != nil {
			return nil, err
		}
		return readCloser{d, d.Close}, nil
	case LZ4:
		return readCloser{Reader: lz4.NewReader(r)}, nil
	case XZ:
		d, err := xz.NewReader(r)
		if err != nil {
			return nil, err
		}
		return readCloser{Reader: d}, nil
	case Gzip:
		d, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, fmt.Errorf("no decoder for %q", format)
}
