package debuginfod

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pyattach/pyattach/detect/elfinfo"
	"github.com/pyattach/pyattach/detect/saferead"
)

// maxNameLen is the longest file name the cache can hold (NAME_MAX).
const maxNameLen = 255

// entryPath is <cache>/<id>/<name>. id and name are already checked.
func (c *Client) entryPath(id, name string) string {
	return filepath.Join(c.CacheDir, id, name)
}

// SourceEntryName is the name elfutils gives the cache entry of source
// file path: "source" then path with "/" written "##" and "#" written
// "#_". The path is taken as given: elfutils does not clean it either.
func SourceEntryName(path string) string {
	var b strings.Builder
	b.WriteString("source")
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '/':
			b.WriteString("##")
		case '#':
			b.WriteString("#_")
		default:
			b.WriteByte(path[i])
		}
	}
	return b.String()
}

// escapeSourcePath percent-encodes path for a URL as libcurl's
// curl_easy_escape does each byte (all but A-Za-z0-9-._~), keeping "/".
func escapeSourcePath(path string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// checkSourcePath refuses a path that cannot be asked for or cached.
func checkSourcePath(path string) (name string, err error) {
	if !strings.HasPrefix(path, "/") {
		return "", fmt.Errorf("source path %q is not absolute", path)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", fmt.Errorf("source path %q holds a NUL byte", path)
	}
	name = SourceEntryName(path)
	if len(name) > maxNameLen {
		return "", fmt.Errorf("source path %q is too long for the cache (%d bytes escaped, at most %d)", path, len(name), maxNameLen)
	}
	return name, nil
}

// cacheState is what the cache says about one entry.
type cacheState int

const (
	cacheMiss     cacheState = iota // nothing there, or an expired negative entry
	cacheHit                        // a good file
	cacheNegative                   // a fresh negative entry
	cacheBad                        // a file that fails the check
)

// lookupCache looks at the entry <cache>/<id>/<name>. verifyID, when not
// empty, is the build-id the file must carry. For cacheBad, err says
// what is wrong; for cacheNegative, it says how old the entry is.
func (c *Client) lookupCache(id, name, verifyID string) (string, cacheState, error) {
	if c.CacheDir == "" {
		return "", cacheMiss, nil
	}
	p := c.entryPath(id, name)
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", cacheMiss, nil
		}
		return p, cacheBad, fmt.Errorf("cache entry %s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		return p, cacheBad, fmt.Errorf("cache entry %s is not a regular file", p)
	}
	if st.Size() == 0 {
		age := c.clock().Sub(st.ModTime())
		miss := c.cacheMissAge()
		// elfutils: time(NULL) - st_mtime <= cache_miss, in whole seconds.
		if age.Truncate(time.Second) <= miss {
			return p, cacheNegative, fmt.Errorf("negative cache entry %s is %s old (cache_miss_s %d): %w",
				p, age.Truncate(time.Second), int64(miss/time.Second), ErrNotFound)
		}
		return "", cacheMiss, nil
	}
	if verifyID != "" {
		if err := checkELF(p, verifyID); err != nil {
			return p, cacheBad, fmt.Errorf("ignoring cache entry %s: %w", p, err)
		}
	}
	return p, cacheHit, nil
}

// checkELF says whether the file at p is an ELF file with build-id id.
func checkELF(p, id string) error {
	got, err := elfinfo.ReadBuildIDFile(p)
	if err != nil {
		return err
	}
	if got != id {
		return fmt.Errorf("%w: want %s, have %s", ErrWrongBuildID, id, got)
	}
	return nil
}

// cacheMissAge reads <cache>/cache_miss_s: decimal seconds, white space
// allowed around; missing or unreadable means 600 s.
func (c *Client) cacheMissAge() time.Duration {
	// A regular file of a few bytes: never a FIFO (it would block), a
	// device or a link to /dev/zero (it would never end).
	f, err := saferead.Open(filepath.Join(c.CacheDir, "cache_miss_s"))
	if err != nil {
		return defaultCacheMiss
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return defaultCacheMiss
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 || n > int64(1<<62)/int64(time.Second) {
		return defaultCacheMiss
	}
	return time.Duration(n) * time.Second
}

// Cached returns the path of the cached file of kind ("debuginfo" or
// "executable") for buildID, when the cache holds one that is an ELF file
// with that build-id. Negative entries, files that fail the check and
// invalid build-ids all give ok false; CachedErr says which.
func (c *Client) Cached(buildID, kind string) (path string, ok bool) {
	p, err := c.CachedErr(buildID, kind)
	return p, err == nil
}

// CachedErr is Cached with the reason for a miss: fs.ErrNotExist when
// the cache holds nothing, ErrNotFound for a fresh negative entry, the
// check's error (ErrWrongBuildID, elfinfo.ErrNotELF, ...) for a bad file.
func (c *Client) CachedErr(buildID, kind string) (string, error) {
	if err := CheckBuildID(buildID); err != nil {
		return "", err
	}
	if err := checkKind(kind); err != nil {
		return "", err
	}
	p, state, err := c.lookupCache(buildID, kind, buildID)
	switch state {
	case cacheHit:
		return p, nil
	case cacheMiss:
		return "", fmt.Errorf("%s %s: %w in cache %s", kind, buildID, fs.ErrNotExist, c.CacheDir)
	}
	return "", err
}
